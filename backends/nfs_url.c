/* nfs_url.c — nfs:// URLs for backends/nfs.c; see nfs_url.h. */
#include "backends/nfs_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "substrate/substrate.h"

/* Parse a decimal argument in [lo, hi]; -1 if malformed. */
static long parse_num(const char *v, long lo, long hi)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -1;
	return x;
}

int kaas_nfs_url_parse(const char *url, struct kaas_nfs_url *s)
{
	memset(s, 0, sizeof *s);
	if (strncmp(url, "nfs://", 6) != 0)
		return kaas_sub_fail(EINVAL, "%s: not an nfs:// URL", url);
	const char *hostp = url + 6;
	const char *q = strchr(hostp, '?');
	size_t baselen = q ? (size_t)(q - url) : strlen(url);
	const char *slash = memchr(hostp, '/', baselen - 6);
	if (!slash || slash == hostp)
		return kaas_sub_fail(EINVAL, "%s: an nfs:// URL needs a server and an export path "
				     "(nfs://server/export/path)", url);
	if ((size_t)(slash - url) + 1 >= baselen)
		return kaas_sub_fail(EINVAL, "%s: the export path is missing (nfs://server/export/path)", url);
	s->root = strndup(url, baselen);
	while (s->root && strlen(s->root) > 7 && s->root[strlen(s->root) - 1] == '/')
		s->root[strlen(s->root) - 1] = '\0';
	size_t cap = strlen(url) + 64;
	s->liburl = malloc(cap);
	if (!s->root || !s->liburl)
		return -ENOMEM;
	memcpy(s->liburl, s->root, strlen(s->root) + 1);
	s->version = 3;
	s->timeout_ms = KAAS_NFS_DEFAULT_TIMEOUT_S * 1000;
	s->maxconns = KAAS_NFS_DEFAULT_CONNS;
	char sep = '?';
	if (q) {
		char *args = strdup(q + 1);
		if (!args)
			return -ENOMEM;
		char *save = NULL;
		for (char *kv = strtok_r(args, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
			char *eq = strchr(kv, '=');
			const char *val = eq ? eq + 1 : "";
			size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
			if (klen == 5 && !strncmp(kv, "conns", 5)) {
				long v = parse_num(val, 1, KAAS_NFS_MAX_CONNS);
				if (v < 0) {
					int rc_ = kaas_sub_fail(EINVAL, "%s: conns must be 1..%d, got '%s'", url,
							     KAAS_NFS_MAX_CONNS, val);
					free(args);
					return rc_;
				}
				s->maxconns = (unsigned)v;
				continue;
			}
			if (klen == 7 && !strncmp(kv, "timeout", 7)) {
				long v = parse_num(val, 1, 3600);
				if (v < 0) {
					int rc_ = kaas_sub_fail(EINVAL, "%s: timeout must be 1..3600 seconds, got '%s'",
							     url, val);
					free(args);
					return rc_;
				}
				s->timeout_ms = (int)v * 1000;
				continue;
			}
			if (klen == 7 && !strncmp(kv, "version", 7)) {
				long v = parse_num(val, 3, 4);
				if (v < 0) {
					int rc_ = kaas_sub_fail(EINVAL, "%s: version must be 3 or 4, got '%s'", url, val);
					free(args);
					return rc_;
				}
				s->version = (int)v;
			}
			int known = (klen == 7 && !strncmp(kv, "version", 7)) || (klen == 7 && !strncmp(kv, "nfsport", 7)) ||
				    (klen == 9 && !strncmp(kv, "mountport", 9)) || (klen == 3 && !strncmp(kv, "uid", 3)) ||
				    (klen == 3 && !strncmp(kv, "gid", 3));
			if (!known) {
				int rc_ = kaas_sub_fail(EINVAL, "%s: unknown URL argument '%.*s' (known: version, nfsport, "
						     "mountport, uid, gid, conns, timeout)", url, (int)klen, kv);
				free(args);
				return rc_;
			}
			if (klen == 7 && !strncmp(kv, "nfsport", 7))
				s->nfsport = (int)parse_num(val, 1, 65535);
			if (klen == 9 && !strncmp(kv, "mountport", 9))
				s->mountport = (int)parse_num(val, 1, 65535);
			if ((klen == 7 && !strncmp(kv, "nfsport", 7)) || (klen == 9 && !strncmp(kv, "mountport", 9))) {
				if (parse_num(val, 1, 65535) < 0) {
					int rc_ = kaas_sub_fail(EINVAL, "%s: %.*s must be a port number, got '%s'", url,
							     (int)klen, kv, val);
					free(args);
					return rc_;
				}
			}
			size_t used = strlen(s->liburl);
			snprintf(s->liburl + used, cap - used, "%c%s", sep, kv);
			sep = '&';
		}
		free(args);
	}
	return 0;
}

void kaas_nfs_url_free(struct kaas_nfs_url *u)
{
	free(u->root);
	free(u->liburl);
	u->root = u->liburl = NULL;
}
