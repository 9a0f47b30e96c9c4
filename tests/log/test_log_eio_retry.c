/* test_log_eio_retry.c — an idempotent batch whose fsync failed, retried
 * after the log is re-opened, ends up in the log exactly once.
 *
 * On the in-process fault model (a fault+ URL over a temp dir), one EIO is
 * set on the next fsync of the partition's segments; the append of seq 1
 * fails with it, the log is failed (every later append refused).  The log
 * is re-opened, with the same epoch (the broker's re-open of a failed
 * partition) or, on another host, with a higher epoch (failover), and the
 * retry of seq 1 goes through the broker's idempotence check: if recovery
 * kept the batch the retry is a duplicate answered with the original
 * offset, else it is appended — one copy either way, and seq 2 follows.
 * (The broker must answer the failed append "possibly persisted" so that
 * the client retries with the same sequence: tests/groups/idempotence_eio.sh.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker/idempotence.h"
#include "faultfs/model.h"
#include "kafka/protocol.h"
#include "kafka/status_map.h"
#include "faultfs/substrate.h"
#include "log/log.h"
#include "tests/log/logtest.h"
#include "tests/support/testdir.h"

#define PID 4242

static struct kaas_substrate *open_host(const char *tmp, int host)
{
	char url[512];
	snprintf(url, sizeof url, "fault+%s?seed=1&host=%d", tmp, host);
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(url, &s);
	if (rc < 0)
		fail_msg("cannot open %s: %s", url, kaas_sub_errdetail());
	return s;
}

/* Queue seq `seq` (one record) through the idempotence check as the
 * produce lane does: 1 with *off on an append or a duplicate, or the
 * check's / the append's error. */
static int produce(struct kaas_log *log, int32_t seq, int64_t *off)
{
	size_t len;
	unsigned char *b = lt_batch(100, 1, 1000 + seq, PID, 0, seq, (uint32_t)seq + 1, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	int64_t dup = -1;
	int ic = kaas_idem_check(log, &d, &dup);
	int64_t r;
	if (ic == KAAS_IDEM_DUPLICATE)
		r = dup;
	else if (ic < 0)
		r = ic;
	else
		r = kaas_log_append_sync(log, &d);
	free(b);
	if (r < 0)
		return (int)r;
	*off = r;
	return 1;
}

static void run(int failover)
{
	char *tmp = kaas_testdir_make("eio-retry");
	assert_non_null(tmp);
	struct kaas_substrate *a = open_host(tmp, 0);
	const char *dir = "t/0";
	struct kaas_log *log = NULL;
	assert_int_equal(kaas_log_open(a, dir, 1, NULL, &log), 0);
	int64_t o = -1;
	assert_int_equal(produce(log, 0, &o), 1);
	assert_int_equal(o, 0);

	/* The next fsync of a segment fails, once. */
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(kaas_fault_substrate_model(a),
					"{\"cmd\":\"set\",\"rule\":{\"op\":\"fsync\",\"path\":"
					"\"t/0/*.log\",\"times\":1,\"fault\":\"EIO\"}}",
					&reply), 0);
	free(reply);
	int64_t o1 = -1;
	assert_int_equal(produce(log, 1, &o1), -EIO);
	assert_int_equal(kaas_log_status(log), -EIO);
	int64_t o2 = -1;
	/* Seq 2 to the failed log: the log's own error, before any sequence
	 * rule (the Produce handler answers it KAFKA_STORAGE_ERROR), not a
	 * sequence error. */
	int rc2 = produce(log, 2, &o2);
	assert_int_equal(rc2, -EIO);
	assert_int_equal(kaas_kafka_error(rc2, KAAS_KERR_KAFKA_STORAGE_ERROR),
			 KAAS_KERR_KAFKA_STORAGE_ERROR);
	assert_int_not_equal(kaas_log_close(log), 0);

	/* Re-open: the broker's re-open (same host, same epoch) or a new
	 * leader (another host, a higher epoch). */
	struct kaas_substrate *b = failover ? open_host(tmp, 1) : a;
	assert_int_equal(kaas_log_open(b, dir, failover ? 2 : 1, NULL, &log), 0);
	int64_t end = kaas_log_end_offset(log);
	assert_true(end == 1 || end == 2); /* seq 1 dropped or recovered */
	assert_int_equal(produce(log, 1, &o1), 1);
	assert_int_equal(o1, 1);
	assert_int_equal(kaas_log_end_offset(log), 2); /* one copy of seq 1 */
	assert_int_equal(produce(log, 2, &o2), 1);
	assert_int_equal(o2, 2);
	/* A retry of seq 1 again, and of seq 0, answer their offsets. */
	assert_int_equal(produce(log, 1, &o), 1);
	assert_int_equal(o, 1);
	assert_int_equal(produce(log, 0, &o), 1);
	assert_int_equal(o, 0);
	assert_int_equal(kaas_log_end_offset(log), 3);
	print_message("seq 1 was %s by recovery\n", end == 2 ? "kept" : "dropped");
	assert_int_equal(kaas_log_close(log), 0);
	if (failover)
		kaas_substrate_close(b);
	kaas_substrate_close(a);
	kaas_testdir_remove(tmp);
}

static void t_reopen_same_epoch(void **st)
{
	(void)st;
	run(0);
}

static void t_failover_new_epoch(void **st)
{
	(void)st;
	run(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_reopen_same_epoch),
		cmocka_unit_test(t_failover_new_epoch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
