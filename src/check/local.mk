libkaas_a_SOURCES += src/check/substrate_check.c src/check/substrate_check.h
