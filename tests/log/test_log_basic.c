/* test_log_basic.c — append, read (also inside batches), roll, indexes,
 * timestamps, retention, DeleteRecords, producer state, corrupt documents. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "log/log.h"
#include "tests/log/logtest.h"

struct fx {
	struct lt_env env;
	struct kaas_substrate *sub;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || lt_env_init(&f->env, "basic") < 0)
		return -1;
	f->sub = lt_sub(&f->env);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	kaas_substrate_close(f->sub);
	lt_env_fini(&f->env);
	free(f);
	return 0;
}

#define small_cfg lt_small_cfg

/* Append n batches; returns their patched copies in bufs/lens/offs. */
struct appended {
	unsigned char *buf[400];
	size_t len[400];
	int64_t off[400];
	uint32_t recs[400];
	int n;
};

static void append_some(struct kaas_log *log, struct appended *a, int n, uint32_t epoch,
			int64_t ts0)
{
	for (int i = 0; i < n; i++) {
		int k = a->n++;
		uint32_t recs = 1 + (uint32_t)(k % 4);
		a->buf[k] = lt_batch(50 + (size_t)(k * 37 % 700), recs, ts0 + k * 10, -1, -1, -1,
				     (uint32_t)k + 1, &a->len[k]);
		a->recs[k] = recs;
		struct kaas_log_batch b = lt_desc(a->buf[k], a->len[k]);
		int64_t off = kaas_log_append_sync(log, &b);
		assert_true(off >= 0);
		a->off[k] = off;
		if (k > 0)
			assert_int_equal(off, a->off[k - 1] + a->recs[k - 1]);
		lt_patch(a->buf[k], off, epoch);
	}
}

static void free_appended(struct appended *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->buf[i]);
	a->n = 0;
}

/* Every offset of every batch reads back as exactly that batch first. */
static void check_all(struct kaas_log *log, struct appended *a, int from)
{
	for (int i = from; i < a->n; i++) {
		for (uint32_t r = 0; r < a->recs[i]; r++) {
			void *buf = NULL;
			size_t len = 0;
			int64_t first = -1;
			int rc = kaas_log_read_copy(log, a->off[i] + r, 1, &buf, &len, &first);
			assert_int_equal(rc, 0);
			assert_int_equal(first, a->off[i]);
			assert_int_equal(len, a->len[i]); /* whole batch even past max_bytes */
			assert_memory_equal(buf, a->buf[i], len);
			free(buf);
		}
	}
}

