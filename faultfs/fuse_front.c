/*
 * fuse_front.c — libfuse3 low-level sessions over the fault model, one per
 * simulated host.  The session keeps an inode table (fuse_nodes.c) to turn
 * the kernel's node ids into the model's paths; the model does everything
 * else (silly-rename, staleness, faults).  Every reply carries zero entry
 * and attribute timeouts and every open is direct_io, so the kernel caches
 * nothing the model should decide.
 * This file: the sessions (mount, loop thread, unmount), the op table and
 * the helpers every op shares; the ops are fuse_files.c and fuse_names.c.
 */
#define FUSE_USE_VERSION 35
#include "faultfs/fuse_front_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "faultfs/fuse_nodes.h"

struct host_session *kaas_ff_me(fuse_req_t req)
{
	kaas_fault_set_caller(fuse_req_ctx(req)->pid);
	return fuse_req_userdata(req);
}

void kaas_ff_fill(const struct kaas_stat *ks, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)ks->ino;
	st->st_mode = (mode_t)(ks->mode & 07777) | (ks->type == KAAS_FT_DIR ? S_IFDIR : S_IFREG);
	st->st_nlink = ks->nlink ? ks->nlink : 1;
	st->st_size = (off_t)ks->size;
	st->st_blocks = (blkcnt_t)((ks->size + 511) / 512);
	st->st_blksize = 4096;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_mtim.tv_sec = ks->mtime_ns / 1000000000;
	st->st_mtim.tv_nsec = ks->mtime_ns % 1000000000;
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

char *kaas_ff_child_path(fuse_req_t req, struct host_session *s, fuse_ino_t parent, const char *name)
{
	char *p = kaas_ll_child_path(s->nodes, parent, name);
	if (!p)
		fuse_reply_err(req, ESTALE);
	return p;
}

static void ff_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

/* Reply with a fresh entry for `name` in `parent` whose attributes are ks. */
void kaas_ff_reply_entry(fuse_req_t req, struct host_session *s, fuse_ino_t parent, const char *name,
			const struct kaas_stat *ks, struct fuse_file_info *create_fi)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof e);
	e.ino = kaas_ll_ref(s->nodes, parent, name);
	if (!e.ino) {
		if (create_fi) {
			struct ff_file *f = FF(create_fi);
			kaas_fault_close(f->h);
			free(f);
		}
		fuse_reply_err(req, ENOMEM);
		return;
	}
	kaas_ff_fill(ks, &e.attr);
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	if (create_fi) {
		FF(create_fi)->node = e.ino;
		kaas_ll_attach(s->nodes, e.ino, FF(create_fi));
		if (fuse_reply_create(req, &e, create_fi) != 0) {
			/* the opener is gone: the kernel will not release it */
			kaas_ll_detach(s->nodes, e.ino, FF(create_fi));
			kaas_fault_close(FF(create_fi)->h);
			free(FF(create_fi));
			kaas_ll_forget(s->nodes, e.ino, 1);
		}
	} else if (fuse_reply_entry(req, &e) != 0) {
		kaas_ll_forget(s->nodes, e.ino, 1);
	}
}


static const struct fuse_lowlevel_ops ff_ops = {
	.init = ff_init,
	.lookup = kaas_ff_lookup,
	.forget = kaas_ff_forget,
	.forget_multi = kaas_ff_forget_multi,
	.getattr = kaas_ff_getattr,
	.setattr = kaas_ff_setattr,
	.open = kaas_ff_open,
	.create = kaas_ff_create,
	.read = kaas_ff_read,
	.write = kaas_ff_write,
	.flush = kaas_ff_flush,
	.release = kaas_ff_release,
	.fsync = kaas_ff_fsync,
	.unlink = kaas_ff_unlink,
	.mkdir = kaas_ff_mkdir,
	.rmdir = kaas_ff_rmdir,
	.rename = kaas_ff_rename,
	.opendir = kaas_ff_opendir,
	.readdir = kaas_ff_readdir,
	.releasedir = kaas_ff_releasedir,
	.fsyncdir = kaas_ff_fsyncdir,
	.statfs = kaas_ff_statfs,
};

static void *session_thread(void *arg)
{
	struct host_session *s = arg;
	struct fuse_loop_config cfg = { .clone_fd = 0, .max_idle_threads = 8 };
	fuse_session_loop_mt(s->se, &cfg);
	return NULL;
}

void kaas_fuse_front_stop(struct kaas_fuse_front *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->se) {
			fuse_session_exit(s->se);
			if (s->mounted)
				fuse_session_unmount(s->se); /* wakes the loop's readers */
		}
	}
	for (int i = 0; i < f->n; i++) {
		struct host_session *s = &f->s[i];
		if (s->running)
			pthread_join(s->thread, NULL);
		if (s->se)
			fuse_session_destroy(s->se);
		kaas_ll_nodes_free(s->nodes);
	}
	free(f->s);
	free(f);
}

int kaas_fuse_front_start(struct kaas_fault_model *m, int nhosts, char **mountpoints,
			  struct kaas_fuse_front **out)
{
	*out = NULL;
	struct kaas_fuse_front *f = calloc(1, sizeof *f);
	if (!f || !(f->s = calloc((size_t)nhosts, sizeof *f->s))) {
		free(f);
		return -ENOMEM;
	}
	f->n = nhosts;
	for (int i = 0; i < nhosts; i++) {
		struct host_session *s = &f->s[i];
		s->m = m;
		s->host = i;
		s->mnt = mountpoints[i];
		s->nodes = kaas_ll_nodes_new();
		if (!s->nodes) {
			kaas_fuse_front_stop(f);
			return -ENOMEM;
		}
		char fsname[64];
		snprintf(fsname, sizeof fsname, "fsname=faultfs-host%d,subtype=faultfs", i);
		char *argv[] = { "faultfs", "-o", fsname, NULL };
		struct fuse_args args = FUSE_ARGS_INIT(3, argv);
		s->se = fuse_session_new(&args, &ff_ops, sizeof ff_ops, s);
		fuse_opt_free_args(&args);
		if (!s->se) {
			fprintf(stderr, "faultfs: fuse_session_new failed for host %d\n", i);
			kaas_fuse_front_stop(f);
			return -EIO;
		}
		if (fuse_session_mount(s->se, s->mnt) != 0) {
			fprintf(stderr, "faultfs: cannot mount host %d at %s\n", i, s->mnt);
			kaas_fuse_front_stop(f);
			return -EIO;
		}
		s->mounted = 1;
		if (pthread_create(&s->thread, NULL, session_thread, s) != 0) {
			kaas_fuse_front_stop(f);
			return -EAGAIN;
		}
		s->running = 1;
	}
	*out = f;
	return 0;
}
