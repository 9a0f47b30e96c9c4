/* test_log_txn.c — transactions on the partition log: markers written once,
 * the last stable offset, reads below it, the aborted-transaction index
 * (kept, rebuilt when missing or torn), open transactions recovered at
 * open (clean close, and a leader that died between a transactional append
 * and its marker). */
#include <errno.h>
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
#include "util/crc32c.h"
#include "util/status.h"

/* The fixture: lt_fx_setup / lt_fx_teardown (logtest.h). */
static int setup(void **state)
{
	return lt_fx_setup(state, "txn");
}

/* Append one batch of `recs` records for pid (-1: plain), transactional
 * or not; returns its base offset. */
static int64_t put(struct kaas_log *log, int64_t pid, int16_t ep, int32_t seq, uint32_t recs,
		   int txn)
{
	size_t len;
	unsigned char *b = lt_batch(100, recs, 1000, pid, pid < 0 ? -1 : ep, pid < 0 ? -1 : seq,
				    (uint32_t)seq + 7, &len);
	if (txn) {
		b[22] |= KAAS_BATCH_ATTR_TRANSACTIONAL;
		uint32_t crc = kaas_crc32c(0, b + 21, len - 21);
		b[17] = (unsigned char)(crc >> 24); b[18] = (unsigned char)(crc >> 16);
		b[19] = (unsigned char)(crc >> 8); b[20] = (unsigned char)crc;
	}
	struct kaas_log_batch d = lt_desc(b, len);
	int64_t off = kaas_log_append_sync(log, &d);
	free(b);
	assert_true(off >= 0);
	return off;
}

/* The batch at offset `at`: its attributes and marker type (key bytes). */
static void read_marker(struct kaas_log *log, int64_t at, int *attrs, int *type, int32_t *cep)
{
	void *buf;
	size_t len;
	int64_t first;
	assert_int_equal(kaas_log_read_copy(log, at, 1, &buf, &len, &first), 0);
	assert_int_equal(first, at);
	const unsigned char *b = buf;
	assert_true(len >= 78);
	*attrs = b[21] << 8 | b[22];
	assert_int_equal(b[61], 32);     /* record length 16 */
	assert_int_equal(b[65], 8);      /* key length 4 */
	assert_int_equal(b[68], 0);
	*type = b[69];
	assert_int_equal(b[70], 12);     /* value length 6 */
	*cep = (int32_t)((uint32_t)b[73] << 24 | (uint32_t)b[74] << 16 | (uint32_t)b[75] << 8 | b[76]);
	free(buf);
}

