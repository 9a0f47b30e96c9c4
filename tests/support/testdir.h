/* testdir.h — scratch directories for C tests. */
#ifndef KAAS_TEST_TESTDIR_H
#define KAAS_TEST_TESTDIR_H

/* Make a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path. */
char *kaas_testdir_make(const char *tag);
/* Remove the directory tree and free the path. */
void kaas_testdir_remove(char *path);

#endif
