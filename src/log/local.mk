# src/log: the partition log engine.
libkaas_a_SOURCES += src/log/log.h
