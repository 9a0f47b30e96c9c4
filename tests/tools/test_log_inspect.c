/* test_log_inspect.c — log/log_inspect.h, the read-only view of a partition
 * kaasctl uses: while the leader has the log open (rolls included) it sees
 * the leader's high watermark and every batch in order, and it writes
 * nothing (the partition and fence directories list the same before and
 * after); after the leader closed, a flipped byte is a bad CRC at the right
 * offset; no directory is -ENOENT and a corrupt manifest -EBADMSG. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log/log.h"
#include "log/log_inspect.h"
#include "tests/log/logtest.h"

struct fx {
	struct lt_env env;
	struct kaas_substrate *sub;
	struct kaas_log *log;
	int64_t hwm;
	uint64_t bytes;
};

/* A log of 80 batches over several 4 KiB segments, left open. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || lt_env_init(&f->env, "inspect") < 0)
		return -1;
	f->sub = lt_sub(&f->env);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 4096;
	c.checkpoint_bytes = 2048;
	if (kaas_log_open(f->sub, f->env.dir, 1, &c, &f->log) != 0)
		return -1;
	for (uint32_t k = 0; k < 80; k++) {
		size_t len;
		unsigned char *b = lt_batch(60 + k * 13 % 300, 1 + k % 3, 1000 + k, -1, -1, -1, k + 1,
					    &len);
		struct kaas_log_batch d = lt_desc(b, len);
		int64_t off = kaas_log_append_sync(f->log, &d);
		free(b);
		if (off < 0)
			return -1;
		f->bytes += len;
	}
	f->hwm = kaas_log_high_watermark(f->log);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	kaas_log_close(f->log);
	kaas_substrate_close(f->sub);
	lt_env_fini(&f->env);
	free(f);
	return 0;
}

/* The names (and sizes) in dir, one string. */
static char *listing(struct kaas_substrate *sub, const char *dir)
{
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(sub, dir, &l), 0);
	size_t cap = 64 + l.n * 300, n = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	s[0] = '\0';
	for (size_t i = 0; i < l.n; i++) {
		char *p = kaas_path_join(dir, l.names[i]);
		struct kaas_stat st;
		assert_int_equal(kaas_sub_stat(sub, p, &st), 0);
		n += (size_t)snprintf(s + n, cap - n, "%s:%llu ", l.names[i],
				      (unsigned long long)st.size);
		free(p);
	}
	kaas_dirlist_free(&l);
	return s;
}

struct walk {
	int64_t next;
	uint64_t batches, bytes;
	int64_t first;
};

static int count_cb(void *arg, const struct kaas_log_inspect_seg *seg, uint64_t pos,
		    const unsigned char *batch, size_t len)
{
	struct walk *w = arg;
	struct kaas_batch_header h;
	(void)seg;
	(void)pos;
	assert_int_equal(kaas_batch_parse_header(batch, len, &h), 0);
	assert_true(kaas_batch_crc_ok(batch, len));
	if (w->first < 0)
		w->first = h.base_offset;
	else
		assert_int_equal(h.base_offset, w->next);
	w->next = h.base_offset + h.last_offset_delta + 1;
	w->batches++;
	w->bytes += len;
	return 0;
}

