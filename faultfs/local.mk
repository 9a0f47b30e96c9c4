# faultfs: the fault model (no FUSE), its in-process substrate front (in
# libkaas_substrate.a, registered as scheme "fault"), and the FUSE daemon.
EXTRA_DIST += faultfs/README.md
libkaas_substrate_a_SOURCES += faultfs/model.h faultfs/internal.h faultfs/model.c faultfs/rules.c \
	faultfs/extents.c faultfs/attrcache.c faultfs/negcache.c faultfs/handles.c faultfs/names.c \
	faultfs/ctl.c faultfs/substrate.h faultfs/substrate.c

if WITH_FUSE
bin_PROGRAMS += faultfs/faultfs
faultfs_faultfs_SOURCES = faultfs/main.c faultfs/fuse_front.c faultfs/fuse_front.h \
	faultfs/fuse_front_ops.h faultfs/fuse_files.c faultfs/fuse_names.c \
	faultfs/fuse_nodes.c faultfs/fuse_nodes.h \
	faultfs/ctl_socket.c faultfs/ctl_socket.h
faultfs_faultfs_LDADD = $(KAAS_LIBS_SUBSTRATE) $(KAAS_EXT_LIBS) $(FUSE_LIBS)
endif
