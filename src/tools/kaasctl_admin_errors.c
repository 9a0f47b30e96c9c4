/* kaasctl_admin_errors.c — Kafka error codes in words for kaasctl's broker
 * commands: the protocol's name of each code and a short meaning. */
#include <stdio.h>

#include "tools/kaasctl_client.h"

static const struct {
	int16_t code;
	const char *name;
	const char *meaning;
} errs[] = {
	{ -1, "UNKNOWN_SERVER_ERROR", "the broker failed unexpectedly" },
	{ 0, "NONE", "no error" },
	{ 1, "OFFSET_OUT_OF_RANGE", "the offset is outside the partition's log" },
	{ 3, "UNKNOWN_TOPIC_OR_PARTITION", "no such topic or partition" },
	{ 5, "LEADER_NOT_AVAILABLE", "the partition has no leader right now" },
	{ 6, "NOT_LEADER_OR_FOLLOWER", "this broker does not lead the partition" },
	{ 7, "REQUEST_TIMED_OUT", "the broker gave up waiting" },
	{ 14, "COORDINATOR_LOAD_IN_PROGRESS", "the coordinator is still loading" },
	{ 15, "COORDINATOR_NOT_AVAILABLE", "no coordinator is available" },
	{ 16, "NOT_COORDINATOR", "this broker is not the coordinator" },
	{ 17, "INVALID_TOPIC_EXCEPTION", "the topic name is not valid" },
	{ 22, "ILLEGAL_GENERATION", "the group's generation does not match" },
	{ 24, "INVALID_GROUP_ID", "the group id is not valid" },
	{ 25, "UNKNOWN_MEMBER_ID", "the member is not in the group" },
	{ 27, "REBALANCE_IN_PROGRESS", "the group is rebalancing" },
	{ 29, "TOPIC_AUTHORIZATION_FAILED", "not authorized for the topic" },
	{ 30, "GROUP_AUTHORIZATION_FAILED", "not authorized for the group" },
	{ 31, "CLUSTER_AUTHORIZATION_FAILED", "not authorized for the cluster" },
	{ 33, "UNSUPPORTED_SASL_MECHANISM", "the broker does not offer that SASL mechanism" },
	{ 34, "ILLEGAL_SASL_STATE", "a SASL request out of order" },
	{ 35, "UNSUPPORTED_VERSION", "the broker does not serve that version" },
	{ 36, "TOPIC_ALREADY_EXISTS", "the topic already exists" },
	{ 37, "INVALID_PARTITIONS", "the partition count is not valid" },
	{ 38, "INVALID_REPLICATION_FACTOR", "the replication factor is not valid" },
	{ 39, "INVALID_REPLICA_ASSIGNMENT", "the replica assignment is not valid" },
	{ 40, "INVALID_CONFIG", "a configuration key or value is not valid" },
	{ 41, "NOT_CONTROLLER", "this broker is not the controller" },
	{ 42, "INVALID_REQUEST", "the broker refused the request as malformed or not allowed" },
	{ 44, "POLICY_VIOLATION", "a broker policy refused the request" },
	{ 47, "INVALID_PRODUCER_EPOCH", "the producer's epoch is stale" },
	{ 48, "INVALID_TXN_STATE", "the transaction is not in a state that allows this" },
	{ 49, "INVALID_PRODUCER_ID_MAPPING", "the producer id is not the transactional id's" },
	{ 51, "CONCURRENT_TRANSACTIONS", "the transaction is completing; retry" },
	{ 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "not authorized for the transactional id" },
	{ 56, "KAFKA_STORAGE_ERROR", "the broker's storage failed" },
	{ 58, "SASL_AUTHENTICATION_FAILED", "wrong user name or password" },
	{ 68, "NON_EMPTY_GROUP", "the group still has members" },
	{ 69, "GROUP_ID_NOT_FOUND", "no such group" },
	{ 72, "LISTENER_NOT_FOUND", "the broker has no such listener" },
	{ 73, "TOPIC_DELETION_DISABLED", "topic deletion is disabled on the broker" },
	{ 86, "GROUP_SUBSCRIBED_TO_TOPIC", "the group's members consume the topic" },
	{ 91, "RESOURCE_NOT_FOUND", "no such resource" },
	{ 100, "UNKNOWN_TOPIC_ID", "no topic with that id" },
	{ 105, "TRANSACTIONAL_ID_NOT_FOUND", "no such transactional id" },
};

const char *kctl_kerr_name(int16_t code)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == code)
			return errs[i].name;
	static char buf[24];
	snprintf(buf, sizeof buf, "ERROR_%d", code);
	return buf;
}

const char *kctl_kerr_meaning(int16_t code)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == code)
			return errs[i].meaning;
	return "";
}
