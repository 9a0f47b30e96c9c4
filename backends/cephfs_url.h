/*
 * cephfs_url.h — parsing cephfs:// URLs for backends/cephfs.c:
 *   cephfs://[NAME@]MON[,MON...]/[PATH]?keyring=FILE[&fs=FS][&conf=FILE][&timeout=S]
 *   cephfs:///[PATH]?conf=FILE[&fs=FS][&keyring=FILE][&timeout=S]
 * NAME is the cephx client name without "client." (default "admin"); MON a
 * monitor's address (host:port, as Ceph's mon_host takes it), PATH the
 * directory inside the file system that becomes the substrate's root.
 * Without MON the monitors come from the conf file, which is then required.
 */
#ifndef KAAS_BACKEND_CEPHFS_URL_H
#define KAAS_BACKEND_CEPHFS_URL_H

#define KAAS_CEPHFS_DEFAULT_TIMEOUT_S 30

struct kaas_cephfs_url {
	char *display;  /* "cephfs://NAME@MON/PATH?fs=FS" (no keyring), for messages */
	char *name;     /* cephx client name, without "client." ("admin") */
	char *mon;      /* mon_host, or NULL (from the conf) */
	char *root;     /* "/PATH" inside the file system ("/" for its root; no trailing '/') */
	char *fs;       /* file system name, or NULL (the cluster's default one) */
	char *keyring;  /* keyring file, or NULL (the conf's, or Ceph's default) */
	char *conf;     /* ceph.conf to read first, or NULL (none is read) */
	int timeout_s;  /* mounting, and each monitor request (default 30) */
};

/* Parse url into *u.  Returns 0, -EINVAL with a detail naming the URL and
 * the problem (not cephfs://, neither a monitor nor conf=, a bad name, an
 * unknown argument, a bad number, a relative file name, "." or ".." in
 * PATH), or -ENOMEM.  On failure too, free with kaas_cephfs_url_free. */
int kaas_cephfs_url_parse(const char *url, struct kaas_cephfs_url *u);

/* Release what kaas_cephfs_url_parse allocated (not u itself). */
void kaas_cephfs_url_free(struct kaas_cephfs_url *u);

#endif
