# tests/layers: the layers point only down (the include graph of the sources).
# A check of the sources, not of running code: the normal suite only.
if !SANITIZERS
TESTS += tests/layers/include_graph.sh
endif
EXTRA_DIST += tests/layers/include_graph.sh
