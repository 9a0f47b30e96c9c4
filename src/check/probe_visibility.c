/*
 * probe_visibility.c — the probes of what another open sees: close-to-open
 * between two hosts, an fsynced (still open) write seen by the peer's new
 * open, and fsync+close+reopen on the same host.
 */
#include "check/check_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kaas_check_probe_c2o(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	struct kaas_substrate *b;
	if (kaas_check_open_peer(c, r, &b) < 0)
		return;
	char *p = kaas_check_path(c, "c2o");
	size_t n1 = (1u << 20) + 123, n2 = 65536 + 7, n3 = 4096 * 3 + 1;
	unsigned char *want = malloc(n1 + n2);
	char why[256] = "";
	const char *step = "";
	kaas_check_fill(want, n1, 1);
	int rc = kaas_check_write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, want, n1, 0);
	step = "after create+write+close on host A, host B's open";
	if (rc < 0) {
		snprintf(why, sizeof why, "write: %s", kaas_sub_errdetail());
		goto out;
	}
	if (kaas_check_verify_on(b, p, want, n1, why, sizeof why) < 0)
		goto out;
	/* B has now cached the file; A appends and closes. */
	kaas_check_fill(want + n1, n2, 2);
	struct kaas_file *f;
	step = "after an append+close on host A, host B's new open";
	rc = kaas_sub_open(c->sub, p, KAAS_O_WRITE, 0, &f);
	if (rc == 0) {
		rc = kaas_sub_pwrite_full(f, want + n1, n2, n1);
		int cr = kaas_sub_close(f);
		rc = rc < 0 ? rc : cr;
	}
	if (rc < 0) {
		snprintf(why, sizeof why, "append: %s", kaas_sub_errdetail());
		goto out;
	}
	if (kaas_check_verify_on(b, p, want, n1 + n2, why, sizeof why) < 0)
		goto out;
	/* A rewrites the file shorter (truncate on open). */
	kaas_check_fill(want, n3, 3);
	step = "after a truncate+rewrite+close on host A, host B's new open";
	rc = kaas_check_write_file(c->sub, p, KAAS_O_TRUNC, want, n3, 0);
	if (rc < 0) {
		snprintf(why, sizeof why, "rewrite: %s", kaas_sub_errdetail());
		goto out;
	}
	if (kaas_check_verify_on(b, p, want, n3, why, sizeof why) < 0)
		goto out;
	r->pass = 1;
	kaas_check_seen(r, "host B's new opens saw every byte host A closed (create 1 MiB, append 64 KiB, rewrite 12 KiB)");
out:
	if (!r->pass)
		kaas_check_seen(r, "%s: %s", step, why);
	free(want);
	free(p);
	kaas_substrate_close(b);
}

/* ---- probe 4: an fsynced write is visible to another host's new open ---- */

void kaas_check_probe_fsync_visible(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	struct kaas_substrate *b;
	if (kaas_check_open_peer(c, r, &b) < 0)
		return;
	char *p = kaas_check_path(c, "fsync-visible");
	size_t n = 256 * 1024 + 5;
	unsigned char *want = malloc(n);
	kaas_check_fill(want, n, 4);
	char why[256] = "";
	struct kaas_file *f;
	int rc = kaas_sub_open(c->sub, p, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f);
	if (rc == 0) {
		rc = kaas_sub_pwrite_full(f, want, n, 0);
		if (rc == 0)
			rc = kaas_sub_fsync(f);
		if (rc < 0) {
			snprintf(why, sizeof why, "write/fsync: %s", kaas_sub_errdetail());
		} else if (kaas_check_verify_on(b, p, want, n, why, sizeof why) == 0) {
			r->pass = 1;
		}
		kaas_sub_close(f);
	} else {
		snprintf(why, sizeof why, "create: %s", kaas_sub_errdetail());
	}
	kaas_check_verdict(r, "256 KiB fsynced on host A (still open) read back whole by host B",
			   "after fsync on host A, host B's open: ", why);
	free(want);
	free(p);
	kaas_substrate_close(b);
}

/* ---- probe 5: fsync, close, reopen ---- */

void kaas_check_probe_fsync_reopen(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	char *p = kaas_check_path(c, "fsync-reopen");
	size_t n = (1u << 20) + 4097;
	unsigned char *want = malloc(n);
	kaas_check_fill(want, n, 5);
	char why[256] = "";
	int rc = kaas_check_write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, want, n, 1);
	if (rc < 0)
		snprintf(why, sizeof why, "write/fsync/close: %s", kaas_sub_errdetail());
	else if (kaas_check_verify_on(c->sub, p, want, n, why, sizeof why) == 0) {
		struct kaas_stat st;
		if (kaas_sub_stat(c->sub, p, &st) < 0)
			snprintf(why, sizeof why, "stat: %s", kaas_sub_errdetail());
		else if (st.size != n || st.type != KAAS_FT_FILE)
			snprintf(why, sizeof why, "stat says %" PRIu64 " bytes, type %d", st.size, (int)st.type);
		else
			r->pass = 1;
	}
	kaas_check_verdict(r, "1 MiB + 4097 bytes written, fsynced, closed, reopened: identical; stat size right",
			   "", why);
	free(want);
	free(p);
}
