/* test_log_nowait.c — the non-blocking produce path of the log (issue 19):
 * kaas_log_append_nowait answers KAAS_ENOROOM instead of waiting for room and
 * calls its room waiter back once pending bytes drop; kaas_log_when_durable
 * calls back when a queued batch's fsync completes (or failed).
 * On the in-process fault model (a fault+ URL over a temp dir) the
 * segment's writes are delayed, so the batches stay pending while the test
 * looks (a delay rule forces the interleaving; nothing is timed). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "faultfs/model.h"
#include "faultfs/substrate.h"
#include "log/log.h"
#include "tests/log/logtest.h"
#include "tests/support/testdir.h"

/* One callback's outcome, waited for with a bound. */
struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int calls;
	int64_t result;
	struct kaas_log_waiter w;
};

static void seen_cb(void *arg, int64_t result)
{
	struct seen *s = arg;
	pthread_mutex_lock(&s->mu);
	s->calls++;
	s->result = result;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->w.cb = seen_cb;
	s->w.arg = s;
}

/* Wait up to 60 s for the first call: its result; fails the test else. */
static int64_t seen_wait(struct seen *s)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	pthread_mutex_lock(&s->mu);
	while (!s->calls)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
			break;
	int calls = s->calls;
	int64_t r = s->result;
	pthread_mutex_unlock(&s->mu);
	if (!calls)
		fail_msg("no callback within 60 s");
	return r;
}

static int seen_calls(struct seen *s)
{
	pthread_mutex_lock(&s->mu);
	int c = s->calls;
	pthread_mutex_unlock(&s->mu);
	return c;
}

static struct kaas_substrate *open_fault(const char *tmp)
{
	char url[512];
	snprintf(url, sizeof url, "fault+%s?seed=1", tmp);
	struct kaas_substrate *s = NULL;
	if (kaas_substrate_open(url, &s) < 0)
		fail_msg("cannot open %s: %s", url, kaas_sub_errdetail());
	return s;
}

static void rule(struct kaas_substrate *s, const char *json)
{
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(kaas_fault_substrate_model(s), json, &reply), 0);
	free(reply);
}

/* A batch of ~1000 bytes, one record, producer pid (or -1) at seq. */
static unsigned char *batch(int64_t pid, int32_t seq, size_t *len)
{
	return lt_batch(900, 1, 1000 + seq, pid, pid < 0 ? -1 : 0, pid < 0 ? -1 : seq,
			(uint32_t)seq + 7, len);
}

static void t_room_and_durable(void **st)
{
	(void)st;
	char *tmp = kaas_testdir_make("nowait");
	assert_non_null(tmp);
	struct kaas_substrate *sub = open_fault(tmp);
	struct kaas_log_config cfg;
	kaas_log_config_default(&cfg);
	size_t len;
	unsigned char *b = batch(-1, 0, &len);
	cfg.max_pending_bytes = 3 * len; /* three batches wait, the fourth does not fit */
	struct kaas_log *log = NULL;
	assert_int_equal(kaas_log_open(sub, "t/0", 1, &cfg, &log), 0);
	/* Every segment write now takes 1 s: the batches stay pending. */
	rule(sub, "{\"cmd\":\"set\",\"rule\":{\"op\":\"write\",\"path\":\"t/0/*.log\","
		  "\"fault\":\"delay\",\"delay_ms\":1000}}");
	struct kaas_log_batch d = lt_desc(b, len);
	struct seen acks[3], room, durable;
	int64_t base[3];
	for (int i = 0; i < 3; i++) {
		seen_init(&acks[i]);
		assert_int_equal(kaas_log_append_nowait(log, &d, seen_cb, &acks[i], &base[i], NULL), 0);
		assert_int_equal(base[i], i);
	}
	/* No room: not queued, no offset taken, the room waiter registered. */
	seen_init(&room);
	int64_t b3 = -1;
	assert_int_equal(kaas_log_append_nowait(log, &d, seen_cb, &room, &b3, &room.w), KAAS_ENOROOM);
	assert_int_equal(b3, -1);
	assert_int_equal(kaas_log_end_offset(log), 3);
	/* The first batch is being written (or queued): a completion, not a wait. */
	seen_init(&durable);
	int wd = kaas_log_when_durable(log, 1, &durable.w);
	assert_int_equal(wd, 0);
	assert_int_equal(kaas_log_when_durable(log, 3, &durable.w), -ERANGE);
	assert_int_equal(seen_wait(&durable), 1); /* batch 1's base offset */
	assert_true(kaas_log_high_watermark(log) >= 2);
	assert_int_equal(seen_wait(&room), 0);
	assert_int_equal(seen_calls(&room), 1);
	/* Durable already: 1, no callback. */
	struct seen late;
	seen_init(&late);
	assert_int_equal(kaas_log_when_durable(log, 0, &late.w), 1);
	/* Room again: the fourth batch goes in. */
	struct seen ack3;
	seen_init(&ack3);
	int rc = KAAS_ENOROOM;
	for (int tries = 0; rc == KAAS_ENOROOM && tries < 600; tries++) {
		struct seen r2;
		seen_init(&r2);
		rc = kaas_log_append_nowait(log, &d, seen_cb, &ack3, &b3, &r2.w);
		if (rc == KAAS_ENOROOM)
			seen_wait(&r2);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(b3, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(seen_wait(&acks[i]), i);
	assert_int_equal(seen_wait(&ack3), 3);
	assert_int_equal(seen_calls(&late), 0);
	assert_int_equal(kaas_log_close(log), 0);
	free(b);
	kaas_substrate_close(sub);
	kaas_testdir_remove(tmp);
}

/* A durable waiter on a batch whose fsync fails is told the error, as the
 * batch's own callback is; afterwards the failed log answers at once. */
static void t_durable_failure(void **st)
{
	(void)st;
	char *tmp = kaas_testdir_make("nowait-eio");
	assert_non_null(tmp);
	struct kaas_substrate *sub = open_fault(tmp);
	struct kaas_log *log = NULL;
	assert_int_equal(kaas_log_open(sub, "t/0", 1, NULL, &log), 0);
	rule(sub, "{\"cmd\":\"set\",\"rule\":{\"op\":\"write\",\"path\":\"t/0/*.log\","
		  "\"fault\":\"delay\",\"delay_ms\":1000,\"times\":1}}");
	rule(sub, "{\"cmd\":\"set\",\"rule\":{\"op\":\"fsync\",\"path\":\"t/0/*.log\","
		  "\"fault\":\"EIO\",\"times\":1}}");
	size_t len;
	unsigned char *b = batch(77, 0, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	struct seen ack, durable;
	seen_init(&ack);
	seen_init(&durable);
	int64_t base = -1;
	assert_int_equal(kaas_log_append_nowait(log, &d, seen_cb, &ack, &base, NULL), 0);
	assert_int_equal(kaas_log_when_durable(log, base, &durable.w), 0);
	assert_int_equal(seen_wait(&durable), -EIO);
	assert_int_equal(seen_wait(&ack), -EIO);
	struct seen after;
	seen_init(&after);
	assert_int_equal(kaas_log_when_durable(log, base, &after.w), -EIO);
	assert_int_equal(seen_calls(&after), 0);
	assert_int_not_equal(kaas_log_close(log), 0);
	free(b);
	kaas_substrate_close(sub);
	kaas_testdir_remove(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_room_and_durable),
		cmocka_unit_test(t_durable_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
