libkaas_a_SOURCES += src/substrate/substrate.h src/substrate/dispatch.c \
	src/substrate/errdetail.c src/substrate/path.c src/substrate/registry.c \
	src/substrate/incarnation.c
