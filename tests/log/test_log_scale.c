/* test_log_scale.c — many open partition logs cost a bounded number of
 * threads and file descriptors (issue 19).  Opens LOGS logs on one
 * substrate, appends to every one of them several times (asynchronously,
 * so that many logs have work at once), and checks at every step that the
 * process's threads (/proc/self/task) stay within the log I/O pool's size
 * plus a small constant and its open descriptors (/proc/self/fd) within the
 * open-file limit plus a small constant.  Then reads every log back. */
#include <dirent.h>
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

#include "log/log.h"
#include "tests/log/logtest.h"

#define LOGS 2000
#define ROUNDS 3
#define POOL 4
#define MAX_FILES 64
/* Threads beside the pool: main, and a margin for the C library / sanitizer. */
#define THREAD_SLACK 3
/* Descriptors beside the cached handles: stdio, the test's temp dirs, a
 * directory or file opened for one operation by each pool thread and by
 * this thread, sanitizer internals. */
#define FD_SLACK (16 + POOL)

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return strcmp(dir, "/proc/self/fd") == 0 ? n - 1 : n; /* the DIR's own descriptor */
}

static int max_threads, max_fds;

static void check_bounds(const char *when)
{
	int t = count_entries("/proc/self/task");
	int f = count_entries("/proc/self/fd");
	if (t > max_threads)
		max_threads = t;
	if (f > max_fds)
		max_fds = f;
	if (t > POOL + THREAD_SLACK || f > MAX_FILES + FD_SLACK)
		fail_msg("%s: %d threads (bound %d), %d descriptors (bound %d)", when, t,
			 POOL + THREAD_SLACK, f, MAX_FILES + FD_SLACK);
}

static long acked;     /* atomic: appends acknowledged */
static long ack_errs;  /* atomic */

static void on_ack(void *arg, int64_t result)
{
	(void)arg;
	if (result < 0)
		__atomic_fetch_add(&ack_errs, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&acked, 1, __ATOMIC_SEQ_CST);
}

static void many_logs(void **state)
{
	(void)state;
	assert_int_equal(kaas_log_io_configure(POOL, MAX_FILES), 0);
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "scale"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log **logs = calloc(LOGS, sizeof *logs);
	assert_non_null(logs);
	struct kaas_log_config cfg;
	kaas_log_config_default(&cfg);
	cfg.segment_bytes = 1u << 20;
	char dir[256];
	for (int i = 0; i < LOGS; i++) {
		snprintf(dir, sizeof dir, "%s/p%d", env.top, i);
		int rc = kaas_log_open(sub, dir, 1, &cfg, &logs[i]);
		if (rc < 0)
			fail_msg("open %s: %d %s", dir, rc, kaas_sub_errdetail());
		if (i % 250 == 0)
			check_bounds("opening");
	}
	check_bounds("all open");
	long sent = 0;
	size_t batch_len = 0;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < LOGS; i++) {
			size_t len;
			unsigned char *b = lt_batch(200, 2, 1000 + r, -1, -1, -1, (uint32_t)(i * 7 + r), &len);
			struct kaas_log_batch d = lt_desc(b, len);
			batch_len = len;
			int rc = kaas_log_append(logs[i], &d, on_ack, NULL, NULL);
			free(b);
			if (rc < 0)
				fail_msg("append to log %d: %d %s", i, rc, kaas_sub_errdetail());
			sent++;
			if (i % 100 == 0)
				check_bounds("appending");
		}
	}
	for (int waited = 0; __atomic_load_n(&acked, __ATOMIC_SEQ_CST) < sent; waited++) {
		if (waited > 120 * 100)
			fail_msg("only %ld of %ld appends acknowledged after 120 s", acked, sent);
		if (waited % 10 == 0)
			check_bounds("waiting for acks");
		usleep(10000);
	}
	assert_int_equal(ack_errs, 0);
	for (int i = 0; i < LOGS; i++) {
		assert_int_equal(kaas_log_high_watermark(logs[i]), ROUNDS * 2);
		void *buf = NULL;
		size_t len = 0;
		int64_t first = -1;
		int rc = kaas_log_read_copy(logs[i], 0, 1 << 20, &buf, &len, &first);
		if (rc < 0)
			fail_msg("read log %d: %d %s", i, rc, kaas_sub_errdetail());
		assert_int_equal(first, 0);
		assert_int_equal(len, ROUNDS * batch_len);
		free(buf);
		if (i % 100 == 0)
			check_bounds("reading");
	}
	for (int i = 0; i < LOGS; i++)
		assert_int_equal(kaas_log_close(logs[i]), 0);
	/* The last close stops the pool: only this thread is left. */
	assert_int_equal(count_entries("/proc/self/task"), 1);
	printf("at most %d threads and %d descriptors with %d logs (pool %d, file limit %d)\n",
	       max_threads, max_fds, LOGS, POOL, MAX_FILES);
	free(logs);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

