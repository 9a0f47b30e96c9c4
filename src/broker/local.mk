# src/broker: nothing built here yet.
