/* testdir.c — scratch directories for C tests (tests may use the OS). */
#define _XOPEN_SOURCE 700
#include "tests/support/testdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *kaas_testdir_make(const char *tag)
{
	const char *t = getenv("TMPDIR");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/kaas-%s.XXXXXX", t && *t ? t : "/tmp", tag);
	if (!mkdtemp(buf))
		return NULL;
	return strdup(buf);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

void kaas_testdir_remove(char *path)
{
	if (!path)
		return;
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}
