# src/check (on top, with tools/): the substrate conformance checks behind
# `kaasctl check` and tests/conformance.
noinst_LIBRARIES += libkaas_check.a
libkaas_check_a_SOURCES = src/check/substrate_check.c src/check/substrate_check.h
