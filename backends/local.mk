libkaas_a_SOURCES += backends/posix.c backends/posix.h
# backends/nfs.c (libnfs) is added by the libnfs backend work.
