libkaas_substrate_a_SOURCES += backends/posix.c backends/posix.h
if WITH_NFS
libkaas_substrate_a_SOURCES += backends/nfs.c backends/nfs.h backends/nfs_file.c backends/nfs_names.c \
	backends/nfs_unlink.c backends/nfs_rawio.c backends/nfs_rpc.c backends/nfs_rpc.h backends/nfs_url.c backends/nfs_url.h backends/nfs_conn.c backends/nfs_sub.h
endif
if WITH_CEPHFS
libkaas_substrate_a_SOURCES += backends/cephfs.c backends/cephfs.h backends/cephfs_url.c backends/cephfs_url.h
endif
