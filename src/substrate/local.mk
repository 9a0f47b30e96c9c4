# src/substrate (layer 2, one library with backends/ and faultfs's in-process
# model): the storage vtable through which every layer above reaches a volume.
noinst_LIBRARIES += libkaas_substrate.a
libkaas_substrate_a_SOURCES = src/substrate/substrate.h src/substrate/dispatch.c \
	src/substrate/errdetail.c src/substrate/path.c src/substrate/registry.c \
	src/substrate/incarnation.c src/substrate/metered.c src/substrate/metered.h
