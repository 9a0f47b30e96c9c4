/* test_log_crash.c — crash sweep and torn tails.
 *
 * A workload of appends, rolls, retention and DeleteRecords runs over the
 * crash-simulating wrapper, crashed at the Nth fsync (and separately at the
 * Nth rename, and with torn unsynced tails) for N = 1, 2, ... until the
 * workload finishes without crashing.  After each crash the partition is
 * reopened with a higher epoch on a fresh substrate: the open must succeed
 * and every append that completed before the crash is readable at its
 * offset with identical bytes (unless retention removed it). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "log/log.h"
#include "tests/log/logtest.h"
#include "tests/support/crashsub.h"

#define NAPP 40
#define NMAX 64

struct done {
	int64_t off[NMAX];
	unsigned char *buf[NMAX];
	size_t len[NMAX];
	int n;
	int64_t deleted_below; /* DeleteRecords that completed */
};

static struct kaas_log_config cfg(void)
{
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 4096;
	c.checkpoint_bytes = 2048;
	c.index_interval_bytes = 512;
	c.retention_bytes = 10000;
	c.retention_ms = -1;
	return c;
}

/* Run the workload on sub (epoch 1); stops at the first failure. */
static void workload(struct kaas_substrate *sub, const char *dir, struct done *d)
{
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	if (kaas_log_open(sub, dir, 1, &c, &log) < 0)
		return;
	for (int i = 0; i < NAPP; i++) {
		size_t len;
		unsigned char *b = lt_batch(80 + (size_t)(i * 131 % 900), 1 + (uint32_t)(i % 3),
					    1000 + i, 7, 0, i * 3, (uint32_t)i + 11, &len);
		struct kaas_log_batch desc = lt_desc(b, len);
		int64_t off = kaas_log_append_sync(log, &desc);
		if (off < 0) {
			free(b);
			break;
		}
		lt_patch(b, off, 1);
		d->off[d->n] = off;
		d->buf[d->n] = b;
		d->len[d->n++] = len;
		int rc = 0;
		if (i % 9 == 8)
			rc = kaas_log_roll(log);
		if (rc == 0 && i % 13 == 12)
			rc = kaas_log_housekeep(log, 0);
		if (rc >= 0 && i == 30) {
			rc = kaas_log_delete_records(log, d->off[25]);
			if (rc == 0)
				d->deleted_below = d->off[25];
		}
		if (rc < 0)
			break;
	}
	kaas_log_close(log);
}

static void verify(struct kaas_substrate *sub, const char *dir, uint32_t epoch, struct done *d)
{
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	int rc = kaas_log_open(sub, dir, epoch, &c, &log);
	if (rc < 0)
		fail_msg("reopen with epoch %u failed: %d %s", epoch, rc, kaas_sub_errdetail());
	int64_t start = kaas_log_start_offset(log), hwm = kaas_log_high_watermark(log);
	for (int i = 0; i < d->n; i++) {
		if (d->off[i] < start)
			continue;
		assert_true(d->off[i] < hwm);
		void *got;
		size_t glen;
		int64_t first;
		rc = kaas_log_read_copy(log, d->off[i], 1, &got, &glen, &first);
		if (rc < 0)
			fail_msg("read %lld: %d %s", (long long)d->off[i], rc, kaas_sub_errdetail());
		assert_int_equal(first, d->off[i]);
		assert_int_equal(glen, d->len[i]);
		assert_memory_equal(got, d->buf[i], glen);
		free(got);
	}
	/* The reopened log takes appends after what was recovered. */
	size_t len;
	unsigned char *b = lt_batch(100, 1, 5000, -1, -1, -1, 99, &len);
	struct kaas_log_batch desc = lt_desc(b, len);
	assert_int_equal(kaas_log_append_sync(log, &desc), hwm);
	free(b);
	assert_int_equal(kaas_log_close(log), 0);
}

static void free_done(struct done *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->buf[i]);
	memset(d, 0, sizeof *d);
}

/* KAAS_CRASH_STRIDE=k: the sweeps check every k-th of their points only
 * (the sanitizer suite and the run over nfs:// set it; 1 by default). */
static unsigned crash_stride(void)
{
	const char *e = getenv("KAAS_CRASH_STRIDE");
	return e && atoi(e) > 0 ? (unsigned)atoi(e) : 1;
}

