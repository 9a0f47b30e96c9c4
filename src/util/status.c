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
	default:
		return KAAS_IS_STATUS(rc) ? "unknown kaas status" : strerror(-rc);
	}
}
