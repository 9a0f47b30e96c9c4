/* header.c — request header parsing (the API table is api_table.c). */
#include "kafka/header.h"

#include <errno.h>
#include <stddef.h>

#include "kafka/protocol.h"

int kaas_req_header_parse(struct kaas_kr *r, struct kaas_req_header *h)
{
	h->api_key = kaas_kr_i16(r);
	h->api_version = kaas_kr_i16(r);
	h->correlation_id = kaas_kr_i32(r);
	h->client_id.p = NULL;
	h->client_id.len = -1;
	h->flex = 0;
	h->resp_tags = 0;
	if (!kaas_kr_ok(r))
		return -EBADMSG;
	int flex = kaas_api_flexible(h->api_key, h->api_version);
	/* ControlledShutdown v0 is the only header-v0 request; kaas does not
	 * serve it, so every request has a client id. */
	h->client_id = kaas_kr_nstr(r, 0);
	kaas_kr_tags(r, flex);
	if (!kaas_kr_ok(r))
		return -EBADMSG;
	h->flex = flex;
	h->resp_tags = flex && h->api_key != KAAS_API_API_VERSIONS;
	return 0;
}
