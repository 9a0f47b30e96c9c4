# src/contract (layer 3): the durable-metadata primitives.
noinst_LIBRARIES += libkaas_contract.a
libkaas_contract_a_SOURCES = src/contract/contract.h src/contract/replace.c src/contract/claim.c \
	src/contract/converge.c src/contract/remove_tree.c src/contract/doc.h src/contract/doc.c \
	src/contract/epoch_fence.h src/contract/epoch_fence.c \
	src/contract/fresh.c
