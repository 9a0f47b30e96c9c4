/* registry.c — opening a substrate from a URL. */
#include "substrate/substrate.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

extern const struct kaas_backend kaas_backend_posix;
#ifdef KAAS_WITH_NFS
extern const struct kaas_backend kaas_backend_nfs;
#endif
#ifdef KAAS_WITH_CEPHFS
extern const struct kaas_backend kaas_backend_cephfs;
#endif
extern const struct kaas_backend kaas_backend_fault;
/* Backends register here, one line each. */
static const struct kaas_backend *const builtin[] = {
	&kaas_backend_posix,
#ifdef KAAS_WITH_NFS
	&kaas_backend_nfs,
#endif
#ifdef KAAS_WITH_CEPHFS
	&kaas_backend_cephfs,
#endif
	&kaas_backend_fault,
	NULL,
};

/* The scheme of a URL: "fault" for fault+..., "xyz" for xyz://..., "file"
 * for a plain path. */
static void url_scheme(const char *url, char *out, size_t size)
{
	const char *plus = strchr(url, '+');
	const char *colon = strstr(url, "://");
	const char *end = NULL;
	if (plus && (!colon || plus < colon))
		end = plus;
	else if (colon)
		end = colon;
	if (!end || (size_t)(end - url) >= size) {
		snprintf(out, size, "file");
		return;
	}
	for (const char *p = url; p < end; p++)
		if (!isalnum((unsigned char)*p)) {
			snprintf(out, size, "file");
			return;
		}
	memcpy(out, url, (size_t)(end - url));
	out[end - url] = '\0';
}

static void default_host(char *host, size_t size)
{
	char name[256];
	if (gethostname(name, sizeof name) != 0)
		snprintf(name, sizeof name, "host");
	name[sizeof name - 1] = '\0';
	size_t j = 0;
	for (size_t i = 0; name[i] && j + 1 < size && j < 32; i++) {
		unsigned char c = (unsigned char)name[i];
		host[j++] = (isalnum(c) || c == '-') ? (char)c : '-';
	}
	host[j] = '\0';
	if (j == 0)
		snprintf(host, size, "host");
}

int kaas_substrate_open(const char *url, struct kaas_substrate **out)
{
	*out = NULL;
	if (!url || !*url)
		return kaas_sub_fail(EINVAL, "empty substrate URL");
	char scheme[32];
	url_scheme(url, scheme, sizeof scheme);
	for (size_t i = 0; builtin[i]; i++) {
		if (strcmp(builtin[i]->scheme, scheme) != 0)
			continue;
		struct kaas_substrate *sub = NULL;
		int rc = builtin[i]->open(url, &sub);
		if (rc < 0)
			return rc;
		if (!sub->url)
			sub->url = strdup(url);
		if (!sub->host[0])
			default_host(sub->host, sizeof sub->host);
		*out = sub;
		return 0;
	}
#ifndef KAAS_WITH_NFS
	if (strcmp(scheme, "nfs") == 0)
		return kaas_sub_fail(EPROTONOSUPPORT, "%s: this kaas was built --without-nfs: "
				     "nfs:// URLs need the libnfs backend (rebuild with libnfs-dev)", url);
#endif
#ifndef KAAS_WITH_CEPHFS
	if (strcmp(scheme, "cephfs") == 0)
		return kaas_sub_fail(EPROTONOSUPPORT, "%s: this kaas was built --without-cephfs: "
				     "cephfs:// URLs need the libcephfs backend (rebuild with libcephfs-dev)", url);
#endif
	char known[128] = "";
	for (size_t i = 0; builtin[i]; i++) {
		size_t used = strlen(known);
		snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", builtin[i]->scheme);
	}
	return kaas_sub_fail(EPROTONOSUPPORT, "%s: no substrate backend for scheme '%s' (built in: %s; "
			     "a plain path is a POSIX directory)", url, scheme, known);
}

void kaas_substrate_close(struct kaas_substrate *sub)
{
	if (!sub)
		return;
	char *url = sub->url;
	sub->ops->destroy(sub);
	free(url);
}
