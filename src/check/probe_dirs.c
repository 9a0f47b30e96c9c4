/*
 * probe_dirs.c — the probes of directories: readdir lists every entry
 * exactly once (on both hosts), rmdir of a non-empty directory fails with
 * ENOTEMPTY, and the documented error codes of substrate.h.
 */
#include "check/check_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- probe 6: readdir completeness ---- */

/* List dir on sub and check it names f-00000 .. f-<n-1>, each once, as
 * files.  Returns 1 if so; else 0 with what was wrong in why. */
static int listing_complete(struct kaas_substrate *sub, const char *dir, unsigned n, size_t *listed,
			    char *why, size_t whysz)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0) {
		snprintf(why, whysz, "readdir: %s", kaas_sub_errdetail());
		return 0;
	}
	unsigned extra = 0, dup = 0, missing = 0;
	unsigned char *got = calloc(n, 1);
	for (size_t i = 0; i < l.n; i++) {
		unsigned k;
		char tail;
		if (sscanf(l.names[i], "f-%5u%c", &k, &tail) == 1 && k < n) {
			if (got[k]++)
				dup++;
			if (l.types[i] != KAAS_FT_FILE)
				extra++;
		} else {
			extra++;
		}
	}
	for (unsigned k = 0; k < n; k++)
		if (!got[k])
			missing++;
	*listed = l.n;
	if (extra || dup || missing)
		snprintf(why, whysz, "%u files created, %zu listed: %u missing, %u duplicated, %u unexpected or mistyped",
			 n, l.n, missing, dup, extra);
	free(got);
	kaas_dirlist_free(&l);
	return !extra && !dup && !missing;
}

void kaas_check_probe_readdir(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	unsigned n = c->o->files ? c->o->files : 300;
	char *dir = kaas_check_mkdir(c, r, "listing");
	if (!dir)
		return;
	int rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		char name[32];
		snprintf(name, sizeof name, "f-%05u", i);
		char *p = kaas_path_join(dir, name);
		rc = kaas_check_write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, "x", 1, 0);
		free(p);
	}
	char why[300];
	size_t listed = 0, listed_b = 0;
	if (rc < 0) {
		kaas_check_seen(r, "creating files: %s", kaas_sub_errdetail());
		goto out;
	}
	if (!listing_complete(c->sub, dir, n, &listed, why, sizeof why)) {
		kaas_check_seen(r, "%s", why);
		goto out;
	}
	if (c->peer != c->url) {
		struct kaas_substrate *b;
		if (kaas_substrate_open(c->peer, &b) < 0) {
			kaas_check_seen(r, "cannot open host B: %s", kaas_sub_errdetail());
			goto out;
		}
		int ok = listing_complete(b, dir, n, &listed_b, why, sizeof why);
		kaas_substrate_close(b);
		if (!ok) {
			kaas_check_seen(r, "host B's listing: %s", why);
			goto out;
		}
	}
	r->pass = 1;
	if (c->peer != c->url)
		kaas_check_seen(r, "%u files created, %zu listed by host A and %zu by host B: each exactly once, typed as files", n,
		     listed, listed_b);
	else
		kaas_check_seen(r, "%u files created, %zu listed: each exactly once, typed as files", n, listed);
out:
	free(dir);
}

/* ---- probe 7: rmdir of a non-empty directory ---- */

void kaas_check_probe_rmdir(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	char *dir = kaas_check_path(c, "nonempty");
	char *f = kaas_check_path(c, "nonempty/a");
	int rc = kaas_sub_mkdir(c->sub, dir, 0755);
	if (rc == 0)
		rc = kaas_check_write_file(c->sub, f, KAAS_O_CREAT | KAAS_O_EXCL, "a", 1, 0);
	if (rc < 0) {
		kaas_check_seen(r, "setup: %s", kaas_sub_errdetail());
		goto out;
	}
	rc = kaas_sub_rmdir(c->sub, dir);
	if (rc != -ENOTEMPTY) {
		kaas_check_seen(r, "rmdir of a directory holding one file returned %d (%s), expected -ENOTEMPTY", rc,
		     rc ? strerror(-rc) : "success");
		goto out;
	}
	if ((rc = kaas_sub_unlink(c->sub, f)) < 0 || (rc = kaas_sub_rmdir(c->sub, dir)) < 0) {
		kaas_check_seen(r, "after emptying it, rmdir: %s", kaas_sub_errdetail());
		goto out;
	}
	r->pass = 1;
	kaas_check_seen(r, "ENOTEMPTY while it held a file; removed once empty");
out:
	free(dir);
	free(f);
}

