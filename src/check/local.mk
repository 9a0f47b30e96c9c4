# src/check (on top, with tools/): the substrate conformance checks behind
# `kaasctl check` and tests/conformance.
noinst_LIBRARIES += libkaas_check.a
libkaas_check_a_SOURCES = src/check/substrate_check.c src/check/substrate_check.h \
	src/check/check_internal.h src/check/check_support.c src/check/probe_atomic.c \
	src/check/probe_visibility.c src/check/probe_dirs.c
