/*
 * doc.h — versioned, checksummed JSON documents on the shared volume.
 *
 * On disk a document is two lines of JSON:
 *
 *   {"kaas":"<kind>","version":<v>,"length":<n>,"crc32c":"<8 hex>"}
 *   <body: n bytes of JSON, the CRC32C covers exactly these bytes>
 *
 * The header lets a reader tell a torn or corrupt file (length or CRC
 * mismatch, unparsable header) from an intact one before it trusts a single
 * field of the body.  Documents are written only with kaas_replace, so a
 * reader sees a whole old or whole new document; a failed check therefore
 * means real corruption (or a substrate that broke the contract) and is
 * reported as an error naming the file — never as an empty default.
 *
 * Numbers: cJSON keeps numbers as doubles; integers up to 2^53 are exact.
 * Use kaas_json_get_u64/i64, which refuse non-integers and values out of
 * range, for offsets, epochs and ids.
 */
#ifndef KAAS_DOC_H
#define KAAS_DOC_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "substrate/substrate.h"

/* Largest document kaas will read (manifests of huge partitions included). */
#define KAAS_DOC_MAX_BYTES (64u << 20)

/* Serialise `body` and replace `path` with a document of `kind`/`version`.
 * Returns 0 or -errno (see kaas_replace). */
int kaas_doc_write(struct kaas_substrate *sub, const char *path, const char *kind, int version,
		   const cJSON *body);
/* The same with the file's permission bits (kaas_doc_write: 0644). */
int kaas_doc_write_mode(struct kaas_substrate *sub, const char *path, const char *kind,
			int version, const cJSON *body, uint32_t mode);

/* Read and verify `path`.  On success returns 0, *body is the parsed body
 * (free with cJSON_Delete) and *version the stored format version.
 * Errors: -ENOENT (no such document: the only "absent" answer), -EBADMSG
 * (torn or corrupt: bad header, wrong length, CRC mismatch, body not JSON,
 * or a different kind), -EFBIG, or the substrate's -errno.  The detail names
 * the file and what failed.  A version above max_version is -EPROTO (written
 * by a newer kaas; never guessed at). */
int kaas_doc_read(struct kaas_substrate *sub, const char *path, const char *kind,
		  int max_version, cJSON **body, int *version);

/* Encode a document into memory (for tests and tools): malloc'd bytes. */
int kaas_doc_encode(const char *kind, int version, const cJSON *body, char **out, size_t *len);
/* Decode and verify in-memory bytes; `name` is used in error details. */
int kaas_doc_decode(const char *name, const char *buf, size_t len, const char *kind,
		    int max_version, cJSON **body, int *version);

/* Typed getters: 0 and *out, -ENOENT if the member is absent, -EINVAL if it
 * is not an integer in range. */
int kaas_json_get_u64(const cJSON *obj, const char *name, uint64_t *out);
int kaas_json_get_i64(const cJSON *obj, const char *name, int64_t *out);
/* Add an integer member (exact below 2^53; -ERANGE above). */
int kaas_json_add_u64(cJSON *obj, const char *name, uint64_t v);
int kaas_json_add_i64(cJSON *obj, const char *name, int64_t v);

#endif
