/* fresh.c — lookups whose "no such name" is the server's (contract.h,
 * "fresh lookups"). */
#include "contract/contract.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Open `dir` as a directory and close it: the close-to-open revalidation
 * of its entries.  0 or -errno. */
static int touch_dir(struct kaas_substrate *sub, const char *dir)
{
	struct kaas_file *d = NULL;
	int rc = kaas_sub_open(sub, dir, KAAS_O_READ | KAAS_O_DIRECTORY, 0, &d);
	if (rc < 0)
		return rc;
	kaas_sub_close(d);
	return 0;
}

int kaas_revalidate_parents(struct kaas_substrate *sub, const char *path)
{
	assert(path);
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	/* The root first: it holds the first component's entry. */
	int rc = touch_dir(sub, "");
	for (char *slash = strchr(p, '/'); rc == 0 && slash; slash = strchr(slash + 1, '/')) {
		if (slash == p)
			continue; /* a leading '/' names the root, done */
		*slash = '\0';
		rc = touch_dir(sub, p);
		*slash = '/';
	}
	free(p);
	return rc;
}

int kaas_list_fresh(struct kaas_substrate *sub, const char *dir, struct kaas_dirlist *out)
{
	int rc = kaas_sub_list(sub, dir, out);
	if (rc != -ENOENT)
		return rc;
	rc = kaas_revalidate_parents(sub, dir);
	if (rc < 0)
		return rc; /* -ENOENT: an ancestor is missing on the server */
	return kaas_sub_list(sub, dir, out);
}
