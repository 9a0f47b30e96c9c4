/*
 * kaasctl_verify.h — the parts of `kaasctl verify` (kaasctl_verify*.c): a
 * report of findings, each with a severity, a kind, the volume and path it
 * is about and a sentence saying what is wrong (errors) or why it is there
 * and what removes it (warnings: transient state kaas cleans up itself).
 */
#ifndef KAAS_TOOLS_KAASCTL_VERIFY_H
#define KAAS_TOOLS_KAASCTL_VERIFY_H

#include "tools/kaasctl.h"

enum kv_severity { KV_WARNING, KV_ERROR };

struct kv_report {
	struct kctl *k;
	cJSON *findings;      /* array of {severity, kind, volume, path, detail} */
	unsigned errors, warnings;
	uint64_t segments, batches, documents; /* what was checked */
};

/* Add a finding on volume "data" or "cluster". */
void kv_add(struct kv_report *r, enum kv_severity sev, const char *volume, const char *path,
	    const char *kind, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* If `name` in `dir` is a leftover kaas or the NFS client makes (replace
 * temp, NFSv4 exclusive-create link name, NFS silly rename, a substrate
 * check's directory), report it as a warning saying what removes it and
 * return 1; else 0. */
int kv_leftover(struct kv_report *r, struct kaas_substrate *sub, const char *volume,
		const char *dir, const char *name);

/* Check the partition directory <topic>/<p> of the data volume. */
void kv_partition(struct kv_report *r, const char *pdir);

/* Check the documents of the cluster directory (only those of `topic` when
 * it is not NULL). */
void kv_cluster(struct kv_report *r, const char *topic);

/* Warn on a credential or ACL directory looser than 0700, or a document in
 * one looser than 0600 (kaasctl_verify_modes.c; backends with modes). */
void kv_secret_modes(struct kv_report *r);

#endif