static void test_marker_once_and_lso(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = lt_small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	put(log, -1, 0, 0, 2, 0);                          /* 0..1 plain */
	assert_int_equal(kaas_log_last_stable_offset(log), 2);
	int64_t t1 = put(log, 7, 3, 0, 3, 1);              /* 2..4 txn of pid 7 */
	assert_int_equal(t1, 2);
	put(log, -1, 0, 0, 1, 0);                          /* 5 plain */
	put(log, 7, 3, 3, 2, 1);                           /* 6..7 same txn */
	assert_int_equal(kaas_log_high_watermark(log), 8);
	assert_int_equal(kaas_log_last_stable_offset(log), 2);
	struct kaas_log_producer st;
	assert_int_equal(kaas_log_producer_get(log, 7, &st), 0);
	assert_int_equal(st.txn_first_offset, 2);

	/* read_committed reads: batches below the LSO only. */
	struct kaas_log_slice s;
	assert_int_equal(kaas_log_read_below(log, 0, 1 << 20, 2, &s), 0);
	assert_int_equal(s.first_offset, 0);
	assert_int_equal(s.next_offset, 2);
	kaas_log_slice_release(&s);
	assert_int_equal(kaas_log_read_below(log, 2, 1 << 20, 2, &s), 0);
	assert_int_equal(s.len, 0);
	kaas_log_slice_release(&s);

	/* An older epoch is fenced, nothing written. */
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 2, 1, 5), KAAS_EPRODFENCED);
	assert_int_equal(kaas_log_end_offset(log), 8);
	int64_t m = kaas_log_append_marker_sync(log, 7, 3, 1, 5);
	assert_int_equal(m, 8);
	assert_int_equal(kaas_log_high_watermark(log), 9);
	assert_int_equal(kaas_log_last_stable_offset(log), 9);
	int attrs, type;
	int32_t cep;
	read_marker(log, m, &attrs, &type, &cep);
	assert_int_equal(attrs, KAAS_BATCH_ATTR_CONTROL | KAAS_BATCH_ATTR_TRANSACTIONAL);
	assert_int_equal(type, 1);
	assert_int_equal(cep, 5);
	/* Re-driven: the same marker's offset, nothing written. */
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 3, 1, 5), 8);
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 3, 1, 5), 8);
	assert_int_equal(kaas_log_end_offset(log), 9);
	assert_int_equal(kaas_log_producer_get(log, 7, &st), 0);
	assert_int_equal(st.txn_first_offset, -1);
	/* The next transaction of the producer, the sequence going on. */
	assert_int_equal(put(log, 7, 3, 5, 1, 1), 9);
	assert_int_equal(kaas_log_last_stable_offset(log), 9);
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 3, 1, 5), 10);
	assert_int_equal(kaas_log_aborted_txns(log, 0, 100, &(struct kaas_log_aborted_txn *){ NULL }), 0);
	assert_int_equal(kaas_log_close(log), 0);
	/* No abort: no index file is written. */
	char *ix = kaas_path_join(f->env.dir, "aborted-txns.json");
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(kaas_sub_read_all(f->sub, ix, 1 << 20, &buf, &len), -ENOENT);
	free(ix);

	/* After a reopen the marker is still known: no second one. */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 3, 1, 5), 10);
	assert_int_equal(kaas_log_end_offset(log), 11);
	/* A bumped epoch (an abort by the coordinator) is taken. */
	assert_int_equal(kaas_log_append_marker_sync(log, 7, 4, 0, 5), 11);
	assert_int_equal(kaas_log_producer_get(log, 7, &st), 0);
	assert_int_equal(st.epoch, 4);
	assert_int_equal(kaas_log_close(log), 0);
}

static void check_index(struct kaas_log *log, int64_t pid, int64_t first, int64_t last)
{
	struct kaas_log_aborted_txn *a = NULL;
	assert_int_equal(kaas_log_aborted_txns(log, 0, INT64_MAX, &a), 1);
	assert_int_equal(a[0].producer_id, pid);
	assert_int_equal(a[0].first_offset, first);
	assert_int_equal(a[0].last_offset, last);
	free(a);
	/* Bounds: a read ending at or before the first offset, or starting
	 * after the marker, needs nothing. */
	assert_int_equal(kaas_log_aborted_txns(log, 0, first, &a), 0);
	assert_int_equal(kaas_log_aborted_txns(log, last + 1, INT64_MAX, &a), 0);
	assert_int_equal(kaas_log_aborted_txns(log, last, last + 1, &a), 1);
	free(a);
}

