/* security.c — the authorizer hook of security.h: the SASL gate (only
 * ApiVersions and the SASL exchange before authentication and after a
 * session's end). */
#include "kafka/security.h"

#include <stddef.h>

#include "kafka/protocol.h"
#include "kafka/request.h"

int kaas_conn_sasl_listener(const struct kaas_conn_security *sec)
{
	return sec && (sec->protocol == KAAS_SEC_SASL_PLAINTEXT || sec->protocol == KAAS_SEC_SASL_SSL);
}

int kaas_security_admit(const struct kaas_conn_security *sec, const struct kaas_req *req)
{
	if (!kaas_conn_sasl_listener(sec))
		return 1;
	int16_t key = req->hdr.api_key;
	if (key == KAAS_API_API_VERSIONS || key == KAAS_API_SASL_HANDSHAKE ||
	    key == KAAS_API_SASL_AUTHENTICATE)
		return 1;
	if (!__atomic_load_n(&sec->authenticated, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t end = __atomic_load_n(&sec->session_end_ms, __ATOMIC_ACQUIRE);
	return end == 0 || req->start_ms < end;
}
