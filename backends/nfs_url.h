/*
 * nfs_url.h — parsing nfs:// URLs for backends/nfs.c:
 *   nfs://SERVER/EXPORT[/SUBDIR]?version=3|4&nfsport=N&mountport=M
 *                               [&conns=C][&timeout=S][&uid=U&gid=G]
 * kaas's own arguments (conns, timeout) are taken out; the rest is checked
 * and kept, in order, in the URL handed to libnfs.
 */
#ifndef KAAS_BACKEND_NFS_URL_H
#define KAAS_BACKEND_NFS_URL_H

#define KAAS_NFS_MAX_CONNS 64
#define KAAS_NFS_DEFAULT_CONNS 4
#define KAAS_NFS_DEFAULT_TIMEOUT_S 10

struct kaas_nfs_url {
	char *root;      /* "nfs://server/export/path" (no query, no trailing '/'), for messages */
	char *liburl;    /* root + the arguments libnfs understands */
	int version;     /* 3 (default) or 4 */
	int timeout_ms;  /* per RPC (default 10 s) */
	unsigned maxconns; /* 1..KAAS_NFS_MAX_CONNS (default 4) */
	int nfsport, mountport; /* 0: not given (libnfs asks the portmapper) */
};

/* Parse url into *u.  Returns 0, -EINVAL with a detail naming the URL and
 * the problem (not nfs://, no server or export path, unknown argument, bad
 * number), or -ENOMEM.  On failure too, free with kaas_nfs_url_free (fields
 * not yet set are NULL/0). */
int kaas_nfs_url_parse(const char *url, struct kaas_nfs_url *u);

/* Release what kaas_nfs_url_parse allocated (not u itself). */
void kaas_nfs_url_free(struct kaas_nfs_url *u);

#endif
