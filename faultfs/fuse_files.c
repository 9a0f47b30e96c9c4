/*
 * fuse_files.c — the FUSE ops on files of faultfs's front: attributes
 * (getattr, setattr/truncate), open, create, read, write (O_SYNC writes made
 * durable), flush, release and fsync, each handed to the fault model.
 */
#define FUSE_USE_VERSION 35
#include "faultfs/fuse_front_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "faultfs/fuse_nodes.h"

static int fstat_handle(void *handle, void *arg)
{
	return kaas_fault_fstat(((struct ff_file *)handle)->h, arg);
}

/* Attributes of a node: through an open handle when this host has one (a
 * silly-renamed file stays fstat-able), else by name. */
static int node_stat(struct host_session *s, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct kaas_stat *ks)
{
	if (fi && fi->fh)
		return kaas_fault_fstat(FF(fi)->h, ks);
	int rc = kaas_ll_with_handle(s->nodes, ino, fstat_handle, ks);
	if (rc != -ENOENT)
		return rc;
	char *p = NULL;
	rc = kaas_ll_path(s->nodes, ino, &p);
	if (rc == 0)
		rc = kaas_fault_stat(s->m, s->host, p, ks);
	free(p);
	return rc;
}

void kaas_ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	struct kaas_stat ks;
	int rc = node_stat(s, ino, fi, &ks);
	if (rc < 0) {
		fuse_reply_err(req, rc == -ENOENT && ino != KAAS_LL_ROOT ? ESTALE : -rc);
		return;
	}
	struct stat st;
	kaas_ff_fill(&ks, &st);
	fuse_reply_attr(req, &st, 0);
}

static int truncate_handle(void *handle, void *arg)
{
	return kaas_fault_ftruncate(((struct ff_file *)handle)->h, *(uint64_t *)arg);
}

/* Truncate a node by name; a removed (silly-renamed) node through an open
 * handle of this host. */
static int truncate_by_name(struct host_session *s, fuse_ino_t ino, uint64_t size)
{
	char *p = NULL;
	int rc = kaas_ll_path(s->nodes, ino, &p);
	if (rc == -ESTALE) {
		free(p);
		return kaas_ll_with_handle(s->nodes, ino, truncate_handle, &size);
	}
	struct kaas_fault_handle *h = NULL;
	if (rc == 0)
		rc = kaas_fault_open(s->m, s->host, p, KAAS_O_WRITE, 0, &h);
	free(p);
	if (rc < 0)
		return rc;
	rc = kaas_fault_ftruncate(h, size);
	int crc = kaas_fault_close(h);
	return rc < 0 ? rc : crc;
}

void kaas_ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	int rc = 0;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		uint64_t size = (uint64_t)attr->st_size;
		if (fi && fi->fh) {
			rc = kaas_fault_ftruncate(FF(fi)->h, size);
		} else {
			rc = truncate_by_name(s, ino, size);
		}
	}
	/* mode, owner and times are not kept by the model: accepted, ignored */
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	kaas_ff_getattr(req, ino, fi);
}

static int kflags(int flags)
{
	int k;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		k = KAAS_O_READ;
		break;
	case O_WRONLY:
		k = KAAS_O_WRITE;
		break;
	default:
		k = KAAS_O_READ | KAAS_O_WRITE;
	}
	if (flags & O_TRUNC)
		k |= KAAS_O_TRUNC;
	return k;
}

static struct ff_file *wrap(struct kaas_fault_handle *h, int flags, struct fuse_file_info *fi)
{
	struct ff_file *f = calloc(1, sizeof *f);
	if (!f) {
		kaas_fault_close(h);
		return NULL;
	}
	f->h = h;
	f->dsync = (flags & (O_SYNC | O_DSYNC)) != 0;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return f;
}

void kaas_ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = NULL;
	int rc = kaas_ll_path(s->nodes, ino, &p);
	/* a node whose name was replaced: open by that name again, as an NFS
	 * client re-looks-up after ESTALE */
	if (rc == -ESTALE && p)
		rc = 0;
	struct kaas_fault_handle *h = NULL;
	if (rc == 0)
		rc = kaas_fault_open(s->m, s->host, p, kflags(fi->flags), 0, &h);
	free(p);
	if (rc < 0) {
		/* the node the kernel looked up is gone: a stale handle (the
		 * kernel then looks the name up again) */
		fuse_reply_err(req, rc == -ENOENT ? ESTALE : -rc);
		return;
	}
	struct ff_file *f = wrap(h, fi->flags, fi);
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->node = ino;
	kaas_ll_attach(s->nodes, ino, f);
	if (fuse_reply_open(req, fi) != 0) {
		kaas_ll_detach(s->nodes, ino, f);
		kaas_fault_close(h);
		free(f);
	}
}

void kaas_ff_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	char *p = kaas_ff_child_path(req, s, parent, name);
	if (!p)
		return;
	int k = kflags(fi->flags) | KAAS_O_CREAT;
	if (fi->flags & O_EXCL)
		k |= KAAS_O_EXCL;
	struct kaas_fault_handle *h = NULL;
	int rc = kaas_fault_open(s->m, s->host, p, k, (uint32_t)(mode & 07777), &h);
	free(p);
	struct kaas_stat ks;
	if (rc == 0 && (rc = kaas_fault_fstat(h, &ks)) < 0)
		kaas_fault_close(h);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (!wrap(h, fi->flags, fi)) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	kaas_ff_reply_entry(req, s, parent, name, &ks, fi);
}

void kaas_ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	kaas_ff_me(req);
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t done = 0;
	int err = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pread(FF(fi)->h, buf + done, size - done, (uint64_t)off + done);
		if (n < 0) {
			err = (int)-n;
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	if (err && !done)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, done);
	free(buf);
}

void kaas_ff_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	kaas_ff_me(req);
	size_t done = 0;
	int err = 0;
	while (done < size) {
		ssize_t n = kaas_fault_pwrite(FF(fi)->h, buf + done, size - done, (uint64_t)off + done);
		if (n <= 0) {
			err = n < 0 ? (int)-n : EIO;
			break;
		}
		done += (size_t)n;
	}
	if (!err && FF(fi)->dsync) {
		int rc = kaas_fault_fsync(FF(fi)->h);
		if (rc < 0)
			err = -rc;
	}
	if (err && (!done || FF(fi)->dsync))
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, done);
}

void kaas_ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	kaas_ff_me(req);
	fuse_reply_err(req, -kaas_fault_flush(FF(fi)->h));
}

void kaas_ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct host_session *s = kaas_ff_me(req);
	struct ff_file *f = FF(fi);
	kaas_ll_detach(s->nodes, f->node, f);
	kaas_fault_close(f->h);
	free(f);
	fuse_reply_err(req, 0);
}

void kaas_ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	kaas_ff_me(req);
	fuse_reply_err(req, -kaas_fault_fsync(FF(fi)->h));
}
