# tests/nfs: nothing yet