static void test_aborted_index(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log;
	struct kaas_log_config c = lt_small_cfg();
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 1, &c, &log), 0);
	int64_t first = put(log, 9, 0, 0, 2, 1);
	/* Enough plain data in between to roll segments and checkpoint. */
	for (int i = 0; i < 40; i++)
		put(log, -1, 0, i, 1, 0);
	put(log, 9, 0, 2, 1, 1);
	int64_t m = kaas_log_append_marker_sync(log, 9, 0, 0, 1);
	assert_true(m > first);
	check_index(log, 9, first, m);
	assert_int_equal(kaas_log_last_stable_offset(log), kaas_log_high_watermark(log));
	put(log, -1, 0, 99, 1, 0);
	assert_int_equal(kaas_log_close(log), 0);

	char *ix = kaas_path_join(f->env.dir, "aborted-txns.json");
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(kaas_sub_read_all(f->sub, ix, 1 << 20, &buf, &len), 0);
	assert_non_null(strstr(buf, "\"aborted\""));
	free(buf);
	/* Kept. */
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 2, &c, &log), 0);
	check_index(log, 9, first, m);
	assert_int_equal(kaas_log_close(log), 0);
	/* Missing: rebuilt from the markers. */
	assert_int_equal(kaas_sub_unlink(f->sub, ix), 0);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 3, &c, &log), 0);
	check_index(log, 9, first, m);
	assert_int_equal(kaas_log_close(log), 0);
	/* Torn: rebuilt too. */
	assert_int_equal(kaas_replace(f->sub, ix, "{\"garbage", 9), 0);
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, 4, &c, &log), 0);
	check_index(log, 9, first, m);
	assert_int_equal(kaas_log_close(log), 0);
	free(ix);
}

static void test_open_txn_recovered(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log_config c = lt_small_cfg();
	struct kaas_substrate *ha = lt_sub(&f->env), *hb = lt_sub(&f->env), *hc = lt_sub(&f->env);
	struct kaas_log *a, *b, *l3;
	assert_int_equal(kaas_log_open(ha, f->env.dir, 1, &c, &a), 0);
	put(a, -1, 0, 0, 1, 0);
	int64_t t = put(a, 11, 0, 0, 2, 1);      /* open, never ended */
	int64_t u = put(a, 12, 0, 0, 1, 1);      /* open, aborted below */
	put(a, -1, 0, 1, 1, 0);
	assert_int_equal(kaas_log_last_stable_offset(a), t);
	/* The leader dies here (no close, no checkpoint since): the next one
	 * finds the transactions open in the log itself. */
	assert_int_equal(kaas_log_open(hb, f->env.dir, 2, &c, &b), 0);
	assert_int_equal(kaas_log_high_watermark(b), 5);
	assert_int_equal(kaas_log_last_stable_offset(b), t);
	struct kaas_log_producer st;
	assert_int_equal(kaas_log_producer_get(b, 11, &st), 0);
	assert_int_equal(st.txn_first_offset, t);
	/* The zombie cannot write a marker that counts. */
	assert_int_equal(kaas_log_append_marker_sync(a, 11, 0, 1, 1) < 0, 1);
	kaas_log_close(a);
	int64_t m = kaas_log_append_marker_sync(b, 12, 0, 0, 1);
	assert_int_equal(m, 5);
	assert_int_equal(kaas_log_last_stable_offset(b), t);
	/* And again without a clean close: the abort's index entry and the
	 * still open transaction come back from the log. */
	assert_int_equal(kaas_log_open(hc, f->env.dir, 3, &c, &l3), 0);
	kaas_log_close(b);
	assert_int_equal(kaas_log_last_stable_offset(l3), t);
	check_index(l3, 12, u, m);
	int64_t m2 = kaas_log_append_marker_sync(l3, 11, 0, 1, 2);
	assert_int_equal(m2, 6);
	assert_int_equal(kaas_log_last_stable_offset(l3), 7);
	assert_int_equal(kaas_log_close(l3), 0);
	/* Clean close and reopen: nothing open. */
	assert_int_equal(kaas_log_open(hc, f->env.dir, 4, &c, &l3), 0);
	assert_int_equal(kaas_log_last_stable_offset(l3), 7);
	assert_int_equal(kaas_log_producer_get(l3, 11, &st), 0);
	assert_int_equal(st.txn_first_offset, -1);
	assert_int_equal(kaas_log_close(l3), 0);
	kaas_substrate_close(ha);
	kaas_substrate_close(hb);
	kaas_substrate_close(hc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_marker_once_and_lso, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_aborted_index, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_txn_recovered, setup, lt_fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
