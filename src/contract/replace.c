/* replace.c — rule 1: temp, fsync, rename over the target, fsync the dir. */
#include "contract/contract.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kaas_is_temp_name(const char *name)
{
	return strncmp(name, KAAS_TEMP_PREFIX, strlen(KAAS_TEMP_PREFIX)) == 0;
}

int kaas_replace(struct kaas_substrate *sub, const char *path, const void *buf, size_t len)
{
	return kaas_replace_mode(sub, path, buf, len, 0644);
}

int kaas_replace_mode(struct kaas_substrate *sub, const char *path, const void *buf, size_t len,
		      uint32_t mode)
{
	int rc = kaas_path_check(path);
	if (rc < 0 || !*path)
		return kaas_sub_fail(rc < 0 ? rc : -EINVAL, "replace: invalid path '%s'", path);
	char *dir = kaas_path_dirname(path);
	if (!dir)
		return -ENOMEM;
	const char *base = kaas_path_basename(path);
	/* Keep the temp name within NAME_MAX: the target part is shortened.
	 * The name carries this process's incarnation (substrate.h: private
	 * names), so a sweep can tell a live writer's temp from a dead one's
	 * even when the dead one had our pid (PID 1 in every container). */
	char prefix[160], tname[256];
	snprintf(prefix, sizeof prefix, KAAS_TEMP_PREFIX "%.150s.", base);
	rc = kaas_private_name(tname, sizeof tname, prefix, sub->host);
	if (rc < 0) {
		free(dir);
		return kaas_sub_fail(rc, "replace %s: temp name too long", path);
	}
	char *tmp = kaas_path_join(dir, tname);
	if (!tmp) {
		free(dir);
		return -ENOMEM;
	}
	struct kaas_file *f = NULL;
	rc = kaas_sub_open(sub, tmp, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, mode, &f);
	if (rc < 0)
		goto fail;
	rc = kaas_sub_pwrite_full(f, buf, len, 0);
	if (rc == 0)
		rc = kaas_sub_fsync(f);
	int crc = kaas_sub_close(f);
	if (rc == 0 && crc < 0)
		rc = crc;
	if (rc < 0)
		goto unlink_tmp;
	rc = kaas_sub_rename(sub, tmp, path);
	if (rc < 0)
		goto unlink_tmp;
	rc = kaas_sub_fsync_dir(sub, dir);
	if (rc < 0)
		goto fail;
	goto out;
unlink_tmp: {
	/* Keep the first error's detail; the temp is swept later if this fails. */
	char keep[1024];
	snprintf(keep, sizeof keep, "%s", kaas_sub_errdetail());
	kaas_sub_unlink(sub, tmp);
	kaas_sub_fail(rc, "replace %s: %s", path, keep);
	goto out;
}
fail: {
	char keep[1024];
	snprintf(keep, sizeof keep, "%s", kaas_sub_errdetail());
	kaas_sub_fail(rc, "replace %s: %s", path, keep);
}
out:
	free(tmp);
	free(dir);
	return rc;
}

int kaas_is_excl_name(const char *name)
{
	return strncmp(name, KAAS_EXCL_PREFIX, strlen(KAAS_EXCL_PREFIX)) == 0;
}

/* The writer of a temp or exclusive-create private name: 0 with host, pid
 * and incarnation (0 for the format before incarnations), -1 if `name` is
 * neither kind (or malformed: not ours to judge). */
static int parse_private(const char *name, char *host, size_t hsize, long *pid, uint64_t *inc)
{
	const char *prefix = kaas_is_temp_name(name)   ? KAAS_TEMP_PREFIX
			     : kaas_is_excl_name(name) ? KAAS_EXCL_PREFIX
						       : NULL;
	if (!prefix)
		return -1;
	return kaas_private_name_parse(name, prefix, host, hsize, pid, inc) < 0 ? -1 : 0;
}

/* Is the writer of a private name made on THIS host dead?  A process with
 * our pid is us: the same pid with another incarnation is an earlier life
 * (a restarted container).  Another pid: dead unless a process has it. */
static int local_writer_dead(long pid, uint64_t inc)
{
	if (pid == (long)getpid())
		return inc != kaas_incarnation(); /* legacy names (inc 0) too */
	return pid > 0 && !(kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Unlink dir/name: 1 removed, 0 already gone, or -errno. */
static int remove_one(struct kaas_substrate *sub, const char *dir, const char *name)
{
	char *p = kaas_path_join(dir, name);
	if (!p)
		return -ENOMEM;
	int u = kaas_sub_unlink(sub, p);
	free(p);
	return u == 0 ? 1 : u == -ENOENT ? 0 : u;
}

/* List dir and unlink every name doomed(ctx, name) picks: the number
 * removed, or the first -errno (the pass stops there; a later pass
 * resumes it: every step is an idempotent unlink). */
static int sweep_names(struct kaas_substrate *sub, const char *dir,
		       int (*doomed)(void *ctx, struct kaas_substrate *sub, const char *name),
		       void *ctx)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0)
		return rc;
	int removed = 0;
	for (size_t i = 0; i < l.n && rc >= 0; i++) {
		if (!doomed(ctx, sub, l.names[i]))
			continue;
		int u = remove_one(sub, dir, l.names[i]);
		if (u > 0)
			removed++;
		else if (u < 0)
			rc = u;
	}
	kaas_dirlist_free(&l);
	return rc < 0 ? rc : removed;
}

static int doomed_by_scope(void *ctx, struct kaas_substrate *sub, const char *name)
{
	enum kaas_sweep_scope scope = *(const enum kaas_sweep_scope *)ctx;
	char host[64];
	long pid;
	uint64_t inc;
	if (parse_private(name, host, sizeof host, &pid, &inc) < 0)
		return scope == KAAS_SWEEP_ALL && kaas_is_temp_name(name); /* else not ours to judge */
	if (scope == KAAS_SWEEP_DEAD_LOCAL)
		return strcmp(host, sub->host) == 0 && local_writer_dead(pid, inc);
	return 1;
}

int kaas_sweep_temps(struct kaas_substrate *sub, const char *dir, enum kaas_sweep_scope scope)
{
	return sweep_names(sub, dir, doomed_by_scope, &scope);
}

struct stale_ctx {
	kaas_live_fn live;
	void *arg;
};

static int doomed_if_dead(void *ctx, struct kaas_substrate *sub, const char *name)
{
	const struct stale_ctx *c = ctx;
	char host[64];
	long pid;
	uint64_t inc;
	if (parse_private(name, host, sizeof host, &pid, &inc) < 0)
		return 0;
	if (inc == kaas_incarnation())
		return 0; /* ours: this process is alive */
	if (inc == 0 && strcmp(host, sub->host) == 0 && !local_writer_dead(pid, inc))
		return 0; /* an older-format name of a live local process */
	return !c->live(c->arg, inc, name);
}

int kaas_sweep_stale(struct kaas_substrate *sub, const char *dir, kaas_live_fn live, void *arg)
{
	struct stale_ctx c = { live, arg };
	return sweep_names(sub, dir, doomed_if_dead, &c);
}
