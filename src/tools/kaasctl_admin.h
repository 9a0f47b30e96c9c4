/*
 * kaasctl_admin.h — kaasctl's broker commands (topic, group, cluster, txn): what
 * their files share.  Everything goes through the Kafka protocol
 * (kaasctl_client.h), so the commands work against any Kafka broker.
 *
 *   kaasctl [--bootstrap HOST:PORT] [--command-config FILE] [--json]
 *           topic|group|cluster ...
 *
 * Exit statuses as kaasctl's others: 0 done, 2 the command could not run
 * or the broker refused it (its error code's name, meaning and message on
 * stderr).
 */
#ifndef KAAS_TOOLS_KAASCTL_ADMIN_H
#define KAAS_TOOLS_KAASCTL_ADMIN_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "tools/kaasctl_client.h"

struct kctl_admin {
	struct kctl_client_cfg cfg;
	char host[256];               /* --bootstrap */
	int port;
	struct kctl_conn boot;        /* open while the command runs */
	int json;
};

/* Is name one of the broker commands (topic, group, cluster, txn)? */
int kctl_admin_is_command(const char *name);

/* Is the command of kaasctl's argv (its first word not an option or an
 * option's value) a broker command?  `user` and `acl` are only after
 * --bootstrap (without it, the volume's commands of those names). */
int kctl_admin_wants(int argc, char **argv);

/* kaasctl's main for a broker command: argv as main's (global options
 * anywhere).  Returns the exit status. */
int kctl_admin_main(int argc, char **argv);

/* Print "kaasctl: WHAT: NAME: message" (or NAME: meaning when the broker
 * sent no message) for a Kafka error code; returns KCTL_EXIT_ERROR. */
struct kaas_kslice;
int kctl_admin_kerr(const char *what, int16_t code, const struct kaas_kslice *msg);

/* Open a connection to another broker of the cluster with the bootstrap's
 * settings: 0, or KCTL_EXIT_ERROR with the reason printed. */
int kctl_admin_dial(struct kctl_admin *a, const char *host, int port, struct kctl_conn *c);

/* FindCoordinator for key (key_type 0: a group, 1: a transactional id),
 * then a connection to the coordinator: 0 with *c open and its id in
 * *node, or KCTL_EXIT_ERROR (printed).  c is closed on failure. */
int kctl_admin_coordinator(struct kctl_admin *a, const char *key, int8_t key_type,
			   struct kctl_conn *c, int32_t *node);

/* Metadata, as read from one answer. */
struct kctl_md_part {
	int32_t id, leader, leader_epoch;
	int16_t err;
	int32_t nreplicas, nisr;
	int32_t *replicas, *isr;      /* malloc'd */
};
struct kctl_md_topic {
	char *name;
	int16_t err;
	int internal;
	int32_t nparts;
	struct kctl_md_part *parts;   /* sorted by id */
};
struct kctl_md_broker {
	int32_t id, port;
	char *host, *rack;            /* rack may be NULL */
};
struct kctl_md {
	char *cluster_id;             /* may be NULL */
	int32_t controller;
	int32_t nbrokers, ntopics;
	struct kctl_md_broker *brokers; /* sorted by id */
	struct kctl_md_topic *topics;   /* sorted by name */
};

/* Ask Metadata of c for the topics named (ntopics < 0: every topic),
 * never creating one: 0 and *md (kctl_md_free), or KCTL_EXIT_ERROR with the
 * reason printed. */
int kctl_metadata(struct kctl_conn *c, const char *const *topics, int ntopics, struct kctl_md *md);
void kctl_md_free(struct kctl_md *md);
const struct kctl_md_broker *kctl_md_broker(const struct kctl_md *md, int32_t id);
const struct kctl_md_topic *kctl_md_topic(const struct kctl_md *md, const char *name);

/* ListOffsets (timestamp -1: the log end, -2: the log start) for partitions
 * parts[0..n) of topic, each asked of its leader in md: 0 with out[i] set
 * (-1 where that partition answered an error, printed), or KCTL_EXIT_ERROR
 * (a leader unreachable). */
int kctl_list_offsets(struct kctl_admin *a, const struct kctl_md *md, const char *topic,
		      const int32_t *parts, int n, int64_t ts, int64_t *out);

/* The commands (argv[0] the command word). */
int kctl_admin_topic(struct kctl_admin *a, int argc, char **argv);
int kctl_admin_group(struct kctl_admin *a, int argc, char **argv);
int kctl_admin_cluster(struct kctl_admin *a, int argc, char **argv);
int kctl_admin_txn(struct kctl_admin *a, int argc, char **argv);
int kctl_admin_user(struct kctl_admin *a, int argc, char **argv);
int kctl_admin_acl(struct kctl_admin *a, int argc, char **argv);

#endif
