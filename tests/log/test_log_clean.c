/* test_log_clean.c — the log cleaner (issue 21): the latest record per key
 * survives in offset order with its offset, old tombstones go, the dirty
 * ratio and compaction lags are honoured, a slice taken before the switch
 * still reads, a read inside a removed range continues at the next retained
 * offset, the new set survives a reopen, and a fenced leader's pass never
 * removes anything. */
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
#include "util/step.h"

#define NKEYS 1000
#define NRECORDS 100000
#define PER_BATCH 10
#define T0 1700000000000ll          /* "now" for the passes */
#define DELETE_RETENTION 2000000ll

static struct kaas_log_config cfg(void)
{
	/* small group commits: many segments */
	return lt_compact_cfg(64 << 10, 32 << 10, DELETE_RETENTION);
}

/* What the writer knows: per key the offset, timestamp and value of its
 * latest record (value NULL: a tombstone). */
struct model {
	int64_t off[NKEYS], ts[NKEYS];
	char val[NKEYS][24];
	int tomb[NKEYS], seen[NKEYS];
};

/* Append `count` records starting at record number `from`; record i has key
 * (i * 7919) % NKEYS, timestamp T0 - 5e6 + 50 i, and is a tombstone when
 * i % 11 == 3. */
static void produce(struct kaas_log *log, struct model *m, int from, int count)
{
	for (int i = from; i < from + count; i += PER_BATCH) {
		struct lt_record r[PER_BATCH];
		char keys[PER_BATCH][16], vals[PER_BATCH][24];
		int ks[PER_BATCH];
		for (int j = 0; j < PER_BATCH; j++) {
			int n = i + j;
			/* keys below 100 only in the first half: their latest
			 * records (tombstones among them) are old */
			ks[j] = n < NRECORDS / 2 ? (int)(((long long)n * 7919) % NKEYS)
						 : 100 + (int)(((long long)n * 7919) % (NKEYS - 100));
			snprintf(keys[j], sizeof keys[j], "key-%04d", ks[j]);
			snprintf(vals[j], sizeof vals[j], "value-%d", n);
			r[j] = (struct lt_record){ .key = keys[j], .value = n % 11 == 3 ? NULL : vals[j],
						   .ts = T0 - 5000000 + 50ll * n };
		}
		size_t len;
		unsigned char *b = lt_keyed_batch(r, PER_BATCH, r[0].ts, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		int64_t base = -1; /* group-committed: waited for below */
		assert_int_equal(kaas_log_append(log, &d, NULL, NULL, &base), 0);
		assert_true(base >= 0);
		free(b);
		for (int j = 0; j < PER_BATCH; j++) {
			int k = ks[j];
			m->off[k] = base + j;
			m->ts[k] = r[j].ts;
			m->tomb[k] = r[j].value == NULL;
			m->seen[k] = 1;
			memcpy(m->val[k], vals[j], sizeof m->val[k]);
		}
	}
	int64_t last = kaas_log_end_offset(log) - 1;
	assert_int_equal(kaas_log_wait(log, last, 60000), 1);
}

struct got {
	int64_t *off;
	int *key;
	int *tomb;
	char (*val)[24];
	size_t n, cap;
	int64_t min_ts_tomb;
	int64_t last;
};

static int collect(void *arg, int64_t offset, int64_t ts, const char *key, int64_t klen,
		   const char *value, int64_t vlen)
{
	struct got *g = arg;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4096;
		g->off = realloc(g->off, g->cap * sizeof *g->off);
		g->key = realloc(g->key, g->cap * sizeof *g->key);
		g->tomb = realloc(g->tomb, g->cap * sizeof *g->tomb);
		g->val = realloc(g->val, g->cap * sizeof *g->val);
	}
	assert_true(klen == 8 && strncmp(key, "key-", 4) == 0);
	g->off[g->n] = offset;
	g->key[g->n] = atoi(key + 4);
	g->tomb[g->n] = vlen < 0;
	snprintf(g->val[g->n], sizeof g->val[g->n], "%.*s", vlen > 0 ? (int)vlen : 0,
		 vlen > 0 ? value : "");
	if (vlen < 0 && (g->min_ts_tomb < 0 || ts < g->min_ts_tomb))
		g->min_ts_tomb = ts;
	g->n++;
	g->last = offset;
	return 0;
}

/* Read every record from `from` to the high watermark. */
static void read_all(struct kaas_log *log, int64_t from, struct got *g)
{
	memset(g, 0, sizeof *g);
	g->min_ts_tomb = -1;
	g->last = -1;
	int rc = lt_read_records(log, from, &g->last, collect, g);
	if (rc < 0)
		fail_msg("read from %lld: %d %s", (long long)from, rc, kaas_sub_errdetail());
}

static void free_got(struct got *g)
{
	free(g->off);
	free(g->key);
	free(g->tomb);
	free(g->val);
}

