# src/log: nothing built here yet.