static void test_append_read(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	c.segment_bytes = 1 << 20;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	assert_int_equal(kaas_log_high_watermark(log), 0);
	struct appended a = { .n = 0 };
	append_some(log, &a, 60, 1, 1000);
	int64_t hwm = kaas_log_high_watermark(log);
	assert_int_equal(hwm, a.off[59] + a.recs[59]);
	check_all(log, &a, 0);

	/* Several whole batches up to max_bytes. */
	void *buf;
	size_t len;
	int64_t first;
	size_t want = a.len[3] + a.len[4] + a.len[5];
	assert_int_equal(kaas_log_read_copy(log, a.off[3] + a.recs[3] - 1, want + a.len[6] - 1, &buf,
					    &len, &first), 0);
	assert_int_equal(first, a.off[3]);
	assert_int_equal(len, want);
	assert_memory_equal(buf, a.buf[3], a.len[3]);
	assert_memory_equal((char *)buf + a.len[3] + a.len[4], a.buf[5], a.len[5]);
	free(buf);

	/* At the high watermark: nothing; past it or below the start: ERANGE. */
	assert_int_equal(kaas_log_read_copy(log, hwm, 1000, &buf, &len, NULL), 0);
	assert_int_equal(len, 0);
	assert_int_equal(kaas_log_read_copy(log, hwm + 1, 1000, &buf, &len, NULL), -ERANGE);
	assert_int_equal(kaas_log_read_copy(log, -1, 1000, &buf, &len, NULL), -ERANGE);

	/* Zero-copy slice names the segment and a position. */
	struct kaas_log_slice s;
	assert_int_equal(kaas_log_read(log, a.off[10], 1, &s), 0);
	assert_non_null(s.file);
	assert_non_null(s.path);
	assert_int_equal(s.len, a.len[10]);
	unsigned char *tmp = malloc(s.len);
	assert_int_equal(kaas_log_slice_pread(&s, tmp, s.len, 0), (ssize_t)s.len);
	assert_memory_equal(tmp, a.buf[10], s.len);
	free(tmp);
	kaas_log_slice_release(&s);

	/* A malformed batch is refused and takes no offset. */
	unsigned char junk[80] = { 0 };
	struct kaas_log_batch jb = { .data = junk, .len = sizeof junk, .record_count = 1 };
	assert_int_equal(kaas_log_append(log, &jb, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(kaas_log_end_offset(log), hwm);

	assert_int_equal(kaas_log_close(log), 0);
	free_appended(&a);
}

static void test_roll_reopen_indexes(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	struct appended a = { .n = 0 };
	append_some(log, &a, 80, 1, 1000);
	struct kaas_log_stats st;
	kaas_log_get_stats(log, &st);
	assert_true(st.segments > 5);
	assert_true(st.rolls > 4);
	check_all(log, &a, 0);
	assert_int_equal(kaas_log_close(log), 0);

	/* Reopen: same epoch allowed, lower refused with "fenced". */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 0, &c, &log), KAAS_LOG_EFENCED);
	assert_non_null(strstr(kaas_sub_errdetail(), "fenced"));

	/* Damage indexes: one removed, one corrupted; both are rebuilt. */
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(f->sub, f->env.dir, &l), 0);
	int removed = 0, damaged = 0;
	for (size_t i = 0; i < l.n; i++) {
		char *p = kaas_path_join(f->env.dir, l.names[i]);
		if (strstr(l.names[i], ".timeindex") && !removed) {
			assert_int_equal(kaas_sub_unlink(f->sub, p), 0);
			removed = 1;
		} else if (strstr(l.names[i], ".index") && removed && !damaged) {
			struct kaas_file *fh;
			assert_int_equal(kaas_sub_open(f->sub, p, KAAS_O_WRITE, 0, &fh), 0);
			assert_int_equal(kaas_sub_pwrite_full(fh, "XXXX", 4, 40), 0);
			kaas_sub_close(fh);
			damaged = 1;
		}
		free(p);
	}
	kaas_dirlist_free(&l);
	assert_true(removed && damaged);

	c.max_loaded_indexes = 1; /* every segment change evicts the other index */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	kaas_log_get_stats(log, &st);
	assert_int_equal(st.recovered_bytes, 0); /* clean close: nothing to scan */
	check_all(log, &a, 0);
	append_some(log, &a, 10, 2, 5000);
	check_all(log, &a, 70);
	assert_int_equal(kaas_log_close(log), 0);
	free_appended(&a);
}

static void test_timestamps(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	struct appended a = { .n = 0 };
	append_some(log, &a, 50, 1, 1000); /* ts 1000, 1010, ... 1490 */
	int64_t off, ts;
	assert_int_equal(kaas_log_offset_for_time(log, 0, &off, &ts), 0);
	assert_int_equal(off, 0);
	assert_int_equal(kaas_log_offset_for_time(log, 1000, &off, &ts), 0);
	assert_int_equal(off, 0);
	for (int i = 1; i < 50; i++) {
		assert_int_equal(kaas_log_offset_for_time(log, 1000 + i * 10 - 5, &off, &ts), 0);
		assert_int_equal(off, a.off[i]);
		assert_int_equal(ts, 1000 + i * 10);
		assert_int_equal(kaas_log_offset_for_time(log, 1000 + i * 10, &off, &ts), 0);
		assert_int_equal(off, a.off[i]);
	}
	assert_int_equal(kaas_log_offset_for_time(log, 1491, &off, &ts), -ENOENT);
	assert_int_equal(kaas_log_close(log), 0);
	/* After a reopen (indexes from files). */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	assert_int_equal(kaas_log_offset_for_time(log, 1255, &off, &ts), 0);
	assert_int_equal(off, a.off[26]);
	assert_int_equal(kaas_log_max_timestamp(log, &ts), 0);
	assert_int_equal(ts, 1490);
	assert_int_equal(kaas_log_offset_for_time_from(log, 1005, a.off[45], &off, &ts), 0);
	assert_int_equal(off, a.off[45]);
	assert_int_equal(kaas_log_offset_for_time_from(log, 1005, a.off[45] + 1, &off, &ts), 0);
	assert_int_equal(off, a.off[45] + 1); /* inside batch 45 (2 records) */
	/* The log start inside a segment (and inside a batch): the batches
	 * below it are passed over, not the rest of their segment. */
	static const int starts[] = { 30, 33, 35, 38, 41 };
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		int k = starts[i];
		assert_true(a.recs[k] > 1);
		assert_int_equal(kaas_log_delete_records(log, a.off[k] + 1), 0);
		assert_int_equal(kaas_log_offset_for_time(log, 1005, &off, &ts), 0);
		assert_int_equal(off, a.off[k] + 1);
		assert_int_equal(kaas_log_offset_for_time(log, 1000 + k * 10 + 5, &off, &ts), 0);
		assert_int_equal(off, a.off[k + 1]);
	}
	assert_int_equal(kaas_log_close(log), 0);
	free_appended(&a);
}

