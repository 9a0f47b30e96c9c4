# tests/kafka: nothing yet
