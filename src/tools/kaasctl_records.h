/* kaasctl_records.h — a stored batch as JSON (kaasctl_records.c). */
#ifndef KAAS_TOOLS_KAASCTL_RECORDS_H
#define KAAS_TOOLS_KAASCTL_RECORDS_H

#include "tools/kaasctl.h"

/* The batch b[0..len) (as stored, at file position pos) as an object:
 * header fields (base_offset, last_offset, position, size,
 * partition_leader_epoch, record_count, compression, timestamp_type,
 * base/max_timestamp, producer_id/epoch, base_sequence, transactional,
 * control, crc_ok) and "records": [{offset, timestamp, key, value, headers:
 * [{key, value}], control?}] for the records at offsets >= from.  Keys and
 * values are escaped text (kctl_escape), null when null.  A problem is in
 * "error".  NULL: out of memory. */
cJSON *kctl_batch_json(const unsigned char *b, size_t len, uint64_t pos, int64_t from);

#endif
