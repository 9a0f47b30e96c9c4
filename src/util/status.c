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
	default:
		return KAAS_IS_STATUS(rc) ? "unknown kaas status" : strerror(-rc);
	}
}
