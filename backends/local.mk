libkaas_a_SOURCES += backends/posix.c backends/posix.h
libkaas_a_SOURCES += backends/nfs.c backends/nfs.h
