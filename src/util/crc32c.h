/*
 * crc32c.h — CRC-32C (Castagnoli), as Kafka's RecordBatch v2 and kaas's
 * documents use it.  Uses the SSE4.2 instruction when the CPU has it, a
 * table otherwise; both give the same answer.
 */
#ifndef KAAS_CRC32C_H
#define KAAS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extend `crc` (0 to start) over buf[0..len).  crc32c("123456789") == 0xe3069283. */
uint32_t kaas_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
