# tests/log: nothing yet
