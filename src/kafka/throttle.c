/* throttle.c — a request's throttle time (kafka/throttle.h). */
#include "kafka/throttle.h"

#include <string.h>

#include "broker/broker.h"
#include "broker/quotas.h"
#include "kafka/security.h"

/* The request's user (principal name) and client id ("" for null). */
static const char *who(struct kaas_req *req, char client[KAAS_QUOTA_NAME_MAX + 1])
{
	const struct kaas_conn_security *sec = req->conn ? kaas_conn_security(req->conn) : NULL;
	const char *user = sec && sec->principal[0] ? sec->principal : KAAS_PRINCIPAL_ANONYMOUS;
	if (strncmp(user, "User:", 5) == 0)
		user += 5;
	struct kaas_kslice id = req->hdr.client_id;
	size_t n = id.len > 0 ? (size_t)id.len : 0;
	if (n > KAAS_QUOTA_NAME_MAX)
		n = KAAS_QUOTA_NAME_MAX;
	memcpy(client, n ? id.p : (const void *)"", n);
	client[n] = '\0';
	return user;
}

int32_t kaas_req_throttle(struct kaas_req *req, int key, double value)
{
	struct kaas_broker *b = req->broker;
	if (!b || !kaas_quotas_any(b->quotas, key))
		return 0; /* nobody is limited: no strings, no locks */
	char client[KAAS_QUOTA_NAME_MAX + 1];
	const char *user = who(req, client);
	uint32_t t = kaas_quotas_record(b->quotas, key, user, client, value, kaas_now_ms());
	if (t > req->throttle_ms)
		req->throttle_ms = t;
	return (int32_t)t;
}

void kaas_req_unrecord(struct kaas_req *req, int key, double value)
{
	struct kaas_broker *b = req->broker;
	if (!b || !kaas_quotas_any(b->quotas, key))
		return;
	char client[KAAS_QUOTA_NAME_MAX + 1];
	const char *user = who(req, client);
	kaas_quotas_unrecord(b->quotas, key, user, client, value, kaas_now_ms());
}

double kaas_req_quota_window_max(struct kaas_req *req, int key)
{
	struct kaas_broker *b = req->broker;
	if (!b || !kaas_quotas_any(b->quotas, key))
		return 0;
	char client[KAAS_QUOTA_NAME_MAX + 1];
	const char *user = who(req, client);
	return kaas_quotas_window_max(b->quotas, key, user, client);
}
