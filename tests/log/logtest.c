/* logtest.c — helpers shared by the partition log tests. */
#include "tests/log/logtest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "tests/support/testdir.h"
#include "util/crc32c.h"

int lt_env_init(struct lt_env *e, const char *tag)
{
	memset(e, 0, sizeof *e);
	const char *u = getenv("KAAS_TEST_URL");
	if (u && *u) {
		e->url = strdup(u);
	} else {
		e->tmpdir = kaas_testdir_make(tag);
		if (!e->tmpdir)
			return -errno;
		e->url = strdup(e->tmpdir);
	}
	snprintf(e->top, sizeof e->top, "logtest-%s-%ld", tag, (long)getpid());
	snprintf(e->dir, sizeof e->dir, "%s/0", e->top);
	return e->url ? 0 : -ENOMEM;
}

void lt_env_fini(struct lt_env *e)
{
	struct kaas_substrate *s = NULL;
	if (e->url && kaas_substrate_open(e->url, &s) == 0) {
		kaas_remove_tree(s, e->top, NULL);
		kaas_substrate_close(s);
	}
	if (e->tmpdir)
		kaas_testdir_remove(e->tmpdir);
	free(e->url);
	memset(e, 0, sizeof *e);
}

struct kaas_substrate *lt_sub(struct lt_env *e)
{
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(e->url, &s);
	if (rc < 0) {
		fprintf(stderr, "cannot open substrate %s: %s\n", e->url, kaas_sub_errdetail());
		abort();
	}
	return s;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

unsigned char *lt_batch(size_t payload, uint32_t records, int64_t ts, int64_t pid, int16_t pep,
			int32_t seq, uint32_t seed, size_t *len)
{
	size_t n = KAAS_BATCH_HEADER_LEN + payload;
	unsigned char *b = calloc(1, n);
	if (!b)
		abort();
	put64(b, 0);
	put32(b + 8, (uint32_t)(n - 12));
	put32(b + 12, 0);
	b[16] = 2;
	b[21] = 0;
	b[22] = 0; /* attributes */
	put32(b + 23, records - 1);
	put64(b + 27, (uint64_t)ts);
	put64(b + 35, (uint64_t)ts);
	put64(b + 43, (uint64_t)pid);
	b[51] = (unsigned char)((uint16_t)pep >> 8);
	b[52] = (unsigned char)pep;
	put32(b + 53, (uint32_t)seq);
	put32(b + 57, records);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < payload; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[KAAS_BATCH_HEADER_LEN + i] = (unsigned char)x;
	}
	put32(b + 17, kaas_crc32c(0, b + 21, n - 21));
	*len = n;
	return b;
}

struct kaas_log_batch lt_desc(const unsigned char *buf, size_t len)
{
	struct kaas_batch_header h;
	kaas_batch_parse_header(buf, len, &h);
	return (struct kaas_log_batch){ .data = buf, .len = len,
					.record_count = (uint32_t)h.last_offset_delta + 1,
					.max_timestamp = h.max_timestamp, .producer_id = h.producer_id,
					.producer_epoch = h.producer_epoch,
					.base_sequence = h.base_sequence };
}

void lt_patch(unsigned char *buf, int64_t base, uint32_t epoch)
{
	put64(buf, (uint64_t)base);
	put32(buf + 12, epoch);
}

int lt_fx_setup(void **state, const char *tag)
{
	struct lt_fx *f = calloc(1, sizeof *f);
	if (!f || lt_env_init(&f->env, tag) < 0) {
		free(f);
		return -1;
	}
	f->sub = lt_sub(&f->env);
	*state = f;
	return 0;
}

int lt_fx_teardown(void **state)
{
	struct lt_fx *f = *state;
	kaas_substrate_close(f->sub);
	lt_env_fini(&f->env);
	free(f);
	return 0;
}

struct kaas_log_config lt_small_cfg(void)
{
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 4096;
	c.index_interval_bytes = 256;
	c.checkpoint_bytes = 2048;
	return c;
}