static void test_retention(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	c.retention_bytes = 8192;
	c.retention_ms = -1;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	struct appended a = { .n = 0 };
	append_some(log, &a, 80, 1, 1000);
	struct kaas_log_slice pin;
	assert_int_equal(kaas_log_read(log, 0, 1, &pin), 0); /* holds segment 0 open */
	char *first_path = strdup(pin.path);
	int n = kaas_log_housekeep(log, 0);
	assert_true(n > 0);
	int64_t start = kaas_log_start_offset(log);
	assert_true(start > 0);
	/* Manifest first: the start moved, yet the pinned slice still reads. */
	void *buf;
	size_t len;
	assert_int_equal(kaas_log_read_copy(log, start - 1, 1, &buf, &len, NULL), -ERANGE);
	unsigned char *tmp = malloc(pin.len);
	assert_int_equal(kaas_log_slice_pread(&pin, tmp, pin.len, 0), (ssize_t)pin.len);
	assert_memory_equal(tmp, a.buf[0], pin.len);
	free(tmp);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(f->sub, first_path, &st), 0);
	kaas_log_slice_release(&pin);
	/* Released: the next housekeeping unlinks it. */
	assert_true(kaas_log_housekeep(log, 0) >= 0);
	assert_int_equal(kaas_sub_stat(f->sub, first_path, &st), -ENOENT);
	free(first_path);
	int k = 0;
	while (k < a.n && a.off[k] < start)
		k++;
	check_all(log, &a, k);

	/* DeleteRecords into the middle of the log. */
	int64_t hwm = kaas_log_high_watermark(log);
	assert_int_equal(kaas_log_delete_records(log, hwm + 1), -ERANGE);
	int64_t mid = a.off[70] + 1;
	assert_int_equal(kaas_log_delete_records(log, mid), 0);
	assert_int_equal(kaas_log_start_offset(log), mid);
	assert_int_equal(kaas_log_read_copy(log, mid - 1, 1, &buf, &len, NULL), -ERANGE);
	check_all(log, &a, 71);
	/* Reading at the start inside batch 70 returns batch 70 whole. */
	int64_t first;
	assert_int_equal(kaas_log_read_copy(log, mid, 1, &buf, &len, &first), 0);
	assert_int_equal(first, a.off[70]);
	free(buf);

	/* Retention by age removes every sealed segment, never the active one. */
	assert_int_equal(kaas_log_close(log), 0);
	c.retention_bytes = -1;
	c.retention_ms = 1000;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	assert_int_equal(kaas_log_start_offset(log), mid);
	append_some(log, &a, 3, 2, 1000000);
	assert_true(kaas_log_housekeep(log, 1000000 + 500) >= 1);
	assert_int_equal(kaas_log_start_offset(log), a.off[80]);
	check_all(log, &a, 80);
	/* Once the active segment's newest record is past retention.ms too,
	 * it is rolled and deleted (as Kafka: a quiet topic does not keep its
	 * records until segment.ms): the log is empty from its end on, and
	 * stays so after a re-open; the next append goes on from there. */
	int64_t end = kaas_log_end_offset(log);
	assert_int_equal(kaas_log_housekeep(log, 1000000 + 5000), 1);
	assert_int_equal(kaas_log_start_offset(log), end);
	assert_int_equal(kaas_log_end_offset(log), end);
	assert_int_equal(kaas_log_read_copy(log, a.off[80], 1, &buf, &len, NULL), -ERANGE);
	assert_int_equal(kaas_log_housekeep(log, 1000000 + 6000), 0); /* nothing more to roll */
	assert_int_equal(kaas_log_close(log), 0);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 3, &c, &log), 0);
	assert_int_equal(kaas_log_start_offset(log), end);
	append_some(log, &a, 1, 3, 1000000 + 7000);
	assert_int_equal(a.off[a.n - 1], end);
	assert_int_equal(kaas_log_close(log), 0);
	free_appended(&a);
}

