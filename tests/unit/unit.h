/* unit.h — what every cmocka unit test here includes. */
#ifndef KAAS_TEST_UNIT_H
#define KAAS_TEST_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "substrate/substrate.h"
#include "tests/support/crashsub.h"
#include "tests/support/testdir.h"

/* A fresh POSIX substrate over a new temp directory; *dir receives the path. */
static inline struct kaas_substrate *unit_open_tmp(char **dir)
{
	*dir = kaas_testdir_make("unit");
	assert_non_null(*dir);
	struct kaas_substrate *s = NULL;
	assert_int_equal(kaas_substrate_open(*dir, &s), 0);
	return s;
}

/* Write a whole small file through the substrate. */
static inline void unit_put(struct kaas_substrate *s, const char *path, const char *text)
{
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, text, strlen(text), 0), 0);
	assert_int_equal(kaas_sub_close(f), 0);
}

/* Read a whole small file (malloc'd), or NULL with *rc set. */
static inline char *unit_get(struct kaas_substrate *s, const char *path, int *rc)
{
	char *buf;
	size_t len;
	*rc = kaas_sub_read_all(s, path, 1 << 20, &buf, &len);
	return *rc == 0 ? buf : NULL;
}

#endif
