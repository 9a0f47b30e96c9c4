libkaas_a_SOURCES += src/check/substrate_check.c src/check/substrate_check.h \
	src/check/check_internal.h src/check/check_support.c src/check/probe_atomic.c \
	src/check/probe_visibility.c src/check/probe_dirs.c
