/*
 * substrate_check.h — the probes that qualify a volume against the
 * contract's three guarantees and the substrate header's documented error
 * behaviour.  One implementation serves the conformance test suite
 * (tests/conformance) and `kaasctl substrate-check URL`.
 *
 * Probes run in a fresh scratch directory ".kaas-check.<host>.<pid>.<n>"
 * under the substrate root and remove it afterwards (convergently).  Probes
 * that need a second host ("host B") open the peer URL (opts->peer_url:
 * another client's view of the same volume, e.g. a second NFS mount of the
 * export), or, without one, a second substrate instance from the same URL.
 * With a peer: close-to-open and fsync-visible read on the peer, the rename
 * probe's readers read on the peer, every other exclusive-create racer
 * creates on the peer, and the listing is read on both.  Probes that race
 * use fork()ed processes, each opening its own instance, so the URLs must
 * be openable from a child process.
 */
#ifndef KAAS_SUBSTRATE_CHECK_H
#define KAAS_SUBSTRATE_CHECK_H

#include <stddef.h>

enum kaas_check_id {
	KAAS_CHECK_RENAME_ATOMIC = 0, /* guarantee 1 */
	KAAS_CHECK_EXCL_CREATE,       /* guarantee 2 */
	KAAS_CHECK_CLOSE_TO_OPEN,     /* guarantee 3 */
	KAAS_CHECK_FSYNC_VISIBLE,     /* an fsynced write is seen by another host's new open */
	KAAS_CHECK_FSYNC_REOPEN,      /* fsync, close, reopen: every byte back */
	KAAS_CHECK_READDIR,           /* listing completeness */
	KAAS_CHECK_RMDIR_NONEMPTY,    /* rmdir of a non-empty directory: ENOTEMPTY */
	KAAS_CHECK_ERRORS,            /* every documented error code */
	KAAS_CHECK_COUNT
};

struct kaas_check_opts {
	unsigned renames;       /* rename probe: replacements (default 1000) */
	unsigned readers;       /* rename probe: reader processes (default 2) */
	unsigned excl_rounds;   /* exclusive-create probe: rounds (default 200) */
	unsigned excl_procs;    /* exclusive-create probe: racing processes (default 4) */
	unsigned files;         /* readdir probe: files (default 300) */
	unsigned long mask;     /* bit per kaas_check_id to run; 0: all */
	const char *peer_url;   /* host B: the same volume through another client;
				   NULL: a second instance of the URL */
};

struct kaas_check_result {
	const char *key;        /* short id: "rename-atomic" ... */
	const char *guarantee;  /* what is being qualified, for the table */
	int ran;                /* 0 if not selected */
	int pass;
	char seen[480];         /* what was observed (evidence on failure) */
};

struct kaas_check_report {
	struct kaas_check_result r[KAAS_CHECK_COUNT];
	const char *peer_url;   /* as given in the options, for the table */
	int all_pass;           /* every selected probe passed */
};

/* Run the selected probes against `url` (and opts->peer_url as host B).
 * Returns 0 when the probes ran (see report->all_pass for the verdict), or
 * -errno when the substrate or the peer could not even be opened, or the
 * peer does not see the scratch directory created through `url` (-ENOENT:
 * not the same volume); the detail says why, and every selected probe is
 * marked failed with that reason, so a table can still be printed. */
int kaas_substrate_check(const char *url, const struct kaas_check_opts *opts,
			 struct kaas_check_report *report);

/* The probe id for a key ("rename-atomic"), or -1. */
int kaas_check_lookup(const char *key);

/* Print the report as a table (one row per probe). */
void kaas_check_print(const char *url, const struct kaas_check_report *report, void *file /* FILE* */);

#endif
