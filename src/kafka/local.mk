# src/kafka: nothing built here yet.
