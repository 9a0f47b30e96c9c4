# tests/layers: the layers point only down (the include graph of the sources).
TESTS += tests/layers/include_graph.sh
EXTRA_DIST += tests/layers/include_graph.sh
