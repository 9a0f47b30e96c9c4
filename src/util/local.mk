libkaas_a_SOURCES += src/util/crc32c.c src/util/crc32c.h src/util/step.c src/util/step.h \
	src/util/status.c src/util/status.h src/util/assert_held.c src/util/assert_held.h
