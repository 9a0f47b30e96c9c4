bin_PROGRAMS += kaasctl
kaasctl_SOURCES = src/tools/kaasctl.c
kaasctl_LDADD = $(KAAS_LIBS)
