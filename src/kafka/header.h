/*
 * header.h — Kafka request headers v0..v2 and response headers v0..v1.
 *
 * Request header v0: api_key, api_version, correlation_id.  v1 adds
 * client_id (a classic nullable string, even in v2).  v2 (used by flexible
 * request versions) adds a tagged-field section.  Response header v0 is the
 * correlation id; v1 (flexible versions, except ApiVersions) adds tags.
 */
#ifndef KAAS_KAFKA_HEADER_H
#define KAAS_KAFKA_HEADER_H

#include <stdint.h>

#include "kafka/codec.h"

struct kaas_req_header {
	int16_t api_key;
	int16_t api_version;
	int32_t correlation_id;
	struct kaas_kslice client_id; /* len -1: null */
	int flex;               /* the body (and response) use flexible encoding */
	int resp_tags;          /* the response header carries a tag section */
};

/* Parse a request header from r (positioned at the frame's first byte).
 * Returns:
 *   0        header parsed; r is positioned at the body; flex/resp_tags set
 *            from kaas's API table (unknown keys and versions are parsed as
 *            header v1 so the caller can still answer them)
 *   -EBADMSG the header itself is malformed (close the connection)
 * api_key and correlation_id are filled whenever the first 8 bytes exist. */
int kaas_req_header_parse(struct kaas_kr *r, struct kaas_req_header *h);

#endif
