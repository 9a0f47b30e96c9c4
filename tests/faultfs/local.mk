# tests/faultfs: nothing yet
