/* claim.c — numbered names won by exclusive create (guarantee 2). */
#include "contract/contract.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kaas_claim_name(char *buf, size_t size, const char *prefix, uint64_t n)
{
	snprintf(buf, size, "%s-%020" PRIu64, prefix, n);
}

int kaas_claim_parse(const char *name, const char *prefix, uint64_t *n)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0 || name[pl] != '-')
		return -EINVAL;
	const char *d = name + pl + 1;
	if (strlen(d) != KAAS_CLAIM_DIGITS)
		return -EINVAL;
	uint64_t v = 0;
	for (int i = 0; i < KAAS_CLAIM_DIGITS; i++) {
		if (d[i] < '0' || d[i] > '9')
			return -EINVAL;
		uint64_t nv = v * 10 + (uint64_t)(d[i] - '0');
		if (nv / 10 != v)
			return -EINVAL; /* overflow */
		v = nv;
	}
	*n = v;
	return 0;
}

int kaas_claim_exact(struct kaas_substrate *sub, const char *dir, const char *prefix, uint64_t n,
		     const char *note)
{
	char name[256];
	kaas_claim_name(name, sizeof name, prefix, n);
	char *p = kaas_path_join(dir, name);
	if (!p)
		return -ENOMEM;
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, p, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f);
	if (rc == 0) {
		/* The claim is the name.  The note is advisory: a failure writing
		 * it does not undo the claim. */
		if (note)
			kaas_sub_pwrite_full(f, note, strlen(note), 0);
		kaas_sub_fsync(f);
		kaas_sub_close(f);
		kaas_sub_fsync_dir(sub, dir);
	}
	free(p);
	return rc;
}

int kaas_claim(struct kaas_substrate *sub, const char *dir, const char *prefix, uint64_t from,
	       unsigned tries, const char *note, uint64_t *won)
{
	if (tries == 0)
		tries = 1;
	for (unsigned i = 0; i < tries; i++) {
		int rc = kaas_claim_exact(sub, dir, prefix, from + i, note);
		if (rc == 0) {
			*won = from + i;
			return 0;
		}
		if (rc != -EEXIST)
			return rc;
	}
	return kaas_sub_fail(EEXIST, "claim %s/%s-*: numbers %llu..%llu all taken", dir, prefix,
			     (unsigned long long)from, (unsigned long long)(from + tries - 1));
}

int kaas_claim_latest(struct kaas_substrate *sub, const char *dir, const char *prefix, uint64_t *n)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0)
		return rc;
	uint64_t max = 0, k;
	int found = 0;
	for (size_t i = 0; i < l.n; i++)
		if (kaas_claim_parse(l.names[i], prefix, &k) == 0 && (!found || k > max)) {
			max = k;
			found = 1;
		}
	kaas_dirlist_free(&l);
	if (!found)
		return -ENOENT;
	*n = max;
	return 0;
}
