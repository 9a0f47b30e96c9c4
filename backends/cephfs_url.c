/* cephfs_url.c — cephfs:// URLs for backends/cephfs.c; see cephfs_url.h. */
#include "backends/cephfs_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "substrate/substrate.h"

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]))
			return 0;
	return 1;
}

/* A monitor list as mon_host takes it: addresses, ports, ',' and the
 * brackets of "[v2:a:p,v1:a:p]". */
static int mon_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:,[]-", s[i]))
			return 0;
	return 1;
}

static int bad(const char *url, const char *what)
{
	return kaas_sub_fail(EINVAL, "%s: %s (cephfs://[NAME@]MON/[PATH]?keyring=FILE"
			     "[&fs=FS][&conf=FILE][&timeout=S])", url, what);
}

/* One query argument into *u. */
static int take_arg(const char *url, struct kaas_cephfs_url *u, const char *k, size_t klen, const char *v)
{
	char **slot = NULL;
	if (klen == 2 && !strncmp(k, "fs", 2)) {
		if (!name_ok(v, strlen(v)))
			return bad(url, "fs= must name a file system (letters, digits, '_', '-', '.')");
		slot = &u->fs;
	} else if (klen == 7 && !strncmp(k, "keyring", 7)) {
		if (v[0] != '/')
			return bad(url, "keyring= must be an absolute file name");
		slot = &u->keyring;
	} else if (klen == 4 && !strncmp(k, "conf", 4)) {
		if (v[0] != '/')
			return bad(url, "conf= must be an absolute file name");
		slot = &u->conf;
	} else if (klen == 7 && !strncmp(k, "timeout", 7)) {
		char *end;
		errno = 0;
		long x = strtol(v, &end, 10);
		if (errno || end == v || *end || x < 1 || x > 3600)
			return kaas_sub_fail(EINVAL, "%s: timeout must be 1..3600 seconds, got '%s'", url, v);
		u->timeout_s = (int)x;
		return 0;
	} else {
		return kaas_sub_fail(EINVAL, "%s: unknown URL argument '%.*s' (known: fs, keyring, conf, timeout)",
				     url, (int)klen, k);
	}
	free(*slot);
	*slot = strdup(v);
	return *slot ? 0 : -ENOMEM;
}

int kaas_cephfs_url_parse(const char *url, struct kaas_cephfs_url *u)
{
	memset(u, 0, sizeof *u);
	u->timeout_s = KAAS_CEPHFS_DEFAULT_TIMEOUT_S;
	if (strncmp(url, "cephfs://", 9) != 0)
		return kaas_sub_fail(EINVAL, "%s: not a cephfs:// URL", url);
	const char *auth = url + 9;
	const char *q = strchr(auth, '?');
	const char *end = q ? q : auth + strlen(auth);
	const char *slash = memchr(auth, '/', (size_t)(end - auth));
	const char *aend = slash ? slash : end;

	/* [NAME@]MON */
	const char *at = memchr(auth, '@', (size_t)(aend - auth));
	const char *mon = at ? at + 1 : auth;
	if (at && !name_ok(auth, (size_t)(at - auth)))
		return bad(url, "the client name before '@' must be letters, digits, '_', '-', '.'");
	u->name = at ? strndup(auth, (size_t)(at - auth)) : strdup("admin");
	if (!u->name)
		return -ENOMEM;
	if (mon < aend) {
		if (!mon_ok(mon, (size_t)(aend - mon)))
			return bad(url, "the monitor address is not host:port[,host:port...]");
		if (!(u->mon = strndup(mon, (size_t)(aend - mon))))
			return -ENOMEM;
	}

	/* /PATH: no leading or trailing '/', then checked like any substrate path */
	const char *p = slash ? slash : end;
	while (p < end && *p == '/')
		p++;
	size_t plen = (size_t)(end - p);
	while (plen > 0 && p[plen - 1] == '/')
		plen--;
	char *rel = strndup(p, plen);
	if (!rel)
		return -ENOMEM;
	if (kaas_path_check(rel) < 0) {
		free(rel);
		return bad(url, "the path has an empty, '.' or '..' component, or is too long");
	}
	u->root = malloc(plen + 2);
	if (!u->root) {
		free(rel);
		return -ENOMEM;
	}
	snprintf(u->root, plen + 2, "/%s", rel);
	free(rel);

	if (q) {
		char *args = strdup(q + 1);
		if (!args)
			return -ENOMEM;
		char *save = NULL;
		for (char *kv = strtok_r(args, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
			char *eq = strchr(kv, '=');
			size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
			int rc = take_arg(url, u, kv, klen, eq ? eq + 1 : "");
			if (rc < 0) {
				free(args);
				return rc;
			}
		}
		free(args);
	}
	if (!u->mon && !u->conf)
		return bad(url, "name a monitor (cephfs://NAME@host:port/...) or a conf file (conf=)");

	size_t cap = strlen(url) + 16;
	if (!(u->display = malloc(cap)))
		return -ENOMEM;
	snprintf(u->display, cap, "cephfs://%s@%s%s%s%s", u->name, u->mon ? u->mon : "", u->root,
		 u->fs ? "?fs=" : "", u->fs ? u->fs : "");
	return 0;
}

void kaas_cephfs_url_free(struct kaas_cephfs_url *u)
{
	free(u->display);
	free(u->name);
	free(u->mon);
	free(u->root);
	free(u->fs);
	free(u->keyring);
	free(u->conf);
	memset(u, 0, sizeof *u);
	u->timeout_s = KAAS_CEPHFS_DEFAULT_TIMEOUT_S;
}