/* The log holds exactly the latest record of every key, in offset order at
 * its offset, minus tombstones older than the horizon (the active segment's
 * records: all of them, so call this right after a pass over a rolled log). */
static void check_latest(struct kaas_log *log, const struct model *m)
{
	struct got g;
	read_all(log, kaas_log_start_offset(log), &g);
	size_t want = 0;
	for (int k = 0; k < NKEYS; k++)
		if (m->seen[k] && !(m->tomb[k] && m->ts[k] < T0 - DELETE_RETENTION))
			want++;
	assert_int_equal(g.n, want);
	for (size_t i = 0; i < g.n; i++) {
		int k = g.key[i];
		if (i)
			assert_true(g.off[i] > g.off[i - 1]);
		assert_int_equal(g.off[i], m->off[k]);
		assert_int_equal(g.tomb[i], m->tomb[k]);
		if (!m->tomb[k])
			assert_string_equal(g.val[i], m->val[k]);
	}
	assert_true(g.min_ts_tomb < 0 || g.min_ts_tomb >= T0 - DELETE_RETENTION);
	free_got(&g);
}

static void test_latest_per_key(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "clean-latest"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env.dir, 1, &c, &log), 0);
	static struct model m;
	memset(&m, 0, sizeof m);
	produce(log, &m, 0, NRECORDS);
	assert_int_equal(kaas_log_roll(log), 0);
	struct kaas_log_stats before;
	kaas_log_get_stats(log, &before);

	/* A slice taken before the pass (an in-flight fetch) on the first
	 * segment, and a position inside what will be removed. */
	struct kaas_log_slice held;
	assert_int_equal(kaas_log_read(log, 0, 4096, &held), 0);
	unsigned char *held_copy = malloc(held.len);
	assert_int_equal(kaas_log_slice_pread(&held, held_copy, held.len, 0), (ssize_t)held.len);

	struct kaas_log_clean_stats st;
	assert_int_equal(kaas_log_clean(log, T0, 0, &st), 1);
	printf("# pass: %llu segments -> %llu, %llu -> %llu bytes, %llu records removed, "
	       "%llu tombstones\n", (unsigned long long)st.segments_in,
	       (unsigned long long)st.segments_out, (unsigned long long)st.bytes_in,
	       (unsigned long long)st.bytes_out, (unsigned long long)st.records_removed,
	       (unsigned long long)st.tombstones_removed);
	assert_true(st.segments_in > 10 && st.segments_out < st.segments_in);
	assert_true(st.tombstones_removed > 0);
	check_latest(log, &m);

	/* The in-flight slice still reads its old bytes; once released, the
	 * old files go at the next housekeeping. */
	unsigned char *again = malloc(held.len);
	assert_int_equal(kaas_log_slice_pread(&held, again, held.len, 0), (ssize_t)held.len);
	assert_memory_equal(again, held_copy, held.len);
	free(again);
	free(held_copy);
	int cleaned, plain;
	lt_count_segments(sub, env.dir, &cleaned, &plain);
	assert_int_equal(plain, 2); /* the held segment and the active one */
	kaas_log_slice_release(&held);
	assert_true(kaas_log_housekeep(log, T0) >= 0);
	lt_count_segments(sub, env.dir, &cleaned, &plain);
	assert_int_equal(plain, 1);
	assert_int_equal(cleaned, (int)st.segments_out);

	/* A read at offset 0 (removed: key 0's latest record is far later)
	 * continues at the first retained offset. */
	void *buf;
	size_t len;
	int64_t first;
	assert_int_equal(kaas_log_read_copy(log, 0, 1, &buf, &len, &first), 0);
	assert_true(len > 0 && first > 0);
	free(buf);
	/* Time lookups work over the gaps. */
	int64_t toff, tts;
	assert_int_equal(kaas_log_offset_for_time(log, T0 - 5000000, &toff, &tts), 0);
	assert_true(toff >= 0);

	/* Not dirty enough: no pass.  Then more data, and a second generation. */
	assert_int_equal(kaas_log_clean(log, T0, 0, NULL), 0);
	produce(log, &m, NRECORDS, 30000);
	assert_int_equal(kaas_log_roll(log), 0);
	assert_int_equal(kaas_log_clean(log, T0, 0, &st), 1);
	check_latest(log, &m);
	assert_true(kaas_log_housekeep(log, T0) >= 0);
	lt_count_segments(sub, env.dir, &cleaned, &plain);
	assert_int_equal(plain, 1);
	assert_int_equal(cleaned, (int)st.segments_out);
	assert_int_equal(kaas_log_close(log), 0);

	/* A new leader reads the cleaned set from the manifest. */
	struct kaas_substrate *sub2 = lt_sub(&env);
	assert_int_equal(kaas_log_open(sub2, env.dir, 2, &c, &log), 0);
	check_latest(log, &m);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(sub2);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

