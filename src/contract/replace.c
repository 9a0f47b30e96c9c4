/* replace.c — rule 1: temp, fsync, rename over the target, fsync the dir. */
#include "contract/contract.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ulong temp_counter;

int kaas_is_temp_name(const char *name)
{
	return strncmp(name, KAAS_TEMP_PREFIX, strlen(KAAS_TEMP_PREFIX)) == 0;
}

int kaas_replace(struct kaas_substrate *sub, const char *path, const void *buf, size_t len)
{
	int rc = kaas_path_check(path);
	if (rc < 0 || !*path)
		return kaas_sub_fail(rc < 0 ? rc : -EINVAL, "replace: invalid path '%s'", path);
	char *dir = kaas_path_dirname(path);
	if (!dir)
		return -ENOMEM;
	const char *base = kaas_path_basename(path);
	/* Keep the temp name within NAME_MAX: the target part is shortened. */
	char tname[256];
	unsigned long ctr = atomic_fetch_add(&temp_counter, 1);
	snprintf(tname, sizeof tname, KAAS_TEMP_PREFIX "%.150s.%s.%ld.%lu", base, sub->host,
		 (long)getpid(), ctr);
	char *tmp = kaas_path_join(dir, tname);
	if (!tmp) {
		free(dir);
		return -ENOMEM;
	}
	struct kaas_file *f = NULL;
	rc = kaas_sub_open(sub, tmp, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f);
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

/* Parse ".tmp.<target>.<host>.<pid>.<counter>" from the right. */
static int parse_temp(const char *name, char *host, size_t hsize, long *pid)
{
	if (!kaas_is_temp_name(name))
		return -1;
	const char *end = name + strlen(name);
	const char *dots[3];
	int found = 0;
	for (const char *p = end - 1; p > name && found < 3; p--)
		if (*p == '.')
			dots[found++] = p;
	if (found < 3)
		return -1;
	/* dots[0]: before counter, dots[1]: before pid, dots[2]: before host */
	size_t hl = (size_t)(dots[1] - dots[2] - 1);
	if (hl >= hsize)
		return -1;
	memcpy(host, dots[2] + 1, hl);
	host[hl] = '\0';
	char *e;
	*pid = strtol(dots[1] + 1, &e, 10);
	if (e != dots[0])
		return -1;
	return 0;
}

int kaas_sweep_temps(struct kaas_substrate *sub, const char *dir, enum kaas_sweep_scope scope)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0)
		return rc;
	int removed = 0;
	for (size_t i = 0; i < l.n && rc >= 0; i++) {
		const char *name = l.names[i];
		if (!kaas_is_temp_name(name))
			continue;
		if (scope == KAAS_SWEEP_DEAD_LOCAL) {
			char host[64];
			long pid;
			if (parse_temp(name, host, sizeof host, &pid) < 0)
				continue; /* not ours to judge */
			if (strcmp(host, sub->host) != 0)
				continue;
			if (pid == (long)getpid())
				continue;
			if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
				continue; /* still alive */
		}
		char *p = kaas_path_join(dir, name);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		int u = kaas_sub_unlink(sub, p);
		free(p);
		if (u == 0)
			removed++;
		else if (u != -ENOENT)
			rc = u;
	}
	kaas_dirlist_free(&l);
	return rc < 0 ? rc : removed;
}
