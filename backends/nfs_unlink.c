/*
 * nfs_unlink.c — unlink and silly rename.  The server has no open state in
 * NFSv3, so this client keeps the files it has open by server file id; an
 * unlink of one of them renames it aside to ".nfs<ino><seq>" and the last
 * close removes it, as the kernel client does.
 */
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

/* ------------------------------------------------------------------ */
/* Open files by server file id (silly rename)                          */

struct open_ino *ino_find(struct kaas_nfs_sub *s, uint64_t ino)
{
	for (struct open_ino *o = s->inos; o; o = o->next)
		if (o->ino == ino)
			return o;
	return NULL;
}

int kaas_nfs_ino_ref(struct kaas_nfs_sub *s, uint64_t ino)
{
	pthread_mutex_lock(&s->lock);
	struct open_ino *o = ino_find(s, ino);
	if (!o) {
		o = calloc(1, sizeof *o);
		if (!o) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		o->ino = ino;
		o->next = s->inos;
		s->inos = o;
	}
	o->refs++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Drop a reference; returns the silly name to remove (malloc'd) if this was
 * the last handle on an unlinked-while-open file, else NULL. */
char *kaas_nfs_ino_unref(struct kaas_nfs_sub *s, uint64_t ino)
{
	char *silly = NULL;
	pthread_mutex_lock(&s->lock);
	for (struct open_ino **pp = &s->inos; *pp; pp = &(*pp)->next) {
		struct open_ino *o = *pp;
		if (o->ino != ino)
			continue;
		if (--o->refs == 0) {
			silly = o->silly;
			*pp = o->next;
			free(o);
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return silly;
}

int silly_name(struct kaas_nfs_sub *s, const char *path, uint64_t ino, char **out)
{
	char *dir = kaas_path_dirname(path);
	if (!dir)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	unsigned n = ++s->silly_seq;
	pthread_mutex_unlock(&s->lock);
	char name[64];
	snprintf(name, sizeof name, ".nfs%016" PRIx64 "%08x", ino, n);
	char *p = kaas_path_join(dir, name);
	free(dir);
	if (!p)
		return -ENOMEM;
	*out = p;
	return 0;
}

int kaas_nfs_op_unlink(struct kaas_substrate *sub, const char *path)
{
	struct kaas_nfs_sub *s = S(sub);
	char *ap;
	struct kaas_nfs_conn *c;
	int err = kaas_nfs_borrow_for(s, path, &ap, &c);
	if (err < 0)
		return err;
	int r = 0;
	pthread_mutex_lock(&s->lock);
	int any_open = s->inos != NULL;
	pthread_mutex_unlock(&s->lock);
	struct nfs_stat_64 n;
	int rc;
	for (int attempt = 0;; attempt++) {
		rc = nfs_stat64(c->nfs, ap, &n); /* also tells a directory from a file */
		if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 1))
			break;
	}
	if (rc < 0) {
		r = kaas_nfs_fail(s, c, rc, "unlink", path);
		goto out;
	}
	if (S_ISDIR(n.nfs_mode)) {
		r = kaas_sub_fail(EISDIR, "unlink %s/%s: is a directory", s->root, path);
		goto out;
	}
	if (any_open) {
		pthread_mutex_lock(&s->lock);
		struct open_ino *o = ino_find(s, n.nfs_ino);
		int open_here = o != NULL, already_silly = o && o->silly;
		pthread_mutex_unlock(&s->lock);
		if (open_here && already_silly) {
			r = kaas_sub_fail(EBUSY, "unlink %s/%s: a silly-renamed file still open on this host",
					  s->root, path);
			goto out;
		}
		if (open_here) {
			/* Open on this host: rename it aside; the last close removes it. */
			char *silly = NULL;
			r = silly_name(s, path, n.nfs_ino, &silly);
			if (r < 0)
				goto out;
			char *asilly = kaas_nfs_abspath(silly);
			rc = asilly ? nfs_rename(c->nfs, ap, asilly) : -ENOMEM;
			free(asilly);
			if (rc < 0) {
				r = kaas_nfs_fail(s, c, rc, "unlink (silly rename)", path);
				free(silly);
				goto out;
			}
			pthread_mutex_lock(&s->lock);
			o = ino_find(s, n.nfs_ino);
			if (o && !o->silly) {
				o->silly = kaas_nfs_abspath(silly);
			} else if (!o) {
				/* Closed meanwhile: remove it now. */
				pthread_mutex_unlock(&s->lock);
				char *asl = kaas_nfs_abspath(silly);
				if (asl)
					nfs_unlink(c->nfs, asl);
				free(asl);
				pthread_mutex_lock(&s->lock);
			}
			pthread_mutex_unlock(&s->lock);
			free(silly);
			goto out;
		}
	}
	for (int attempt = 0;; attempt++) {
		rc = nfs_unlink(c->nfs, ap);
		if (rc >= 0 || !kaas_nfs_again(s, c, rc, attempt, 0))
			break;
	}
	if (rc < 0)
		r = kaas_nfs_fail(s, c, rc, "unlink", path);
out:
	pthread_mutex_unlock(&c->lock);
	free(ap);
	return r;
}
