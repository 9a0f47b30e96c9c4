/*
 * crashsub.h — a substrate wrapper for tests that fails the Nth operation or
 * "crashes" at the Nth fsync or rename, in the manner of SQLite's test VFS.
 *
 * Every write is passed to the lower substrate at once, and an undo record
 * (the bytes it overwrote, the size before) is kept per path until a
 * successful fsync of that path makes it durable.  A crash applies the undo
 * records, so the lower directory holds exactly what had been fsynced
 * (optionally plus a torn prefix of the unsynced appended bytes), and every
 * op after the crash fails with -EIO.  Renames, creates and unlinks are
 * treated as durable when they return (the model of a journaling local
 * filesystem or of NFS, whose metadata ops are synchronous).
 *
 * The wrapper takes ownership of `lower`.  Thread-safe: every op runs under
 * the wrapper's lock (the crash point is the Nth op in that order).
 */
#ifndef KAAS_TEST_CRASHSUB_H
#define KAAS_TEST_CRASHSUB_H

#include <stdint.h>

#include "substrate/substrate.h"

struct kaas_crashsub_opts {
	unsigned fail_op_at;      /* 0: off; the Nth op (1-based, counting every op) fails */
	int fail_errno;           /* errno for the fail_* schedules (default EIO) */
	unsigned fail_unlink_at;  /* 0: off; the Nth unlink fails with fail_errno */
	unsigned fail_rmdir_at;   /* 0: off; the Nth rmdir fails with fail_errno */
	unsigned crash_at_fsync;  /* 0: off; the Nth fsync (file or directory) crashes instead */
	unsigned crash_at_rename; /* 0: off; the Nth rename crashes instead of renaming */
	int torn_tail;            /* on crash keep a random prefix of unsynced appended bytes */
	uint64_t seed;            /* for torn_tail */
	int commit_per_handle;    /* NFS across hosts: an fsync of a handle that
	                             made no unsynced change itself is a no-op (a
	                             kernel client with no unstable pages sends no
	                             COMMIT), so other handles' unsynced writes
	                             (a dead leader's) stay undone by a crash; an
	                             fsync of a handle that did write makes the
	                             whole file durable (COMMIT covers the file) */
};

enum kaas_crashsub_counter { KAAS_CS_OPS, KAAS_CS_FSYNCS, KAAS_CS_RENAMES };

/* Wrap `lower` (ownership passes to the wrapper, also on failure). */
int kaas_crashsub_wrap(struct kaas_substrate *lower, const struct kaas_crashsub_opts *opts,
		       struct kaas_substrate **out);
/* Has it crashed (by schedule or kaas_crashsub_crash_now)? */
int kaas_crashsub_crashed(struct kaas_substrate *sub);
/* Crash now: discard unsynced writes; every later op fails with -EIO. */
void kaas_crashsub_crash_now(struct kaas_substrate *sub);
/* How many ops of a kind have been attempted so far. */
unsigned kaas_crashsub_count(struct kaas_substrate *sub, enum kaas_crashsub_counter c);

#endif
