/* doc.c — versioned, CRC32C-checked JSON documents. */
#include "contract/doc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "util/crc32c.h"

int kaas_doc_encode(const char *kind, int version, const cJSON *body, char **out, size_t *len)
{
	char *b = cJSON_PrintUnformatted(body);
	if (!b)
		return -ENOMEM;
	size_t bl = strlen(b);
	uint32_t crc = kaas_crc32c(0, b, bl);
	char head[256];
	int hl = snprintf(head, sizeof head,
			  "{\"kaas\":\"%s\",\"version\":%d,\"length\":%zu,\"crc32c\":\"%08" PRIx32 "\"}\n",
			  kind, version, bl, crc);
	if (hl < 0 || (size_t)hl >= sizeof head) {
		free(b);
		return -EINVAL;
	}
	char *o = malloc((size_t)hl + bl + 2);
	if (!o) {
		free(b);
		return -ENOMEM;
	}
	memcpy(o, head, (size_t)hl);
	memcpy(o + hl, b, bl);
	o[hl + bl] = '\n';
	o[hl + bl + 1] = '\0';
	free(b);
	*out = o;
	*len = (size_t)hl + bl + 1;
	return 0;
}

int kaas_doc_decode(const char *name, const char *buf, size_t len, const char *kind,
		    int max_version, cJSON **body, int *version)
{
	*body = NULL;
	const char *nl = memchr(buf, '\n', len);
	if (!nl)
		return kaas_sub_fail(EBADMSG, "%s: corrupt document: no header line (torn or not a kaas document)", name);
	cJSON *h = cJSON_ParseWithLength(buf, (size_t)(nl - buf));
	if (!h)
		return kaas_sub_fail(EBADMSG, "%s: corrupt document: header is not JSON", name);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(h, "kaas");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(h, "crc32c");
	uint64_t blen, ver;
	int rc = 0;
	if (!cJSON_IsString(k) || !cJSON_IsString(c) || kaas_json_get_u64(h, "length", &blen) < 0 ||
	    kaas_json_get_u64(h, "version", &ver) < 0) {
		rc = kaas_sub_fail(EBADMSG, "%s: corrupt document: header lacks kaas/version/length/crc32c", name);
		goto out;
	}
	if (strcmp(k->valuestring, kind) != 0) {
		rc = kaas_sub_fail(EBADMSG, "%s: is a '%s' document, expected '%s'", name, k->valuestring, kind);
		goto out;
	}
	if (ver > (uint64_t)max_version) {
		rc = kaas_sub_fail(EPROTO, "%s: format version %" PRIu64 " is newer than this kaas reads (%d)",
				   name, ver, max_version);
		goto out;
	}
	const char *b = nl + 1;
	size_t avail = len - (size_t)(b - buf);
	/* The body is followed by one newline. */
	if (avail != blen + 1 || b[blen] != '\n') {
		rc = kaas_sub_fail(EBADMSG, "%s: corrupt document: body is %zu bytes, header says %" PRIu64 " (torn write?)",
				   name, avail ? avail - 1 : 0, blen);
		goto out;
	}
	char want[16];
	snprintf(want, sizeof want, "%08" PRIx32, kaas_crc32c(0, b, (size_t)blen));
	if (strcmp(want, c->valuestring) != 0) {
		rc = kaas_sub_fail(EBADMSG, "%s: corrupt document: CRC32C %s, header says %s", name, want,
				   c->valuestring);
		goto out;
	}
	*body = cJSON_ParseWithLength(b, (size_t)blen);
	if (!*body) {
		rc = kaas_sub_fail(EBADMSG, "%s: corrupt document: body is not JSON", name);
		goto out;
	}
	if (version)
		*version = (int)ver;
out:
	cJSON_Delete(h);
	return rc;
}

int kaas_doc_write(struct kaas_substrate *sub, const char *path, const char *kind, int version,
		   const cJSON *body)
{
	return kaas_doc_write_mode(sub, path, kind, version, body, 0644);
}

int kaas_doc_write_mode(struct kaas_substrate *sub, const char *path, const char *kind,
			int version, const cJSON *body, uint32_t mode)
{
	char *buf;
	size_t len;
	int rc = kaas_doc_encode(kind, version, body, &buf, &len);
	if (rc < 0)
		return kaas_sub_fail(rc, "%s: cannot encode document", path);
	rc = kaas_replace_mode(sub, path, buf, len, mode);
	free(buf);
	return rc;
}

int kaas_doc_read(struct kaas_substrate *sub, const char *path, const char *kind,
		  int max_version, cJSON **body, int *version)
{
	*body = NULL;
	char *buf;
	size_t len;
	int rc = kaas_sub_read_all(sub, path, KAAS_DOC_MAX_BYTES, &buf, &len);
	if (rc < 0)
		return rc;
	rc = kaas_doc_decode(path, buf, len, kind, max_version, body, version);
	free(buf);
	return rc;
}

#define EXACT_MAX 9007199254740992.0 /* 2^53 */

int kaas_json_get_u64(const cJSON *obj, const char *name, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v)
		return -ENOENT;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > EXACT_MAX ||
	    floor(v->valuedouble) != v->valuedouble)
		return -EINVAL;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

int kaas_json_get_i64(const cJSON *obj, const char *name, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v)
		return -ENOENT;
	if (!cJSON_IsNumber(v) || v->valuedouble < -EXACT_MAX || v->valuedouble > EXACT_MAX ||
	    floor(v->valuedouble) != v->valuedouble)
		return -EINVAL;
	*out = (int64_t)v->valuedouble;
	return 0;
}

int kaas_json_add_u64(cJSON *obj, const char *name, uint64_t v)
{
	if ((double)v > EXACT_MAX)
		return -ERANGE;
	return cJSON_AddNumberToObject(obj, name, (double)v) ? 0 : -ENOMEM;
}

int kaas_json_add_i64(cJSON *obj, const char *name, int64_t v)
{
	if ((double)v > EXACT_MAX || (double)v < -EXACT_MAX)
		return -ERANGE;
	return cJSON_AddNumberToObject(obj, name, (double)v) ? 0 : -ENOMEM;
}
