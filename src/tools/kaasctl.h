/*
 * kaasctl.h — what the kaasctl commands share: the volumes (opened as kaasd
 * opens them, from the same --data / --cluster-dir / --config options),
 * output helpers (tables for people, JSON for scripts) and the topic list.
 *
 * Exit statuses: 0 done (verify: clean, warnings allowed), 1 verify found
 * corruption, 2 the command could not run (bad usage, a bad URL, an
 * unreachable server, a missing topic); the message on stderr says which.
 * Every command only reads the volume, but `user add` and `user delete`
 * (kaasctl_user.c), which write SASL credentials in the cluster directory,
 * and `acl add` and `acl remove` (kaasctl_acl.c), which write ACL bindings.
 */
#ifndef KAAS_TOOLS_KAASCTL_H
#define KAAS_TOOLS_KAASCTL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "broker/config.h"
#include "cluster/topic_store.h"
#include "substrate/substrate.h"

#define KCTL_EXIT_OK 0
#define KCTL_EXIT_CORRUPT 1
#define KCTL_EXIT_ERROR 2

struct kctl {
	struct kaas_config cfg;           /* data_url, cluster_url, coordinator_slots */
	struct kaas_substrate *data;
	struct kaas_substrate *cluster;
	char *cluster_url;                /* the URL opened for the cluster directory */
	int json;                         /* --json */
};

/* Print "kaasctl: <message>" on stderr; returns KCTL_EXIT_ERROR. */
int kctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Open the data volume and the cluster directory from k->cfg (the cluster
 * directory: --cluster-dir, $KAAS_CLUSTER_DIR, else <data>/__cluster, as
 * kaasd).  Creates nothing.  0, or KCTL_EXIT_ERROR with the reason printed
 * (a bad URL, a missing directory, an unreachable server). */
int kctl_open(struct kctl *k);
void kctl_close(struct kctl *k);

/* Print a JSON document (pretty, one trailing newline) and free it.  NULL
 * (out of memory while building it): an error. */
int kctl_json_emit(cJSON *root);

/* Bytes as printable ASCII: printable bytes kept, '\\' and '"' escaped,
 * others as \n, \t, \r or \xNN.  malloc'd (NULL: out of memory). */
char *kctl_escape(const void *p, size_t n);

/* Add key: s to o as is when it is valid UTF-8 (so the JSON output stays
 * well-formed whatever bytes a client put in a name), else as kctl_escape
 * text.  0 or -ENOMEM. */
int kctl_add_text(cJSON *o, const char *key, const char *s);

/* The topics the cluster directory lists. */
struct kctl_topic {
	char name[256];
	int rc;                        /* 0, or kaas_topic_doc_read's -errno */
	struct kaas_topic_doc doc;
	char id[33];                   /* the incarnation id in hex */
};

/* Every topic document (sorted by name), unreadable ones with rc set.
 * 0 and *out (free()), or -errno (detail printed by the caller). */
int kctl_topics(struct kctl *k, struct kctl_topic **out, size_t *n);

/* A number member of o as text ("%.0f"), or "-" when it is absent or
 * null; buf is returned. */
const char *kctl_num_text(const cJSON *o, const char *key, char buf[32]);

/* Add to o the leader of slot (topic, p) in the assignment as members
 * leader_key and epoch_key (both null when the slot has no leader, or as
 * is NULL). */
struct kaas_assignment;
void kctl_add_leader(cJSON *o, const struct kaas_assignment *as, const char *topic, int32_t p,
		     const char *leader_key, const char *epoch_key);

/* Parse a command's arguments when its one option is --NAME VALUE and it
 * takes no others: 0 and *value (left as it was when the option is
 * absent), or KCTL_EXIT_ERROR with the usage line printed. */
int kctl_one_option(int argc, char **argv, const char *name, const char **value,
		    const char *usage);

/* The partition directory "<topic>/<p>" in buf. */
void kctl_part_dir(char *buf, size_t size, const char *topic, int32_t p);

/* Commands: each returns an exit status. argv[0] is the command name. */
int kctl_cmd_status(struct kctl *k, int argc, char **argv);
int kctl_cmd_groups(struct kctl *k, int argc, char **argv);
int kctl_cmd_verify(struct kctl *k, int argc, char **argv);
int kctl_cmd_dump_log(struct kctl *k, int argc, char **argv);
int kctl_cmd_trash(struct kctl *k, int argc, char **argv);
int kctl_cmd_user(struct kctl *k, int argc, char **argv);
int kctl_cmd_acl(struct kctl *k, int argc, char **argv); /* writes: acl add/remove */

#endif
