/*
 * nfs.c — the substrate over libnfs (no mount); see nfs.h for the contract.
 * This file: opening a substrate from a URL, its ops table and teardown,
 * and the re-send rule every op by name shares.  The ops themselves are in
 * nfs_file.c (handles), nfs_names.c (namespace), nfs_unlink.c (unlink and
 * silly rename); nfs_rawio.c sends what libnfs gets wrong; nfs_conn.c
 * keeps the pool of libnfs contexts.
 */
#include "backends/nfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "backends/nfs_rpc.h"
#include "backends/nfs_sub.h"

/* Whether to send an op by name again after it failed with rc: ESTALE
 * (a name looked up just before another host replaced it: look it up
 * again, a few times) or, once, a connection error on an op safe to repeat
 * (idem).  The server answers ESTALE only for a handle in the request, so
 * the op itself did not happen and repeating it is safe. */
int kaas_nfs_again(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, int attempt, int idem)
{
	int e = -kaas_nfs_map_err(rc, nfs_get_error(c->nfs));
	if (e == -ESTALE)
		return attempt < 4;
	return idem && attempt == 0 && kaas_nfs_redrive(s, c, e);
}

int kaas_nfs_by_name(struct kaas_nfs_sub *s, const char *path, const char *what, int idem,
		     kaas_nfs_call_fn fn, kaas_nfs_fail_fn fail, void *arg)
{
	char *ap;
	struct kaas_nfs_conn *c;
	int r = kaas_nfs_borrow_for(s, path, &ap, &c);
	if (r < 0)
		return r;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = fn(c->nfs, ap, arg);
		if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, idem))
			break;
	}
	r = rc >= 0 ? 0 : fail ? fail(s, c, rc, arg) : kaas_nfs_fail(s, c, rc, what, path);
	pthread_mutex_unlock(&c->lock);
	free(ap);
	return r;
}

int kaas_nfs_borrow_for(struct kaas_nfs_sub *s, const char *path, char **ap, struct kaas_nfs_conn **c)
{
	*ap = kaas_nfs_abspath(path);
	if (!*ap)
		return -ENOMEM;
	int err = 0;
	*c = kaas_nfs_conn_borrow(s, &err);
	if (!*c) {
		free(*ap);
		*ap = NULL;
		return err;
	}
	return 0;
}

void kaas_nfs_fill_stat(const struct nfs_stat_64 *n, struct kaas_stat *st)
{
	st->size = n->nfs_size;
	st->mtime_ns = (int64_t)n->nfs_mtime * 1000000000 + (int64_t)n->nfs_mtime_nsec;
	st->ino = n->nfs_ino;
	st->mode = (uint32_t)(n->nfs_mode & 07777);
	st->nlink = (uint32_t)n->nfs_nlink;
	st->type = S_ISDIR(n->nfs_mode) ? KAAS_FT_DIR : S_ISREG(n->nfs_mode) ? KAAS_FT_FILE : KAAS_FT_OTHER;
}

static void nfs_sub_destroy(struct kaas_substrate *sub)
{
	struct kaas_nfs_sub *s = S(sub);
	for (unsigned i = 0; i < s->nconns; i++) {
		struct kaas_nfs_conn *c = s->conns[i];
		if (c->nfs)
			nfs_destroy_context(c->nfs);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	while (s->inos) {
		struct open_ino *o = s->inos;
		s->inos = o->next;
		free(o->silly);
		free(o);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->root);
	free(s->liburl);
	free(s);
}

static const struct kaas_substrate_ops nfs_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "nfs",
	.file_size = sizeof(struct kaas_nfs_file),
	.destroy = nfs_sub_destroy,
	.open = kaas_nfs_op_open,
	.close = kaas_nfs_op_close,
	.pread = kaas_nfs_op_pread,
	.pwrite = kaas_nfs_op_pwrite,
	.fsync = kaas_nfs_op_fsync,
	.ftruncate = kaas_nfs_op_ftruncate,
	.fstat = kaas_nfs_op_fstat,
	.stat = kaas_nfs_op_stat,
	.rename = kaas_nfs_op_rename,
	.unlink = kaas_nfs_op_unlink,
	.mkdir = kaas_nfs_op_mkdir,
	.rmdir = kaas_nfs_op_rmdir,
	.readdir = kaas_nfs_op_readdir,
	.fsync_dir = kaas_nfs_op_fsync_dir,
	.statfs = kaas_nfs_op_statfs,
	.sendfile = NULL,
	.fallocate = NULL,
	.readahead = NULL, /* libnfs has no page cache to fill */
};

/* ------------------------------------------------------------------ */
/* Opening from a URL                                                   */

static int nfs_sub_open(const char *url, struct kaas_substrate **out)
{
	struct kaas_nfs_sub *s = calloc(1, sizeof *s);
	if (!s)
		return kaas_sub_fail(ENOMEM, "%s: out of memory", url);
	pthread_mutex_init(&s->lock, NULL);
	s->base.ops = &nfs_ops;
	struct kaas_nfs_url u;
	int rc = kaas_nfs_url_parse(url, &u);
	s->root = u.root;
	s->liburl = u.liburl;
	s->version = u.version;
	s->timeout_ms = u.timeout_ms;
	s->maxconns = u.maxconns;
	s->nfsport = u.nfsport;
	s->mountport = u.mountport;
	if (rc < 0) {
		if (rc == -ENOMEM)
			kaas_sub_fail(ENOMEM, "%s: out of memory", url);
		nfs_sub_destroy(&s->base);
		return rc;
	}
	/* Connect one context now, so a bad URL fails here, and check that the
	 * root is a directory. */
	int err = 0;
	struct kaas_nfs_conn *c = kaas_nfs_conn_new(s, &err);
	if (!c) {
		nfs_sub_destroy(&s->base);
		return err;
	}
	s->conns[s->nconns++] = c;
	struct nfs_stat_64 st;
	rc = nfs_stat64(c->nfs, "/", &st);
	if (rc < 0) {
		rc = kaas_nfs_fail(s, c, rc, "stat", "");
		nfs_sub_destroy(&s->base);
		return rc;
	}
	if (!S_ISDIR(st.nfs_mode)) {
		nfs_sub_destroy(&s->base);
		return kaas_sub_fail(ENOTDIR, "%s: not a directory", url);
	}
	*out = &s->base;
	return 0;
}

const struct kaas_backend kaas_backend_nfs = {
	.scheme = "nfs",
	.open = nfs_sub_open,
};
