libkaas_a_SOURCES += src/contract/contract.h src/contract/replace.c src/contract/claim.c \
	src/contract/converge.c src/contract/remove_tree.c src/contract/doc.h src/contract/doc.c \
	src/contract/epoch_fence.h src/contract/epoch_fence.c
