/* status.c — messages for kaas's domain statuses and errnos. */
#include "util/status.h"

#include <string.h>

const char *kaas_strerror(int rc)
{
	switch (rc) {
	case KAAS_EFENCED:
		return "fenced: a newer owner holds a higher epoch";
	case KAAS_ENOTLEADER:
		return "not the leader";
	case KAAS_EOFFLINE:
		return "offline";
	case KAAS_EEXISTS:
		return "already exists";
	case KAAS_EUNKNOWN:
		return "unknown";
	case KAAS_EINVALNAME:
		return "invalid name";
	case KAAS_EINVALCOUNT:
		return "count out of range";
	case KAAS_ECONTENDED:
		return "contended: others kept winning the claims";
	case KAAS_EBADCONFIG:
		return "invalid configuration";
	case KAAS_ENOT_COORDINATOR:
		return "not the group's coordinator";
	case KAAS_ENO_COORDINATOR:
		return "the group's coordinator is not available";
	case KAAS_EUNKNOWN_MEMBER:
		return "unknown group member";
	case KAAS_EILLEGAL_GENERATION:
		return "not the group's generation";
	case KAAS_EREBALANCING:
		return "the group is rebalancing";
	case KAAS_EFENCED_INSTANCE:
		return "the static instance id belongs to a newer member";
	case KAAS_EMEMBER_ID_REQUIRED:
		return "member id required: join with the given one";
	case KAAS_EPROTOCOL_MISMATCH:
		return "no protocol shared with the group";
	case KAAS_EUNKNOWN_PARTITION:
		return "unknown topic or partition";
	case KAAS_EGROUP_NONEMPTY:
		return "the group has members";
	case KAAS_EGROUP_UNKNOWN:
		return "no such group";
	case KAAS_EGROUP_SUBSCRIBED:
		return "a member of the group subscribes to the topic";
	case KAAS_ESEQDUP:
		return "duplicate sequence: older than the producer's window";
	case KAAS_ESEQORDER:
		return "out of order sequence";
	case KAAS_ESEQGAP:
		return "sequence gap: an earlier batch of the producer is missing";
	case KAAS_EPRODFENCED:
		return "producer epoch superseded";
	case KAAS_EPRODUNKNOWN:
		return "unknown producer id";
	case KAAS_EBADBATCH:
		return "invalid producer fields in a batch";
	case KAAS_EINDOUBT:
		return "outcome not known yet: may be on the volume";
	case KAAS_ETXN_CONCURRENT:
		return "the previous transaction is still completing";
	case KAAS_ETXN_STATE:
		return "not allowed in the transaction's state";
	case KAAS_ETXN_PID_MAPPING:
		return "producer id not mapped to the transactional id";
	case KAAS_ETXN_TIMEOUT:
		return "transaction timeout out of range";
	case KAAS_ETXN_FENCED:
		return "producer fenced by a newer epoch of its transactional id";
	case KAAS_EUNSTABLE_OFFSET:
		return "a transactional offset commit is pending";
	case KAAS_ETXN_UNKNOWN:
		return "unknown transactional id";
	case KAAS_ETXN_COORD_FENCED:
		return "marker from a superseded transaction coordinator";
	default:
		return KAAS_IS_STATUS(rc) ? "unknown kaas status" : strerror(-rc);
	}
}