static void test_ratio_and_lags(void **state)
{
	(void)state;
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "clean-lags"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log_config c = cfg();
	c.min_compaction_lag_ms = 4000000; /* records of the first 1e6 ms only */
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env.dir, 1, &c, &log), 0);
	static struct model m;
	memset(&m, 0, sizeof m);
	produce(log, &m, 0, 40000); /* timestamps T0-5e6 .. T0-3e6 */
	assert_int_equal(kaas_log_roll(log), 0);
	struct kaas_log_clean_stats st;
	assert_int_equal(kaas_log_clean(log, T0, 0, &st), 1);
	int cleaned, plain;
	assert_true(kaas_log_housekeep(log, T0) >= 0);
	lt_count_segments(sub, env.dir, &cleaned, &plain);
	assert_true(cleaned >= 1 && plain > 2); /* younger segments stay as they were */

	/* A high ratio and no max lag: nothing; a max lag passed: a pass. */
	c.min_compaction_lag_ms = 0;
	c.min_cleanable_dirty_ratio = 0.99;
	kaas_log_retune(log, &c);
	assert_int_equal(kaas_log_clean(log, T0, 0, NULL), 0);
	c.max_compaction_lag_ms = 1000;
	kaas_log_retune(log, &c);
	assert_int_equal(kaas_log_clean(log, T0, 0, NULL), 1);
	/* The housekeeping hook: clean again after more data. */
	c.max_compaction_lag_ms = -1;
	c.min_cleanable_dirty_ratio = 0.01;
	kaas_log_retune(log, &c);
	produce(log, &m, 40000, 2000);
	assert_int_equal(kaas_log_roll(log), 0);
	assert_true(kaas_log_housekeep(log, T0) >= 0);
	check_latest(log, &m);
	lt_count_segments(sub, env.dir, &cleaned, &plain);
	assert_int_equal(plain, 1);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

/* A newer leader claims the partition between the old leader's manifest
 * rename and its check: the old leader removes nothing, and the new one
 * (which read the cleaned set) serves every latest value. */
struct steal {
	struct lt_env *env;
	struct kaas_substrate *sub;
	struct kaas_log *newer;
	const char *at;
};

static void steal_hook(void *arg, const char *name)
{
	struct steal *s = arg;
	if (strcmp(name, s->at) != 0 || s->newer)
		return;
	struct kaas_log_config c = cfg();
	c.compact = 0;
	assert_int_equal(lt_open_elsewhere(s->env, 2, &c, &s->sub, &s->newer), 0);
}

static void fenced_at(const char *step)
{
	struct lt_env env;
	assert_int_equal(lt_env_init(&env, "clean-fence"), 0);
	struct kaas_substrate *sub = lt_sub(&env);
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env.dir, 1, &c, &log), 0);
	static struct model m;
	memset(&m, 0, sizeof m);
	produce(log, &m, 0, 20000);
	assert_int_equal(kaas_log_roll(log), 0);
	struct steal s = { .env = &env, .at = step };
	kaas_step_set_hook(steal_hook, &s);
	assert_int_equal(kaas_log_clean(log, T0, 0, NULL), KAAS_LOG_EFENCED);
	kaas_step_set_hook(NULL, NULL);
	assert_non_null(s.newer);
	assert_int_equal(kaas_log_status(log), KAAS_LOG_EFENCED);
	kaas_log_close(log);
	/* Every record the newer leader's view names is readable: the
	 * latest value of every key is there (cleaned or not). */
	struct got g;
	read_all(s.newer, 0, &g);
	int found[NKEYS] = { 0 };
	for (size_t i = 0; i < g.n; i++)
		if (g.off[i] == m.off[g.key[i]])
			found[g.key[i]] = 1;
	for (int k = 0; k < NKEYS; k++)
		assert_true(!m.seen[k] || found[k] || (m.tomb[k] && m.ts[k] < T0 - DELETE_RETENTION));
	free_got(&g);
	assert_int_equal(kaas_log_close(s.newer), 0);
	/* And again after a reopen (its sweep removed the loser's files). */
	struct kaas_log *third;
	assert_int_equal(kaas_log_open(s.sub, env.dir, 3, &c, &third), 0);
	read_all(third, 0, &g);
	assert_true(g.n >= NKEYS / 2);
	free_got(&g);
	assert_int_equal(kaas_log_close(third), 0);
	kaas_substrate_close(s.sub);
	kaas_substrate_close(sub);
	lt_env_fini(&env);
}

static void test_fenced_before_switch(void **state)
{
	(void)state;
	fenced_at("log.clean.before-switch");
}

static void test_fenced_before_remove(void **state)
{
	(void)state;
	fenced_at("log.clean.before-remove");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latest_per_key),
		cmocka_unit_test(test_ratio_and_lags),
		cmocka_unit_test(test_fenced_before_switch),
		cmocka_unit_test(test_fenced_before_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
