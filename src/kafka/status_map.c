/* status_map.c — kaas statuses to Kafka error codes (see status_map.h). */
#include "kafka/status_map.h"

#include "kafka/protocol.h"
#include "util/status.h"

int16_t kaas_kafka_error(int rc, int16_t otherwise)
{
	if (rc >= 0)
		return KAAS_KERR_NONE;
	if (!KAAS_IS_STATUS(rc))
		return otherwise;
	switch (rc) {
	case KAAS_EFENCED:
	case KAAS_ENOTLEADER:
		return KAAS_KERR_NOT_LEADER_OR_FOLLOWER;
	case KAAS_EOFFLINE:
		return KAAS_KERR_LEADER_NOT_AVAILABLE;
	case KAAS_ESEQDUP:
		return KAAS_KERR_DUPLICATE_SEQUENCE_NUMBER;
	case KAAS_ESEQORDER:
		return KAAS_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
	case KAAS_ESEQGAP:
		return KAAS_KERR_NOT_ENOUGH_REPLICAS;
	case KAAS_EPRODFENCED:
		return KAAS_KERR_INVALID_PRODUCER_EPOCH;
	case KAAS_EPRODUNKNOWN:
		return KAAS_KERR_UNKNOWN_PRODUCER_ID;
	case KAAS_EBADBATCH:
		return KAAS_KERR_INVALID_RECORD;
	case KAAS_EINDOUBT:
		return KAAS_KERR_REQUEST_TIMED_OUT;
	default:
		return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
}
