/*
 * wire_cluster.h — what Metadata, DescribeCluster, DescribeTopicPartitions
 * and the partition admin APIs answer alike: the brokers of the cluster,
 * the controller, a partition's leader, and the log of a partition this
 * broker leads.
 */
#ifndef KAAS_KAFKA_WIRE_CLUSTER_H
#define KAAS_KAFKA_WIRE_CLUSTER_H

#include <stdint.h>

struct kaas_broker;
struct kaas_kw;
struct kaas_log;
struct kaas_partition;
struct kaas_req;
struct kaas_topic;

/* Write the brokers array: [id, host, port, (rack: null, when with_rack),
 * tags], each broker at the address of the listener req came in on (a
 * broker without that listener is left out, as Kafka does).  0, or
 * -ENOMEM (nothing written). */
int kaas_wire_brokers(struct kaas_req *req, int flex, int with_rack);

/* The controller's broker id (this broker's when there is no cluster). */
int32_t kaas_wire_controller(struct kaas_broker *b);

/* A partition's leader and epoch: from the cluster assignment when there
 * is an agent (LEADER_NOT_AVAILABLE while unassigned), else this broker.
 * Returns the partition's error code. */
int16_t kaas_wire_part_leader(struct kaas_broker *b, const struct kaas_topic *tp,
			      const struct kaas_partition *p, int32_t *leader, int32_t *epoch);

/* The log of partition idx of tp (NULL: an unknown topic) when this broker
 * leads it and may answer for it: 0 and *log, else the error code —
 * UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (another broker leads
 * it, or this one is fenced: its view may be older than the new leader's),
 * KAFKA_STORAGE_ERROR (its log failed to open). */
int16_t kaas_wire_partition_log(struct kaas_broker *b, struct kaas_topic *tp, int32_t idx,
				struct kaas_log **log);

/* A sentence for a partition error code kaas_wire_partition_log answers
 * (NULL for none), for the APIs that carry an error message. */
const char *kaas_wire_partition_why(int16_t err);

#endif
