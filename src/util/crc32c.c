/* crc32c.c — CRC-32C, hardware (SSE4.2) where the CPU has it, else tables. */
#include "util/crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static int have_sse42;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
		      table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
		      table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
							   size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t kaas_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, init_tables);
	crc = ~crc;
#if defined(__x86_64__)
	if (have_sse42)
		return ~crc_hw(crc, buf, len);
#endif
	return ~crc_table(crc, buf, len);
}
