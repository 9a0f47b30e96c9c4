/* security.c — the authorizer hook of security.h (allows every request
 * until SASL and ACLs arrive). */
#include "kafka/security.h"

#include <stddef.h>

int kaas_security_admit(const struct kaas_conn_security *sec, const struct kaas_req *req)
{
	(void)sec;
	(void)req;
	return 1;
}