static void test_live_read_only(void **state)
{
	struct fx *f = *state;
	char fence[200];
	snprintf(fence, sizeof fence, "%s/fence", f->env.dir);
	char *dir_before = listing(f->sub, f->env.dir), *fence_before = listing(f->sub, fence);

	struct kaas_log_inspect li;
	assert_int_equal(kaas_log_inspect_open(f->sub, f->env.dir, &li), 0);
	assert_non_null(li.manifest);
	assert_int_equal(li.manifest_epoch, 1);
	assert_true(li.n >= 3); /* rolled */
	assert_int_equal(li.high_watermark, f->hwm);
	for (size_t i = 0; i + 1 < li.n; i++) {
		assert_true(li.segs[i].sealed);
		assert_true(li.segs[i].file_size >= (int64_t)li.segs[i].end);
		struct kaas_log_seg_check c;
		assert_int_equal(kaas_log_inspect_check_seg(f->sub, &li.segs[i], li.segs[i].end, &c), 0);
		assert_int_equal(c.bad_crc, 0);
		assert_int_equal(c.scanned_end, li.segs[i].end);
		assert_int_equal(c.next_offset, li.segs[i].next);
	}
	struct walk w = { .first = -1 };
	assert_int_equal(kaas_log_inspect_batches(f->sub, &li, 0, count_cb, &w), 0);
	assert_int_equal(w.first, 0);
	assert_int_equal(w.next, f->hwm);
	assert_int_equal(w.batches, 80);
	assert_int_equal(w.bytes, f->bytes);
	/* From inside a batch: that batch first. */
	struct walk w2 = { .first = -1 };
	assert_int_equal(kaas_log_inspect_batches(f->sub, &li, f->hwm - 1, count_cb, &w2), 0);
	assert_int_equal(w2.batches, 1);
	assert_true(w2.first <= f->hwm - 1);
	kaas_log_inspect_free(&li);

	char *dir_after = listing(f->sub, f->env.dir), *fence_after = listing(f->sub, fence);
	assert_string_equal(dir_before, dir_after);
	assert_string_equal(fence_before, fence_after);
	free(dir_before);
	free(dir_after);
	free(fence_before);
	free(fence_after);
	/* The leader is undisturbed: it still appends. */
	assert_int_equal(kaas_log_status(f->log), 0);
	size_t len;
	unsigned char *b = lt_batch(40, 1, 5000, -1, -1, -1, 99, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	assert_int_equal(kaas_log_append_sync(f->log, &d), f->hwm);
	free(b);
}

static void test_flipped_byte(void **state)
{
	struct fx *f = *state;
	assert_int_equal(kaas_log_close(f->log), 0);
	f->log = NULL;
	struct kaas_log_inspect li;
	assert_int_equal(kaas_log_inspect_open(f->sub, f->env.dir, &li), 0);
	const struct kaas_log_inspect_seg *s = &li.segs[0];
	/* The last byte of the segment's first batch: a record byte. */
	struct kaas_file *fh;
	unsigned char hdr[12], byte;
	assert_int_equal(kaas_sub_open(f->sub, s->path, KAAS_O_READ | KAAS_O_WRITE, 0, &fh), 0);
	assert_int_equal(kaas_sub_pread_full(fh, hdr, 12, 0), 12);
	uint64_t end = 12 + (((uint64_t)hdr[8] << 24) | ((uint64_t)hdr[9] << 16) |
			     ((uint64_t)hdr[10] << 8) | hdr[11]);
	assert_int_equal(kaas_sub_pread_full(fh, &byte, 1, end - 1), 1);
	byte ^= 0x40;
	assert_int_equal(kaas_sub_pwrite_full(fh, &byte, 1, end - 1), 0);
	kaas_sub_close(fh);
	struct kaas_log_seg_check c;
	assert_int_equal(kaas_log_inspect_check_seg(f->sub, s, s->end, &c), 0);
	assert_int_equal(c.bad_crc, 1);
	assert_int_equal(c.first_bad_offset, 0);
	assert_int_equal(c.first_bad_pos, 0);
	assert_int_equal(c.scanned_end, s->end); /* lengths still hold: the walk went on */
	kaas_log_inspect_free(&li);
}

static void test_missing_and_corrupt(void **state)
{
	struct fx *f = *state;
	struct kaas_log_inspect li;
	char none[200];
	snprintf(none, sizeof none, "%s/9", f->env.top);
	assert_int_equal(kaas_log_inspect_open(f->sub, none, &li), -ENOENT);
	kaas_log_inspect_free(&li);
	assert_int_equal(kaas_log_close(f->log), 0);
	f->log = NULL;
	assert_int_equal(kaas_log_inspect_open(f->sub, f->env.dir, &li), 0);
	char *m = strdup(li.manifest);
	kaas_log_inspect_free(&li);
	/* One body byte changed: the document's CRC no longer matches. */
	char *buf;
	size_t len;
	assert_int_equal(kaas_sub_read_all(f->sub, m, 1 << 20, &buf, &len), 0);
	struct kaas_file *fh;
	assert_int_equal(kaas_sub_open(f->sub, m, KAAS_O_WRITE, 0, &fh), 0);
	buf[len - 2] ^= 0x01;
	assert_int_equal(kaas_sub_pwrite_full(fh, buf, len, 0), 0);
	kaas_sub_close(fh);
	free(buf);
	assert_int_equal(kaas_log_inspect_open(f->sub, f->env.dir, &li), -EBADMSG);
	assert_string_equal(li.manifest, m); /* the caller can name the file */
	kaas_log_inspect_free(&li);
	free(m);
}

#define WITH_LOG(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = { WITH_LOG(test_live_read_only), WITH_LOG(test_flipped_byte),
					    WITH_LOG(test_missing_and_corrupt) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
