/* wire_cluster.c — see wire_cluster.h. */
#include "kafka/wire_cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/security.h"

/* Brokers listed in an answer, at most. */
#define MAX_BROKERS 256

int kaas_wire_brokers(struct kaas_req *req, int flex, int with_rack)
{
	struct kaas_broker *b = req->broker;
	struct kaas_broker_info *bl = malloc(MAX_BROKERS * sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	const struct kaas_conn_security *sec = kaas_conn_security(req->conn);
	const char *listener = sec ? sec->listener : NULL;
	size_t nb = 1;
	if (b->agent) {
		nb = kaas_agent_brokers(b->agent, bl, MAX_BROKERS);
	} else {
		memset(&bl[0], 0, sizeof(bl[0]));
		bl[0].id = b->cfg.broker_id;
		kaas_config_advertised(&b->cfg, &bl[0]);
	}
	const char *host[MAX_BROKERS];
	int32_t port[MAX_BROKERS];
	int32_t nshown = 0;
	for (size_t i = 0; i < nb; i++)
		if (kaas_broker_address(&bl[i], listener, &host[i], &port[i]) == 0)
			nshown++;
		else
			host[i] = NULL;
	struct kaas_kw *w = &req->w;
	kaas_kw_array(w, flex, nshown);
	for (size_t i = 0; i < nb; i++) {
		if (!host[i])
			continue;
		kaas_kw_i32(w, bl[i].id);
		kaas_kw_str(w, flex, host[i]);
		kaas_kw_i32(w, port[i]);
		if (with_rack)
			kaas_kw_str(w, flex, NULL); /* rack */
		kaas_kw_tags(w, flex);
	}
	free(bl);
	return 0;
}

int32_t kaas_wire_controller(struct kaas_broker *b)
{
	return b->agent ? kaas_agent_controller(b->agent) : b->cfg.broker_id;
}

int16_t kaas_wire_part_leader(struct kaas_broker *b, const struct kaas_topic *tp,
			      const struct kaas_partition *p, int32_t *leader, int32_t *epoch)
{
	*leader = b->cfg.broker_id;
	*epoch = p->log ? (int32_t)kaas_log_epoch(p->log) : -1;
	if (b->agent) {
		uint32_t e = 0;
		if (kaas_agent_leader(b->agent, tp->name, p->index, leader, &e) < 0) {
			*leader = -1;
			*epoch = -1;
			return KAAS_KERR_LEADER_NOT_AVAILABLE;
		}
		*epoch = (int32_t)e;
		if (*leader != b->cfg.broker_id)
			return KAAS_KERR_NONE;
	}
	return p->log || kaas_partition_not_led(p) ? KAAS_KERR_NONE : KAAS_KERR_KAFKA_STORAGE_ERROR;
}

int16_t kaas_wire_partition_log(struct kaas_broker *b, struct kaas_topic *tp, int32_t idx,
				struct kaas_log **log)
{
	*log = NULL;
	if (!tp || idx < 0 || idx >= tp->npart)
		return KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	if (kaas_agent_fenced(b->agent))
		return KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
	if (!(*log = tp->parts[idx].log))
		return kaas_partition_not_led(&tp->parts[idx]) ? KAAS_KERR_NOT_LEADER_OR_FOLLOWER
							       : KAAS_KERR_KAFKA_STORAGE_ERROR;
	return KAAS_KERR_NONE;
}

const char *kaas_wire_partition_why(int16_t err)
{
	switch (err) {
	case KAAS_KERR_NONE:
		return NULL;
	case KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION:
		return "this broker knows no such topic or partition";
	case KAAS_KERR_NOT_LEADER_OR_FOLLOWER:
		return "this broker does not lead the partition (now): ask its leader";
	case KAAS_KERR_KAFKA_STORAGE_ERROR:
		return "the partition's log is not open on this broker (the volume refused it)";
	}
	return "the partition's state could not be read";
}