static void sweep(const char *tag, int by_rename, int torn, int fail_op)
{
	unsigned crashes = 0;
	/* Every point for crashes; every 6th op for single failures (there are
	 * many more ops than syncs, and neighbouring ops fail alike); every
	 * k-th of those with KAAS_CRASH_STRIDE=k. */
	unsigned stride = crash_stride();
	for (unsigned n = 1; n < 4000; n += (fail_op ? 6 : 1) * stride) {
		struct lt_env env;
		assert_int_equal(lt_env_init(&env, tag), 0);
		struct kaas_crashsub_opts o = { .torn_tail = torn, .seed = n };
		if (fail_op)
			o.fail_op_at = n; /* one op fails (EIO); no crash */
		else if (by_rename)
			o.crash_at_rename = n;
		else
			o.crash_at_fsync = n;
		struct kaas_substrate *cs;
		assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
		struct done d = { .n = 0 };
		workload(cs, env.dir, &d);
		int crashed = fail_op ? n <= kaas_crashsub_count(cs, KAAS_CS_OPS)
				      : kaas_crashsub_crashed(cs);
		kaas_substrate_close(cs);
		struct kaas_substrate *fresh = lt_sub(&env);
		verify(fresh, env.dir, 2, &d);
		verify(fresh, env.dir, 3, &d); /* recovery is repeatable */
		kaas_substrate_close(fresh);
		free_done(&d);
		lt_env_fini(&env);
		if (!crashed)
			break;
		crashes++;
	}
	printf("# %s: %u failure points checked (every %u)\n", tag, crashes, stride);
	assert_true(crashes * stride > 10); /* the workload went past many points */
}

/* A crash during the recovery itself: after a workload crash, open with
 * epoch 2 over a crashing wrapper (crashed at its Mth fsync, M = 1, 2, ...),
 * then verify with epoch 3: nothing that completed is lost. */
static void test_crash_during_recovery(void **state)
{
	(void)state;
	unsigned checked = 0;
	unsigned stride = crash_stride();
	for (unsigned n = 5; n < 2000; n += 37 * stride) {
		int workload_crashed = 0;
		for (unsigned m = 1; m < 200; m++) {
			struct lt_env env;
			assert_int_equal(lt_env_init(&env, "crash-recovery"), 0);
			struct kaas_crashsub_opts o = { .crash_at_fsync = n };
			struct kaas_substrate *cs;
			assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
			struct done d = { .n = 0 };
			workload(cs, env.dir, &d);
			workload_crashed = kaas_crashsub_crashed(cs);
			kaas_substrate_close(cs);
			struct kaas_crashsub_opts o2 = { .crash_at_fsync = m, .torn_tail = 1, .seed = m };
			assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o2, &cs), 0);
			struct kaas_log_config c = cfg();
			struct kaas_log *log;
			int rc = kaas_log_open(cs, env.dir, 2, &c, &log);
			if (rc == 0)
				kaas_log_close(log);
			int rec_crashed = kaas_crashsub_crashed(cs);
			kaas_substrate_close(cs);
			struct kaas_substrate *fresh = lt_sub(&env);
			verify(fresh, env.dir, 3, &d);
			kaas_substrate_close(fresh);
			free_done(&d);
			lt_env_fini(&env);
			checked++;
			if (!rec_crashed)
				break;
		}
		if (!workload_crashed)
			break;
	}
	printf("# crash during recovery: %u combinations checked (every %u)\n", checked, stride);
	assert_true(checked * stride > 20);
}

/* Recovery makes what it adopts durable (issue 13, defect 9).  A dead
 * leader's last batch reached the server as an UNSTABLE write and was never
 * committed.  The new leader scans it, adopts it (it will answer a retry of
 * it as a duplicate, so it must survive) and fsyncs.  On NFS an fsync of a
 * handle that wrote nothing sends no COMMIT: the crashsub option
 * commit_per_handle models that.  After a server crash the adopted batch
 * must still be there. */
