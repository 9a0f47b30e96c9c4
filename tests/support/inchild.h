/* inchild.h — run a piece of a test in a forked child, to watch it abort. */
#ifndef KAAS_TEST_INCHILD_H
#define KAAS_TEST_INCHILD_H

#include <stddef.h>

/* Runs fn in a forked child with SIGABRT at its default action and the
 * child's stderr captured: copies what it wrote (NUL-terminated, at most
 * errlen - 1 bytes) to err and returns its wait status, or -1 when the
 * pipe, fork or wait failed.  The child exits 0 if fn returns. */
int ts_in_child(void (*fn)(void), char *err, size_t errlen);

#endif