static void test_producer_state(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	int64_t offs[8];
	for (int i = 0; i < 8; i++) {
		size_t len;
		unsigned char *b = lt_batch(100, 3, 1000 + i, 42, 1, i * 3, (uint32_t)i, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		offs[i] = kaas_log_append_sync(log, &d);
		assert_true(offs[i] >= 0);
		free(b);
	}
	for (int pass = 0; pass < 2; pass++) {
		int64_t base = -1;
		struct kaas_log_producer p;
		assert_int_equal(kaas_log_producer_get(log, 42, &p), 0);
		assert_int_equal(p.epoch, 1);
		assert_int_equal(p.n, KAAS_LOG_PRODUCER_WINDOW);
		assert_int_equal(p.batches[4].first_seq, 21);
		assert_int_equal(p.batches[4].last_seq, 23);
		assert_int_equal(p.batches[4].base_offset, offs[7]);
		assert_int_equal(p.batches[4].last_offset, offs[7] + 2);
		assert_int_equal(kaas_log_producer_find(log, 42, 1, 15, 17, &base), 1);
		assert_int_equal(base, offs[5]);
		assert_int_equal(kaas_log_producer_find(log, 42, 1, 6, 8, &base), 0); /* left the window */
		assert_int_equal(kaas_log_producer_find(log, 42, 2, 15, 17, &base), 0);
		assert_int_equal(kaas_log_producer_get(log, 43, &p), -ENOENT);
		/* Survives a clean close (snapshot). */
		assert_int_equal(kaas_log_close(log), 0);
		assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	}
	assert_int_equal(kaas_log_close(log), 0);
}

/* The inode number of dir/name (the file a replace put there). */
static uint64_t ino_of(struct kaas_substrate *sub, const char *dir, const char *name)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(sub, p, &st), 0);
	assert_true(st.ino != 0);
	return st.ino;
}

/* An open after a clean close does not write the producer-state snapshot
 * again (it covers the whole log already: two syncs fewer per log at a
 * broker's start); an open whose log runs past the snapshot writes it. */
static void test_open_keeps_current_snapshot(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	size_t len;
	unsigned char *b = lt_batch(100, 3, 1000, 42, 1, 0, 1, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	assert_int_equal(kaas_log_append_sync(log, &d), 0);
	free(b);
	assert_int_equal(kaas_log_close(log), 0);
	uint64_t ino = ino_of(f->sub, f->env.dir, "producer-state.json");
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	assert_true(ino_of(f->sub, f->env.dir, "producer-state.json") == ino);
	/* Past the snapshot: a batch, then a newer leader opens meanwhile
	 * (the old one never closed cleanly). */
	b = lt_batch(100, 3, 1001, 42, 1, 3, 2, &len);
	d = lt_desc(b, len);
	assert_int_equal(kaas_log_append_sync(log, &d), 3);
	free(b);
	assert_true(ino_of(f->sub, f->env.dir, "producer-state.json") == ino);
	struct kaas_log *newer;
	struct kaas_substrate *nsub;
	assert_int_equal(lt_open_elsewhere(&f->env, 3, &c, &nsub, &newer), 0);
	assert_true(ino_of(f->sub, f->env.dir, "producer-state.json") != ino);
	int64_t base = -1;
	assert_int_equal(kaas_log_producer_find(newer, 42, 1, 3, 5, &base), 1);
	assert_int_equal(base, 3);
	assert_int_equal(kaas_log_close(newer), 0);
	kaas_substrate_close(nsub);
	(void)kaas_log_close(log); /* fenced */
}

static void corrupt(struct kaas_substrate *sub, const char *path)
{
	struct kaas_file *fh;
	assert_int_equal(kaas_sub_open(sub, path, KAAS_O_WRITE, 0, &fh), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(fh, &st), 0);
	assert_int_equal(kaas_sub_pwrite_full(fh, "#", 1, st.size - 2), 0);
	kaas_sub_close(fh);
}

static void test_corrupt_documents(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	struct appended a = { .n = 0 };
	append_some(log, &a, 5, 1, 1000);
	assert_int_equal(kaas_log_close(log), 0);
	char *m = kaas_path_join(f->env.dir, "manifest-0000000001.json");
	char *p = kaas_path_join(f->env.dir, "producer-state.json");
	char *saved = NULL;
	size_t slen = 0;
	assert_int_equal(kaas_sub_read_all(f->sub, m, 1 << 20, &saved, &slen), 0);
	corrupt(f->sub, m);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), -EBADMSG);
	assert_non_null(strstr(kaas_sub_errdetail(), "manifest-0000000001.json"));
	/* Still offline on a second try: never reset. */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 3, &c, &log), -EBADMSG);
	assert_int_equal(kaas_replace(f->sub, m, saved, slen), 0);
	corrupt(f->sub, p);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), -EBADMSG);
	assert_non_null(strstr(kaas_sub_errdetail(), "producer-state.json"));
	/* A missing manifest with data in segments is refused too. */
	assert_int_equal(kaas_sub_unlink(f->sub, p), 0);
	assert_int_equal(kaas_sub_unlink(f->sub, m), 0);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), -EUCLEAN);
	free(saved);
	free(m);
	free(p);
	free_appended(&a);
}