static void test_recovery_commits_adopted_tail(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "recovery-commit"), 0);
	struct kaas_crashsub_opts o = { .commit_per_handle = 1 };
	struct kaas_substrate *cs;
	assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
	struct kaas_log_config c = cfg();
	c.retention_bytes = -1;
	struct kaas_log *a;
	assert_int_equal(kaas_log_open(cs, env.dir, 1, &c, &a), 0);
	size_t l1, l2;
	unsigned char *b1 = lt_batch(100, 2, 1000, -1, 0, 0, 1, &l1);
	struct kaas_log_batch d1 = lt_desc(b1, l1);
	assert_int_equal(kaas_log_append_sync(a, &d1), 0);

	/* The leader's next batch: written (unstable), never synced; then it
	 * dies (its handle stays as it was: no close, no COMMIT). */
	char seg[512];
	snprintf(seg, sizeof seg, "%s/%020d-%010d.log", env.dir, 0, 1);
	struct kaas_file *dead;
	assert_int_equal(kaas_sub_open(cs, seg, KAAS_O_WRITE, 0, &dead), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(dead, &st), 0);
	assert_int_equal(st.size, l1);
	unsigned char *b2 = lt_batch(120, 3, 1001, -1, 0, 0, 2, &l2);
	lt_patch(b2, 2, 1);
	assert_int_equal(kaas_sub_pwrite_full(dead, b2, l2, st.size), 0);

	/* The new leader recovers the tail and adopts the batch. */
	struct kaas_log *b;
	assert_int_equal(kaas_log_open(cs, env.dir, 2, &c, &b), 0);
	assert_int_equal(kaas_log_high_watermark(b), 5);
	assert_int_equal(kaas_log_close(b), 0);
	assert_int_equal(kaas_log_close(a), KAAS_LOG_EFENCED);

	/* The server crashes: every write no COMMIT covered is lost. */
	kaas_crashsub_crash_now(cs);
	kaas_sub_close(dead);
	kaas_substrate_close(cs);

	struct kaas_substrate *fresh = lt_sub(&env);
	struct kaas_log *v;
	int rc = kaas_log_open(fresh, env.dir, 3, &c, &v);
	if (rc < 0)
		print_error("open after the crash: %s\n", kaas_sub_errdetail());
	assert_int_equal(rc, 0);
	assert_int_equal(kaas_log_high_watermark(v), 5);
	void *got;
	size_t glen;
	int64_t first;
	assert_int_equal(kaas_log_read_copy(v, 2, 1 << 20, &got, &glen, &first), 0);
	assert_int_equal(first, 2);
	assert_int_equal(glen, l2);
	assert_memory_equal(got, b2, l2);
	free(got);
	assert_int_equal(kaas_log_close(v), 0);
	kaas_substrate_close(fresh);
	free(b1);
	free(b2);
	lt_env_fini(&env);
}

static void test_crash_at_fsync(void **state)
{
	(void)state;
	sweep("crash-fsync", 0, 0, 0);
}

static void test_crash_at_rename(void **state)
{
	(void)state;
	sweep("crash-rename", 1, 0, 0);
}

/* Every op failing once (EIO, no crash): the log fails cleanly (no hang),
 * and a reopen finds every completed append. */
static void test_fail_each_op(void **state)
{
	(void)state;
	sweep("fail-op", 0, 0, 1);
}

static void test_crash_torn_tail(void **state)
{
	(void)state;
	sweep("crash-torn", 0, 1, 0);
}

/* ---- torn tails written by hand after an unclean stop */

static void torn(int kind)
{
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "torn"), 0);
	struct kaas_crashsub_opts o = { 0 };
	struct kaas_substrate *cs;
	assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
	struct kaas_log_config c;
	kaas_log_config_default(&c); /* checkpoint far away: the tail is scanned */
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(cs, env.dir, 1, &c, &log), 0);
	struct done d = { .n = 0 };
	for (int i = 0; i < 5; i++) {
		size_t len;
		d.buf[i] = lt_batch(300, 2, 1000 + i, -1, -1, -1, (uint32_t)i, &len);
		struct kaas_log_batch desc = lt_desc(d.buf[i], len);
		d.off[i] = kaas_log_append_sync(log, &desc);
		assert_int_equal(d.off[i], i * 2);
		lt_patch(d.buf[i], d.off[i], 1);
		d.len[i] = len;
		d.n++;
	}
	char seg[256];
	snprintf(seg, sizeof seg, "%s/%020d-%010d.log", env.dir, 0, 1);
	kaas_crashsub_crash_now(cs); /* unclean stop */
	kaas_log_close(log);
	kaas_substrate_close(cs);

	/* Damage the end of the active segment. */
	struct kaas_substrate *h = lt_sub(&env);
	struct kaas_file *fh;
	assert_int_equal(kaas_sub_open(h, seg, KAAS_O_WRITE, 0, &fh), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_fstat(fh, &st), 0);
	size_t len;
	unsigned char *b = lt_batch(300, 1, 2000, -1, -1, -1, 77, &len);
	lt_patch(b, 10, 1);
	if (kind == 0) { /* garbage */
		memset(b, 0x5a, len);
		assert_int_equal(kaas_sub_pwrite_full(fh, b, len, st.size), 0);
	} else if (kind == 1) { /* half a batch */
		assert_int_equal(kaas_sub_pwrite_full(fh, b, len / 2, st.size), 0);
	} else { /* whole batch, bad CRC */
		b[len - 1] ^= 1;
		assert_int_equal(kaas_sub_pwrite_full(fh, b, len, st.size), 0);
	}
	kaas_sub_close(fh);
	free(b);

	/* A restart is a new owner: it needs a new epoch (issue 13: equal epochs
	 * never mean the same owner; the crashed process's epoch 1 is refused). */
	if (kind == 2) {
		struct kaas_log *same = NULL;
		assert_int_equal(kaas_log_open(h, env.dir, 1, &c, &same), KAAS_LOG_EFENCED);
	}
	assert_int_equal(kaas_log_open(h, env.dir, 2, &c, &log), 0);
	struct kaas_log_stats ls;
	kaas_log_get_stats(log, &ls);
	assert_true(ls.recovered_bytes > 0);
	assert_int_equal(kaas_log_high_watermark(log), 10);
	void *got;
	size_t glen;
	assert_int_equal(kaas_log_read_copy(log, 10, 1 << 20, &got, &glen, NULL), 0);
	assert_int_equal(glen, 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(kaas_log_read_copy(log, d.off[i], 1, &got, &glen, NULL), 0);
		assert_int_equal(glen, d.len[i]);
		assert_memory_equal(got, d.buf[i], glen);
		free(got);
	}
	b = lt_batch(100, 1, 3000, -1, -1, -1, 5, &len);
	struct kaas_log_batch desc = lt_desc(b, len);
	assert_int_equal(kaas_log_append_sync(log, &desc), 10);
	assert_int_equal(kaas_log_read_copy(log, 10, 1 << 20, &got, &glen, NULL), 0);
	assert_int_equal(glen, len);
	free(got);
	free(b);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(h);
	free_done(&d);
	lt_env_fini(&env);
}

