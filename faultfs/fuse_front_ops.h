/*
 * fuse_front_ops.h — shared by the files of faultfs's FUSE front (private):
 * the per-host session, open file and directory state, and the low-level
 * ops (fuse_files.c, fuse_names.c) that fuse_front.c puts in its table.
 * Every op replies to its request exactly once (fuse_reply_*).
 */
#ifndef KAAS_FAULTFS_FUSE_FRONT_OPS_H
#define KAAS_FAULTFS_FUSE_FRONT_OPS_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>

#include "faultfs/fuse_front.h"

struct host_session {
	struct kaas_fault_model *m;
	int host;
	char *mnt;
	struct fuse_session *se;
	struct kaas_ll_nodes *nodes;
	pthread_t thread;
	int mounted, running;
};

struct kaas_fuse_front {
	int n;
	struct host_session *s;
};

/* An open file: the model's handle, its node, and whether every write must
 * be durable before it returns (O_SYNC/O_DSYNC: with direct_io the kernel
 * leaves that to the daemon). */
struct ff_file {
	struct kaas_fault_handle *h;
	uint64_t node;
	int dsync;
};

/* An open directory: its listing, taken at opendir. */
struct ff_dir {
	char *path;
	size_t n;
	char **names;
	enum kaas_file_type *types;
};

#define FF(fi) ((struct ff_file *)(uintptr_t)(fi)->fh)
#define FD(fi) ((struct ff_dir *)(uintptr_t)(fi)->fh)

/* The request's session; also tells the model which process calls. */
struct host_session *kaas_ff_me(fuse_req_t req);
/* The model's path of name in node parent (malloc'd), or NULL after
 * replying ESTALE (the parent node is gone). */
char *kaas_ff_child_path(fuse_req_t req, struct host_session *s, fuse_ino_t parent, const char *name);
/* The model's attributes as a struct stat. */
void kaas_ff_fill(const struct kaas_stat *ks, struct stat *st);
/* Reply with a fresh entry for `name` in `parent` whose attributes are ks;
 * with create_fi, the reply to a create (its handle is attached to the new
 * node, or closed and freed if the reply fails). */
void kaas_ff_reply_entry(fuse_req_t req, struct host_session *s, fuse_ino_t parent, const char *name,
			 const struct kaas_stat *ks, struct fuse_file_info *create_fi);

/* fuse_files.c */
void kaas_ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		     struct fuse_file_info *fi);
void kaas_ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    struct fuse_file_info *fi);
void kaas_ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void kaas_ff_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi);
void kaas_ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* fuse_names.c */
void kaas_ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void kaas_ff_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void kaas_ff_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void kaas_ff_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void kaas_ff_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void kaas_ff_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void kaas_ff_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		    const char *newname, unsigned int flags);
void kaas_ff_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void kaas_ff_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void kaas_ff_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void kaas_ff_statfs(fuse_req_t req, fuse_ino_t ino);

#endif