/* ---- concurrency, group commit, waiting */

struct appender {
	struct kaas_log *log;
	int n;
	int64_t offs[200];
	int id;
};

static void *appender_main(void *arg)
{
	struct appender *ap = arg;
	for (int i = 0; i < ap->n; i++) {
		size_t len;
		unsigned char *b = lt_batch(200, 2, 1000, -1, -1, -1, (uint32_t)(ap->id * 1000 + i), &len);
		struct kaas_log_batch d = lt_desc(b, len);
		ap->offs[i] = kaas_log_append_sync(ap->log, &d);
		free(b);
	}
	return NULL;
}

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static void test_concurrent_group_commit(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = small_cfg();
	c.segment_bytes = 64 << 10;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	struct appender ap[4];
	pthread_t th[4];
	for (int t = 0; t < 4; t++) {
		ap[t] = (struct appender){ .log = log, .n = 100, .id = t };
		pthread_create(&th[t], NULL, appender_main, &ap[t]);
	}
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	int64_t all[400];
	for (int t = 0; t < 4; t++)
		for (int i = 0; i < 100; i++) {
			assert_true(ap[t].offs[i] >= 0);
			all[t * 100 + i] = ap[t].offs[i];
		}
	qsort(all, 400, sizeof all[0], cmp64);
	for (int i = 0; i < 400; i++)
		assert_int_equal(all[i], i * 2);
	assert_int_equal(kaas_log_high_watermark(log), 800);
	struct kaas_log_stats st;
	kaas_log_get_stats(log, &st);
	assert_int_equal(st.appends, 400);
	assert_true(st.fsyncs <= 400);
	printf("# 400 appends from 4 threads shared %llu fsyncs\n", (unsigned long long)st.fsyncs);
	assert_int_equal(kaas_log_close(log), 0);
}

struct late {
	struct kaas_log *log;
};

static void *late_main(void *arg)
{
	struct late *l = arg;
	usleep(50000);
	size_t len;
	unsigned char *b = lt_batch(10, 1, 1, -1, -1, -1, 1, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	kaas_log_append(l->log, &d, NULL, NULL, NULL); /* acks=0 */
	free(b);
	return NULL;
}

static int notified;
static void on_notify(void *arg, int64_t hwm)
{
	(void)arg;
	__atomic_store_n(&notified, (int)hwm, __ATOMIC_SEQ_CST);
}

static void test_wait_notify(void **state)
{
	struct fx *f = *state;
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, NULL, &log), 0);
	kaas_log_set_notify(log, on_notify, NULL);
	assert_int_equal(kaas_log_wait(log, 0, 20), 0); /* times out */
	struct late l = { log };
	pthread_t th;
	pthread_create(&th, NULL, late_main, &l);
	assert_int_equal(kaas_log_wait(log, 0, 10000), 1);
	pthread_join(th, NULL);
	assert_int_equal(kaas_log_high_watermark(log), 1);
	/* The notification follows the wake-up (it runs after the completions). */
	for (int i = 0; i < 5000 && __atomic_load_n(&notified, __ATOMIC_SEQ_CST) != 1; i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&notified, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(kaas_log_close(log), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_append_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roll_reopen_indexes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timestamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_producer_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_keeps_current_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_group_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_notify, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