/* Logs of 4 KiB segments roll while two appenders keep their queues busy,
 * with a pool of 2 threads and a file cache of 8 handles (which keeps
 * closing the write and read handles of the other logs).  A roll needs the
 * rounds before it acknowledged; it acknowledges them itself.  Were it to
 * wait for the ack task instead, two pool threads each in a roll would wait
 * forever for ack tasks queued behind them: with that wait (the self-ack
 * disabled) this test stalled in 4 runs of 4.  Every append must be
 * acknowledged, every log read back whole and in order. */
#define ROLL_LOGS 48
#define ROLL_APPENDS 60

static void *roll_appender(void *arg)
{
	struct kaas_log **logs = arg;
	for (int a = 0; a < ROLL_APPENDS; a++)
		for (int i = 0; i < ROLL_LOGS / 2; i++) {
			size_t len;
			unsigned char *b = lt_batch(900, 1, 1000 + a, -1, -1, -1, (uint32_t)(i + a), &len);
			struct kaas_log_batch d = lt_desc(b, len);
			if (kaas_log_append(logs[i], &d, on_ack, NULL, NULL) < 0)
				__atomic_fetch_add(&ack_errs, 1, __ATOMIC_SEQ_CST);
			free(b);
		}
	return NULL;
}

static void rolls_with_small_pool_and_cache(void **state)
{
	(void)state;
	assert_int_equal(kaas_log_io_configure(2, 8), 0);
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "scale-roll"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log *logs[ROLL_LOGS];
	struct kaas_log_config cfg;
	kaas_log_config_default(&cfg);
	cfg.segment_bytes = 4096;
	char dir[256];
	for (int i = 0; i < ROLL_LOGS; i++) {
		snprintf(dir, sizeof dir, "%s/r%d", env.top, i);
		assert_int_equal(kaas_log_open(sub, dir, 1, &cfg, &logs[i]), 0);
	}
	assert_int_equal(kaas_log_io_threads(), 2);
	__atomic_store_n(&acked, 0, __ATOMIC_SEQ_CST);
	/* Two appenders keep every log's queue non-empty while its round is
	 * written, so that rounds wait in the ack queues when the logs roll. */
	pthread_t th[2];
	for (long k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&th[k], NULL, roll_appender, logs + k * (ROLL_LOGS / 2)), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	long sent = (long)ROLL_LOGS * ROLL_APPENDS;
	for (int waited = 0; __atomic_load_n(&acked, __ATOMIC_SEQ_CST) < sent; waited++) {
		if (waited > 30 * 100) /* a deadlock between rolls */
			fail_msg("only %ld of %ld appends acknowledged after 30 s", acked, sent);
		usleep(10000);
	}
	assert_int_equal(ack_errs, 0);
	unsigned long long rolls = 0;
	for (int i = 0; i < ROLL_LOGS; i++) {
		int64_t at = 0;
		while (at < ROLL_APPENDS) {
			void *buf = NULL;
			size_t len = 0;
			int64_t first = -1;
			int rc = kaas_log_read_copy(logs[i], at, 1 << 20, &buf, &len, &first);
			if (rc < 0 || first != at || len == 0)
				fail_msg("log %d at %lld: rc %d, first %lld, %zu bytes", i, (long long)at, rc,
					 (long long)first, len);
			struct kaas_batch_header h;
			size_t pos = 0;
			while (pos < len && kaas_batch_parse_header((unsigned char *)buf + pos, len - pos, &h) == 0) {
				assert_int_equal(h.base_offset, at);
				at++;
				pos += (size_t)h.batch_length + 12;
			}
			free(buf);
			if (pos != len)
				fail_msg("log %d: a batch at %lld does not parse", i, (long long)at);
		}
		struct kaas_log_stats st;
		kaas_log_get_stats(logs[i], &st);
		rolls += st.rolls;
	}
	printf("%llu rolls over %d logs\n", (unsigned long long)rolls, ROLL_LOGS);
	assert_true(rolls > 0); /* rolls did happen (how many depends on the round sizes) */
	for (int i = 0; i < ROLL_LOGS; i++)
		assert_int_equal(kaas_log_close(logs[i]), 0);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest scale_tests[] = {
		cmocka_unit_test(many_logs),
		cmocka_unit_test(rolls_with_small_pool_and_cache),
	};
	return cmocka_run_group_tests_name("log scale", scale_tests, NULL, NULL);
}