/* ---- probe 8: error codes ---- */

struct errcase {
	const char *what;
	int want;
	int got;
};

void kaas_check_probe_errors(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	char *missing = kaas_check_path(c, "missing");
	char *e = kaas_check_path(c, "exists");
	char *d = kaas_check_path(c, "adir");
	char *nop = kaas_check_path(c, "noparent/sub");
	char *under = kaas_check_path(c, "exists/child");
	char *x = kaas_check_path(c, "x");
	struct kaas_stat st;
	struct kaas_file *f = NULL;
	struct errcase cs[16];
	size_t n = 0;
	int setup = kaas_check_write_file(c->sub, e, KAAS_O_CREAT | KAAS_O_EXCL, "e", 1, 0);
	if (setup == 0)
		setup = kaas_sub_mkdir(c->sub, d, 0755);
	if (setup < 0) {
		kaas_check_seen(r, "setup: %s", kaas_sub_errdetail());
		goto out;
	}
#define CASE(w, want_, expr)                                                                \
	do {                                                                                \
		int got_ = (expr);                                                          \
		cs[n++] = (struct errcase){w, want_, got_ > 0 ? 0 : got_};                  \
	} while (0)
	CASE("stat of a missing file", -ENOENT, kaas_sub_stat(c->sub, missing, &st));
	CASE("open of a missing file", -ENOENT, kaas_sub_open(c->sub, missing, KAAS_O_READ, 0, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("unlink of a missing file", -ENOENT, kaas_sub_unlink(c->sub, missing));
	CASE("rmdir of a missing directory", -ENOENT, kaas_sub_rmdir(c->sub, missing));
	CASE("rename of a missing file", -ENOENT, kaas_sub_rename(c->sub, missing, x));
	CASE("exclusive create of an existing file", -EEXIST,
	     kaas_sub_open(c->sub, e, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("mkdir of an existing directory", -EEXIST, kaas_sub_mkdir(c->sub, d, 0755));
	CASE("mkdir under a missing parent", -ENOENT, kaas_sub_mkdir(c->sub, nop, 0755));
	CASE("open of a directory for writing", -EISDIR, kaas_sub_open(c->sub, d, KAAS_O_WRITE, 0, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("unlink of a directory", -EISDIR, kaas_sub_unlink(c->sub, d));
	CASE("a file used as a directory", -ENOTDIR, kaas_sub_stat(c->sub, under, &st));
	CASE("a path with '..'", -EINVAL, kaas_sub_stat(c->sub, "../etc", &st));
	CASE("an absolute path", -EINVAL, kaas_sub_stat(c->sub, "/etc", &st));
	if (kaas_sub_open(c->sub, e, KAAS_O_READ, 0, &f) == 0) {
		char b[4];
		CASE("write through a read-only handle", -EBADF, (int)kaas_sub_pwrite(f, "x", 1, 0));
		CASE("read at end of file returns 0", 0, (int)kaas_sub_pread(f, b, sizeof b, 1));
		kaas_sub_close(f);
		f = NULL;
	}
#undef CASE
	char bad[400] = "";
	size_t bl = 0;
	unsigned nbad = 0;
	for (size_t i = 0; i < n; i++)
		if (cs[i].got != cs[i].want) {
			nbad++;
			if (bl < sizeof bad - 1)
				bl += (size_t)snprintf(bad + bl, sizeof bad - bl, "%s%s: %s (want %s)", nbad > 1 ? "; " : "",
						       cs[i].what, cs[i].got ? strerror(-cs[i].got) : "success",
						       cs[i].want ? strerror(-cs[i].want) : "success");
		}
	r->pass = nbad == 0;
	if (r->pass)
		kaas_check_seen(r, "%zu error cases, each as documented", n);
	else
		kaas_check_seen(r, "%u of %zu wrong: %s", nbad, n, bad);
out:
	free(missing);
	free(e);
	free(d);
	free(nop);
	free(under);
	free(x);
}
