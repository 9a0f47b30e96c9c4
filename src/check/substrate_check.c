/*
 * substrate_check.c — the driver of the substrate check: the probe table,
 * the scratch directory and the peer check around the probes
 * (check_support.c, probe_*.c), and the printed report.
 */
#include "check/check_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"

static const struct {
	const char *key;
	const char *guarantee;
} probe_names[KAAS_CHECK_COUNT] = {
	{"rename-atomic", "1. rename within a directory is atomic"},
	{"exclusive-create", "2. exclusive create is atomic"},
	{"close-to-open", "3. close-to-open consistency"},
	{"fsync-visible", "   an fsynced write is visible to a new open"},
	{"fsync-reopen", "   fsync, close, reopen returns every byte"},
	{"readdir", "   readdir lists every entry exactly once"},
	{"rmdir-nonempty", "   rmdir of a non-empty directory: ENOTEMPTY"},
	{"error-codes", "   error codes as substrate.h documents them"},
};

/* ---- driver ---- */

/* 0 if host B (the peer URL) sees the scratch directory host A just made,
 * else -errno with the detail set (-ENOENT: the peer is another volume). */
static int peer_sees(struct kaas_check_ctx *c)
{
	struct kaas_substrate *b;
	char why[300];
	int rc = kaas_substrate_open(c->peer, &b);
	if (rc < 0) {
		snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
		return kaas_sub_fail(rc, "cannot open the peer %s: %s", c->peer, why);
	}
	struct kaas_stat st;
	rc = kaas_sub_stat(b, c->scratch, &st);
	snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
	kaas_substrate_close(b);
	if (rc == -ENOENT)
		return kaas_sub_fail(rc, "the peer %s does not see the directory %s made through %s: "
				     "it is not the same volume", c->peer, c->scratch, c->url);
	if (rc < 0)
		return kaas_sub_fail(rc, "the peer %s cannot stat %s: %s", c->peer, c->scratch, why);
	if (st.type != KAAS_FT_DIR)
		return kaas_sub_fail(-ENOTDIR, "the peer %s sees %s, but not as a directory", c->peer, c->scratch);
	return 0;
}

int kaas_check_lookup(const char *key)
{
	for (int i = 0; i < KAAS_CHECK_COUNT; i++)
		if (!strcmp(probe_names[i].key, key))
			return i;
	return -1;
}

int kaas_substrate_check(const char *url, const struct kaas_check_opts *opts,
			 struct kaas_check_report *rep)
{
	static const struct kaas_check_opts defaults;
	static unsigned counter;
	memset(rep, 0, sizeof *rep);
	struct kaas_check_ctx c = {.url = url, .o = opts ? opts : &defaults};
	c.peer = c.o->peer_url ? c.o->peer_url : url;
	rep->peer_url = c.o->peer_url;
	unsigned long mask = c.o->mask ? c.o->mask : ~0ul;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		rep->r[i].key = probe_names[i].key;
		rep->r[i].guarantee = probe_names[i].guarantee;
		rep->r[i].ran = (mask >> i) & 1;
	}
	int rc = kaas_substrate_open(url, &c.sub);
	if (rc == 0) {
		snprintf(c.scratch, sizeof c.scratch, ".kaas-check.%s.%ld.%u", c.sub->host, (long)getpid(),
			 counter++);
		rc = kaas_sub_mkdir(c.sub, c.scratch, 0755);
	}
	const char *failed_step = c.sub ? "create a scratch directory" : "open the substrate";
	if (rc == 0 && c.o->peer_url) {
		rc = peer_sees(&c);
		failed_step = "use the peer";
		if (rc < 0) {
			struct kaas_converge_opts co = {.max_attempts = 20, .max_delay_us = 100000};
			char keep[400];
			snprintf(keep, sizeof keep, "%s", kaas_sub_errdetail());
			kaas_remove_tree(c.sub, c.scratch, &co);
			kaas_sub_fail(rc, "%s", keep);
		}
	}
	if (rc < 0) {
		char why[400];
		snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
		for (int i = 0; i < KAAS_CHECK_COUNT; i++)
			if (rep->r[i].ran)
				kaas_check_seen(&rep->r[i], "cannot %s: %s", failed_step, why);
		kaas_substrate_close(c.sub);
		rep->all_pass = 0;
		return rc;
	}
	static void (*const probes[KAAS_CHECK_COUNT])(struct kaas_check_ctx *, struct kaas_check_result *) = {
		kaas_check_probe_rename, kaas_check_probe_excl, kaas_check_probe_c2o,
		kaas_check_probe_fsync_visible, kaas_check_probe_fsync_reopen, kaas_check_probe_readdir,
		kaas_check_probe_rmdir, kaas_check_probe_errors,
	};
	rep->all_pass = 1;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		if (!rep->r[i].ran)
			continue;
		probes[i](&c, &rep->r[i]);
		if (!rep->r[i].pass)
			rep->all_pass = 0;
	}
	struct kaas_converge_opts co = {.max_attempts = 20, .max_delay_us = 100000};
	kaas_remove_tree(c.sub, c.scratch, &co);
	kaas_substrate_close(c.sub);
	return 0;
}

void kaas_check_print(const char *url, const struct kaas_check_report *rep, void *file)
{
	FILE *out = file;
	fprintf(out, "substrate check of %s\n", url);
	if (rep->peer_url)
		fprintf(out, "peer (host B): %s\n", rep->peer_url);
	fprintf(out, "\n");
	fprintf(out, "%-46s %-6s %s\n", "GUARANTEE", "RESULT", "SEEN");
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		const struct kaas_check_result *r = &rep->r[i];
		if (!r->ran)
			continue;
		fprintf(out, "%-46s %-6s %s\n", r->guarantee, r->pass ? "PASS" : "FAIL", r->seen);
	}
	int failed = 0;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++)
		if (rep->r[i].ran && !rep->r[i].pass)
			failed++;
	if (failed) {
		fprintf(out, "\nFAILED: %d check(s). This substrate does not meet the contract; do not put kaas data on it:", failed);
		for (int i = 0; i < KAAS_CHECK_COUNT; i++)
			if (rep->r[i].ran && !rep->r[i].pass)
				fprintf(out, " %s", rep->r[i].key);
		fprintf(out, "\n");
	} else {
		fprintf(out, "\nAll checks passed: the substrate meets the contract's guarantees as far as these probes can see.\n");
	}
}
