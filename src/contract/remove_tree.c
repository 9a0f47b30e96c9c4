/* remove_tree.c — a recursive delete that converges: resumable, idempotent. */
#include "contract/contract.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kaas_is_silly_name(const char *name)
{
	if (strncmp(name, ".nfs", 4) != 0 || !name[4])
		return 0;
	for (const char *p = name + 4; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return 0;
	return 1;
}

/* Returns KAAS_DONE, KAAS_NOT_YET or -errno. */
static int remove_one(struct kaas_substrate *sub, const char *path, int depth)
{
	if (depth > 64)
		return kaas_sub_fail(ELOOP, "remove %s: tree deeper than 64 levels", path);
	struct kaas_stat st;
	int rc = kaas_sub_stat(sub, path, &st);
	if (rc == -ENOENT)
		return KAAS_DONE;
	if (rc < 0)
		return rc == -ESTALE ? KAAS_NOT_YET : rc;
	if (st.type != KAAS_FT_DIR) {
		rc = kaas_sub_unlink(sub, path);
		if (rc == 0 || rc == -ENOENT)
			return KAAS_DONE;
		if (rc == -EBUSY || rc == -ESTALE)
			return KAAS_NOT_YET; /* a silly-renamed file still held open */
		return rc;
	}
	struct kaas_dirlist l;
	rc = kaas_sub_list(sub, path, &l);
	if (rc == -ENOENT)
		return KAAS_DONE;
	if (rc < 0)
		return rc == -ESTALE ? KAAS_NOT_YET : rc;
	int not_yet = 0;
	for (size_t i = 0; i < l.n; i++) {
		char *child = kaas_path_join(path, l.names[i]);
		if (!child) {
			kaas_dirlist_free(&l);
			return -ENOMEM;
		}
		int c = remove_one(sub, child, depth + 1);
		free(child);
		if (c < 0) {
			kaas_dirlist_free(&l);
			return c;
		}
		if (c == KAAS_NOT_YET)
			not_yet = 1;
	}
	kaas_dirlist_free(&l);
	rc = kaas_sub_rmdir(sub, path);
	if (rc == 0 || rc == -ENOENT)
		return KAAS_DONE;
	if (rc == -ENOTEMPTY || rc == -EBUSY || rc == -ESTALE)
		return KAAS_NOT_YET; /* silly-renamed entries, or a racer adding files */
	if (not_yet)
		return KAAS_NOT_YET;
	return rc;
}

int kaas_remove_tree_step(struct kaas_substrate *sub, const char *path)
{
	int rc = kaas_path_check(path);
	if (rc < 0 || !*path)
		return kaas_sub_fail(rc < 0 ? rc : -EINVAL, "remove_tree: refusing path '%s'", path);
	return remove_one(sub, path, 0);
}

struct rt_arg {
	struct kaas_substrate *sub;
	const char *path;
};

static int rt_step(void *arg)
{
	struct rt_arg *a = arg;
	return kaas_remove_tree_step(a->sub, a->path);
}

int kaas_remove_tree(struct kaas_substrate *sub, const char *path,
		     const struct kaas_converge_opts *opts)
{
	struct rt_arg a = {sub, path};
	return kaas_converge(rt_step, &a, opts);
}
