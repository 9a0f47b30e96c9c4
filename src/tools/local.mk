bin_PROGRAMS += kaasctl
kaasctl_SOURCES = src/tools/kaasctl.c
kaasctl_LDADD = libkaas_check.a $(KAAS_LIBS_CONTRACT) $(KAAS_EXT_LIBS)
