/* wire_topics.c — topics[name, partitions[...]] (see wire_topics.h). */
#include "kafka/wire_topics.h"

#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "kafka/request.h"

int32_t kaas_wire_read_topics(struct kaas_kr *r, int16_t v, int flex,
			      const struct kaas_wire_topics_shape *s, void **out)
{
	*out = NULL;
	void *arr = NULL;
	/* A topic is at least a name (length) and a partition count. */
	int32_t nt = kaas_kr_array(r, flex, flex ? 3 : 6);
	if (!kaas_kr_ok(r) || nt < 0)
		return kaas_kr_ok(r) ? -1 : 0;
	if (!(arr = calloc((size_t)nt + 1, s->topic_size))) {
		kaas_kr_fail(r);
		return 0;
	}
	*out = arr;
	for (int32_t i = 0; i < nt; i++) {
		char *t = (char *)arr + (size_t)i * s->topic_size;
		struct kaas_kslice name = kaas_kr_str(r, flex);
		memcpy(t + s->name_at, &name, sizeof(name));
		int32_t np = kaas_kr_array(r, flex, s->min_part);
		char *parts = NULL;
		if (kaas_kr_ok(r) && np >= 0 && !(parts = calloc((size_t)np + 1, s->part_size)))
			kaas_kr_fail(r);
		if (!kaas_kr_ok(r) || np < 0) {
			kaas_kr_fail(r); /* a null partition array is malformed too */
			break;
		}
		memcpy(t + s->parts_at, &parts, sizeof(parts));
		memcpy(t + s->count_at, &np, sizeof(np));
		for (int32_t j = 0; j < np && kaas_kr_ok(r); j++) {
			s->read_part(r, v, flex, parts + (size_t)j * s->part_size);
			kaas_kr_tags(r, flex);
		}
		kaas_kr_tags(r, flex);
	}
	return nt;
}

void kaas_wire_write_topics(struct kaas_kw *w, int flex, const struct kaas_wire_topics_shape *s,
			    const void *topics, int32_t n,
			    void (*write_part)(struct kaas_kw *w, struct kaas_kslice topic,
					       const void *part, void *arg),
			    void *arg)
{
	kaas_kw_array(w, flex, n);
	for (int32_t i = 0; i < n; i++) {
		const char *t = (const char *)topics + (size_t)i * s->topic_size;
		struct kaas_kslice name;
		int32_t np;
		const char *parts;
		memcpy(&name, t + s->name_at, sizeof(name));
		memcpy(&np, t + s->count_at, sizeof(np));
		memcpy(&parts, t + s->parts_at, sizeof(parts));
		kaas_kw_strn(w, flex, name.p, name.len);
		kaas_kw_array(w, flex, np);
		for (int32_t j = 0; j < np; j++) {
			write_part(w, name, parts + (size_t)j * s->part_size, arg);
			kaas_kw_tags(w, flex);
		}
		kaas_kw_tags(w, flex);
	}
}

void kaas_wire_topics_set_error(void *topics, int32_t n, const struct kaas_wire_topics_shape *s,
				int16_t err)
{
	for (int32_t i = 0; i < n; i++) {
		char *t = (char *)topics + (size_t)i * s->topic_size;
		int32_t np;
		char *parts;
		memcpy(&np, t + s->count_at, sizeof(np));
		memcpy(&parts, t + s->parts_at, sizeof(parts));
		for (int32_t j = 0; j < np; j++)
			memcpy(parts + (size_t)j * s->part_size + s->err_at, &err, sizeof(err));
	}
}

int kaas_wire_topics_refused(struct kaas_req *req, void *topics, int32_t n,
			     const struct kaas_wire_topics_shape *s)
{
	if (!kaas_api_refused(req->hdr.api_key, req->hdr.api_version, kaas_conn_peer(req->conn)))
		return 0;
	kaas_wire_topics_set_error(topics, n, s, KAAS_KERR_UNSUPPORTED_VERSION);
	return 1;
}

void kaas_wire_topics_free(void *topics, int32_t n, const struct kaas_wire_topics_shape *s)
{
	for (int32_t i = 0; topics && i < n; i++) {
		void *parts;
		memcpy(&parts, (char *)topics + (size_t)i * s->topic_size + s->parts_at, sizeof(parts));
		free(parts);
	}
	free(topics);
}
