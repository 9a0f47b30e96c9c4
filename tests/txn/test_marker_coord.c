/* test_marker_coord.c — issue 33 defect 1, the partition's side: a marker
 * from a coordinator older than the last one this producer's markers came
 * from is refused (Kafka's TRANSACTION_COORDINATOR_FENCED), and the last
 * coordinator epoch survives a clean reopen (the producer snapshot) and a
 * leader's death (the markers in the log).
 *
 * The interleaving it stands for: coordinator C5 (slot epoch 5) decided
 * transaction 7 of producer (P, e) and keeps re-driving it from memory;
 * C6 took the slot over, finished transaction 7 and the producer started
 * transaction 8 with the same (P, e) on the partition.  C5's late re-drive
 * must not close transaction 8. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log/log.h"
#include "tests/log/logtest.h"
#include "util/crc32c.h"
#include "util/status.h"

static int setup(void **state)
{
	return lt_fx_setup(state, "mcoord");
}

/* One transactional batch of pid/ep (sequence seq, 1 record): its offset. */
static int64_t put_txn(struct kaas_log *log, int64_t pid, int16_t ep, int32_t seq)
{
	size_t len;
	unsigned char *b = lt_batch(50, 1, 1000, pid, ep, seq, (uint32_t)seq + 3, &len);
	b[22] |= KAAS_BATCH_ATTR_TRANSACTIONAL;
	uint32_t crc = kaas_crc32c(0, b + 21, len - 21);
	b[17] = (unsigned char)(crc >> 24);
	b[18] = (unsigned char)(crc >> 16);
	b[19] = (unsigned char)(crc >> 8);
	b[20] = (unsigned char)crc;
	struct kaas_log_batch d = lt_desc(b, len);
	int64_t off = kaas_log_append_sync(log, &d);
	free(b);
	assert_true(off >= 0);
	return off;
}

static int txn_open(struct kaas_log *log, int64_t pid)
{
	struct kaas_log_producer st;
	assert_int_equal(kaas_log_producer_get(log, pid, &st), 0);
	return st.txn_first_offset >= 0;
}

static void test_stale_coordinator_refused(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log_config c = lt_small_cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	/* Transaction 7: its marker written by C5, re-driven by C6 (nothing
	 * written: the partition learns epoch 6). */
	assert_int_equal(put_txn(log, 40, 2, 0), 0);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 5), 1);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 5), 1); /* re-drive */
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 6), 1);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 6), 1); /* re-drive */
	assert_int_equal(kaas_log_end_offset(log), 2);
	/* Transaction 8, same producer and epoch. */
	int64_t t8 = put_txn(log, 40, 2, 1);
	assert_int_equal(t8, 2);
	/* C5's late re-drive of transaction 7: refused, nothing written. */
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 5), KAAS_ETXN_COORD_FENCED);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 0, 5), KAAS_ETXN_COORD_FENCED);
	assert_int_equal(kaas_log_end_offset(log), 3);
	assert_true(txn_open(log, 40));
	assert_int_equal(kaas_log_last_stable_offset(log), t8);
	assert_int_equal(kaas_log_close(log), 0);

	/* Reopened (C6's epoch kept in the producer snapshot): still refused. */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 5), KAAS_ETXN_COORD_FENCED);
	assert_int_equal(kaas_log_end_offset(log), 3);
	assert_true(txn_open(log, 40));
	/* Another producer is not concerned by 40's coordinator. */
	assert_int_equal(put_txn(log, 41, 0, 0), 3);
	assert_int_equal(kaas_log_append_marker_sync(log, 41, 0, 0, 1), 4);
	/* C7 ends transaction 8 (an abort); then C6 is refused too. */
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 0, 7), 5);
	assert_false(txn_open(log, 40));
	int64_t t9 = put_txn(log, 40, 2, 2);
	assert_int_equal(t9, 6);
	assert_int_equal(kaas_log_append_marker_sync(log, 40, 2, 1, 6), KAAS_ETXN_COORD_FENCED);
	assert_int_equal(kaas_log_end_offset(log), 7);

	/* The leader dies here (no close, no snapshot since): the next one
	 * learns epoch 7 from the markers in the log. */
	struct kaas_substrate *hb = lt_sub(&f->env);
	struct kaas_log *b;
	assert_int_equal(kaas_log_open(hb, f->env.dir, 3, &c, &b), 0);
	assert_int_equal(kaas_log_append_marker_sync(b, 40, 2, 1, 6), KAAS_ETXN_COORD_FENCED);
	assert_int_equal(kaas_log_end_offset(b), 7);
	assert_int_equal(kaas_log_last_stable_offset(b), t9);
	assert_int_equal(kaas_log_append_marker_sync(b, 40, 2, 1, 7), 7);
	assert_int_equal(kaas_log_last_stable_offset(b), 8);
	kaas_log_close(log);
	assert_int_equal(kaas_log_close(b), 0);
	kaas_substrate_close(hb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stale_coordinator_refused, setup, lt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