static void test_torn_garbage(void **state)
{
	(void)state;
	torn(0);
}

static void test_torn_half_batch(void **state)
{
	(void)state;
	torn(1);
}

static void test_torn_bad_crc(void **state)
{
	(void)state;
	torn(2);
}

/* After an unclean stop the old active segment's index is rebuilt from the
 * prefix written at the last checkpoint: reads and time lookups stay exact,
 * also with timestamps that go backwards. */
static void test_unclean_index_and_times(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "unclean-idx"), 0);
	struct kaas_crashsub_opts o = { 0 };
	struct kaas_substrate *cs;
	assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.checkpoint_bytes = 3000;
	c.index_interval_bytes = 256;
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(cs, env.dir, 1, &c, &log), 0);
	enum { N = 60 };
	struct done d = { .n = 0 };
	int64_t ts[N];
	for (int i = 0; i < N; i++) {
		size_t len;
		ts[i] = 1000 + i * 10 - (i % 7 == 3 ? 45 : 0);
		d.buf[i] = lt_batch(100 + (size_t)(i * 17 % 200), 2, ts[i], -1, -1, -1, (uint32_t)i, &len);
		struct kaas_log_batch desc = lt_desc(d.buf[i], len);
		d.off[i] = kaas_log_append_sync(log, &desc);
		assert_true(d.off[i] >= 0);
		lt_patch(d.buf[i], d.off[i], 1);
		d.len[i] = len;
		d.n++;
	}
	kaas_crashsub_crash_now(cs);
	kaas_log_close(log);
	kaas_substrate_close(cs);

	struct kaas_substrate *h = lt_sub(&env);
	assert_int_equal(kaas_log_open(h, env.dir, 2, &c, &log), 0);
	struct kaas_log_stats ls;
	kaas_log_get_stats(log, &ls);
	assert_true(ls.recovered_bytes < 2 * 3000); /* the checkpoint interval + a round or so */
	for (int64_t t = 900; t <= 1000 + N * 10; t += 3) {
		int want = -1;
		for (int i = 0; i < N && want < 0; i++)
			if (ts[i] >= t)
				want = i;
		int64_t off, got_ts;
		int rc = kaas_log_offset_for_time(log, t, &off, &got_ts);
		if (want < 0) {
			assert_int_equal(rc, -ENOENT);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(off, d.off[want]);
			assert_int_equal(got_ts, ts[want]);
		}
	}
	for (int i = 0; i < N; i++) {
		void *got;
		size_t glen;
		assert_int_equal(kaas_log_read_copy(log, d.off[i] + 1, 1, &got, &glen, NULL), 0);
		assert_int_equal(glen, d.len[i]);
		assert_memory_equal(got, d.buf[i], glen);
		free(got);
	}
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(h);
	free_done(&d);
	lt_env_fini(&env);
}

int main(void)
{
	/* KAAS_TEST_FILTER=name runs the matching tests only (a cmocka glob). */
	if (getenv("KAAS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("KAAS_TEST_FILTER"));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_garbage),
		cmocka_unit_test(test_torn_half_batch),
		cmocka_unit_test(test_torn_bad_crc),
		cmocka_unit_test(test_unclean_index_and_times),
		cmocka_unit_test(test_crash_at_fsync),
		cmocka_unit_test(test_crash_at_rename),
		cmocka_unit_test(test_crash_torn_tail),
		cmocka_unit_test(test_fail_each_op),
		cmocka_unit_test(test_crash_during_recovery),
		cmocka_unit_test(test_recovery_commits_adopted_tail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
