/* api_versions.c — ApiVersions 0..4 (v3+ flexible), answered from the API
 * table (api_table.c). */
#include "kafka/protocol.h"
#include "kafka/request.h"

int kaas_api_versions(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	int unsupported = !kaas_api_supported(KAAS_API_API_VERSIONS, v);
	/* KIP-511: an unsupported version is answered in v0 format, so that
	 * the client learns the range and retries with one it knows. */
	int flex = req->hdr.flex;
	if (flex) {
		(void)kaas_kr_str(&req->r, 1); /* client_software_name */
		(void)kaas_kr_str(&req->r, 1); /* client_software_version */
		kaas_kr_tags(&req->r, 1);
		/* A malformed v3 body is answered, not fatal: librdkafka may retry
		 * with a lower version. */
	}
	kaas_kw_i16(w, unsupported ? KAAS_KERR_UNSUPPORTED_VERSION : KAAS_KERR_NONE);
	int n = 0;
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++)
		n++;
	kaas_kw_array(w, flex, n);
	for (const struct kaas_api_range *a = kaas_api_table; a->key >= 0; a++) {
		kaas_kw_i16(w, a->key);
		kaas_kw_i16(w, a->min);
		kaas_kw_i16(w, a->max);
		kaas_kw_tags(w, flex);
	}
	if (!unsupported && v >= 1)
		kaas_kw_i32(w, 0); /* throttle_time_ms */
	kaas_kw_tags(w, flex);
	return KAAS_REQ_RESPOND;
}
