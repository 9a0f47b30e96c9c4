/* test_log_clean_txn.c — the log cleaner and transactions (issue 21): the
 * records of aborted transactions are removed; committed transactional
 * records are compacted by key like any others; a marker whose transaction
 * has no record left is stamped with a delete horizon and removed by the
 * first pass after it (its aborted-index entry too), but never a producer's
 * last batch (its producer state, rebuilt from the log, stays right);
 * nothing at or beyond the last stable offset is touched; read_committed
 * answers (the latest committed value of every key) are the same before and
 * after cleaning and after a reopen.  A pass that would remove markers,
 * fenced just before it rewrites the aborted index, removes nothing.  Then
 * a pass that removes markers, crashed at every fsync and every rename: the
 * next leader serves either set, whole, with the same read_committed
 * answers.  An aborted transaction whose abort marker lies past the cleaned
 * range (issue 33) is still aborted, on POSIX and on the fault model. */
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
#include "util/crc32c.h"
#include "util/step.h"

#define T0 1700000000000ll
#define DR 100000ll            /* delete.retention.ms */
#define NK 8                   /* keys k0 .. k7 */

static struct kaas_log_config cfg(void)
{
	return lt_compact_cfg(4096, 1024, DR);
}

static void be(unsigned char *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* Append one batch of pid (-1: plain) with the keys k<from> .. k<from+n-1>,
 * each valued "<tag><n>"; transactional or not.  Returns its base offset. */
static int64_t put(struct kaas_log *log, int64_t pid, int16_t ep, int32_t seq, int txn, int from,
		   int n, const char *tag)
{
	struct lt_record r[NK];
	char keys[NK][8], vals[NK][24];
	for (int i = 0; i < n; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", (from + i) % NK);
		snprintf(vals[i], sizeof vals[i], "%s%d", tag, i);
		r[i] = (struct lt_record){ .key = keys[i], .value = vals[i], .ts = T0 + i };
	}
	size_t len;
	unsigned char *b = lt_keyed_batch(r, (uint32_t)n, T0, &len);
	be(b + 43, (uint64_t)pid, 8);
	be(b + 51, (uint64_t)(pid < 0 ? -1 : ep), 2);
	be(b + 53, (uint64_t)(pid < 0 ? -1 : seq), 4);
	if (txn)
		b[22] |= KAAS_BATCH_ATTR_TRANSACTIONAL;
	be(b + 17, kaas_crc32c(0, b + 21, len - 21), 4);
	struct kaas_log_batch d = lt_desc(b, len);
	int64_t off = kaas_log_append_sync(log, &d);
	free(b);
	assert_true(off >= 0);
	return off;
}

static int64_t marker(struct kaas_log *log, int64_t pid, int16_t ep, int commit)
{
	int64_t at = kaas_log_append_marker_sync(log, pid, ep, commit, 1);
	assert_true(at >= 0);
	return at;
}

/* --------------------------------------------------------------- reading */

#define MAXREC 1024
struct view {
	int n;                          /* records */
	int64_t off[MAXREC];
	char key[MAXREC][8], val[MAXREC][24];
	int nmark;                      /* markers */
	int64_t mark_at[256];
	int mark_attr[256];
	int latest[NK];                 /* index into off/val of each key's latest, -1 */
};

struct walk {
	struct view *v;
	int64_t last;
};

static int take(void *arg, int64_t offset, int64_t ts, const char *key, int64_t klen,
		const char *value, int64_t vlen)
{
	struct walk *w = arg;
	struct view *v = w->v;
	(void)ts;
	assert_true(v->n < MAXREC && klen > 0 && klen < 8 && vlen > 0 && vlen < 24);
	v->off[v->n] = offset;
	snprintf(v->key[v->n], 8, "%.*s", (int)klen, key);
	snprintf(v->val[v->n], 24, "%.*s", (int)vlen, value);
	v->latest[atoi(v->key[v->n] + 1)] = v->n;
	v->n++;
	w->last = offset;
	return 0;
}

/* Read [log start, LSO) as a read_committed consumer would (committed only:
 * the batches of the aborted transactions the log names are skipped), or
 * [log start, HWM) read_uncommitted.  Markers are listed either way. */
static void read_view(struct kaas_log *log, int committed, struct view *v)
{
	memset(v, 0, sizeof *v);
	for (int k = 0; k < NK; k++)
		v->latest[k] = -1;
	int64_t off = kaas_log_start_offset(log);
	int64_t end = committed ? kaas_log_last_stable_offset(log) : kaas_log_high_watermark(log);
	struct kaas_log_aborted_txn *ab = NULL;
	int nab = 0;
	if (committed)
		assert_true((nab = kaas_log_aborted_txns(log, off, end, &ab)) >= 0);
	while (off < end) {
		void *buf;
		size_t len;
		int64_t first;
		assert_int_equal(kaas_log_read_copy(log, off, 1 << 16, &buf, &len, &first), 0);
		if (!len)
			break;
		const unsigned char *b = buf;
		size_t pos = 0;
		while (pos + KAAS_BATCH_HEADER_LEN <= len) {
			struct kaas_batch_header h;
			assert_int_equal(kaas_batch_parse_header(b + pos, len - pos, &h), 0);
			size_t blen = (size_t)h.batch_length + 12;
			assert_true(pos + blen <= len && kaas_batch_crc_ok(b + pos, blen));
			int64_t next = h.base_offset + h.last_offset_delta + 1;
			if (h.base_offset >= end)
				break;
			int skip = 0;
			for (int i = 0; committed && i < nab; i++)
				if (ab[i].producer_id == h.producer_id &&
				    ab[i].first_offset <= h.base_offset &&
				    h.base_offset < ab[i].last_offset)
					skip = 1;
			if (h.attributes & KAAS_BATCH_ATTR_CONTROL) {
				assert_true(v->nmark < 256);
				v->mark_at[v->nmark] = h.base_offset;
				v->mark_attr[v->nmark++] = h.attributes;
			} else if (!skip) {
				struct walk w = { .v = v, .last = -1 };
				assert_int_equal(lt_walk_records(b + pos, blen, take, &w), 0);
			}
			off = next;
			pos += blen;
		}
		free(buf);
	}
	free(ab);
}

/* Whether the view holds a value starting with `tag`. */
static int has_tag(const struct view *v, const char *tag)
{
	for (int i = 0; i < v->n; i++)
		if (strncmp(v->val[i], tag, strlen(tag)) == 0)
			return 1;
	return 0;
}

/* Each key's latest value the same in both views. */
static void same_latest(const struct view *a, const struct view *b)
{
	for (int k = 0; k < NK; k++) {
		assert_int_equal(a->latest[k] < 0, b->latest[k] < 0);
		if (a->latest[k] >= 0) {
			assert_string_equal(a->val[a->latest[k]], b->val[b->latest[k]]);
			assert_int_equal(a->off[a->latest[k]], b->off[b->latest[k]]);
		}
	}
}

/* No key twice below `below`. */
static void compacted_below(const struct view *v, int64_t below)
{
	int seen[NK] = { 0 };
	for (int i = 0; i < v->n && v->off[i] < below; i++)
		assert_int_equal(seen[atoi(v->key[i] + 1)]++, 0);
}

static struct kaas_log *open_log(struct lt_fx *f, uint32_t epoch)
{
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(f->sub, f->env.dir, epoch, &c, &log), 0);
	return log;
}

static int clean(struct kaas_log *log, int64_t now, struct kaas_log_clean_stats *st)
{
	int rc = kaas_log_clean(log, now, 1, st);
	if (rc < 0)
		fail_msg("clean: %d %s", rc, kaas_sub_errdetail());
	return rc;
}

static int setup(void **state)
{
	return lt_fx_setup(state, "cleantxn");
}

/* The same fixture on the fault model: a fault+ URL over its location. */
static int setup_fault(void **state)
{
	if (lt_fx_setup(state, "cleantxn-fault") < 0)
		return -1;
	struct lt_fx *f = *state;
	char url[600];
	snprintf(url, sizeof url, "fault+%s?seed=5", f->env.url);
	struct kaas_substrate *s = NULL;
	if (kaas_substrate_open(url, &s) < 0) {
		lt_fx_teardown(state);
		return -1;
	}
	kaas_substrate_close(f->sub);
	f->sub = s;
	return 0;
}

/* ----------------------------------------------------------------- cases */

static void test_aborted_removed(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	put(log, 1, 0, 0, 1, 0, NK, "a");   /* aborted */
	put(log, 1, 0, 8, 1, 0, 4, "a");
	marker(log, 1, 0, 0);
	put(log, 1, 0, 12, 1, 4, 4, "c");   /* committed */
	marker(log, 1, 0, 1);
	put(log, -1, 0, 0, 0, 0, 2, "p");  /* plain */
	assert_int_equal(kaas_log_roll(log), 0);
	struct view before, after, committed;
	read_view(log, 0, &before);
	assert_true(has_tag(&before, "a"));
	read_view(log, 1, &committed);
	assert_false(has_tag(&committed, "a"));
	struct kaas_log_clean_stats st;
	assert_int_equal(clean(log, T0, &st), 1);
	assert_int_equal(st.aborted_removed, NK + 4);
	read_view(log, 0, &after);
	assert_false(has_tag(&after, "a"));
	same_latest(&committed, &after);
	read_view(log, 1, &after);
	same_latest(&committed, &after);
	assert_int_equal(kaas_log_close(log), 0);
}

static void test_committed_compacted(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	put(log, 2, 0, 0, 1, 0, NK, "c1-");
	marker(log, 2, 0, 1);
	put(log, 2, 0, 8, 1, 0, 4, "c2-");  /* supersedes k0..k3 */
	put(log, -1, 0, 0, 0, 4, 2, "p");  /* plain: supersedes k4, k5 */
	marker(log, 2, 0, 1);
	put(log, 2, 0, 12, 1, 6, 1, "c3-"); /* k6 */
	marker(log, 2, 0, 1);
	assert_int_equal(kaas_log_roll(log), 0);
	int64_t hwm = kaas_log_high_watermark(log);
	struct view before, after;
	read_view(log, 1, &before);
	assert_int_equal(before.n, NK + 4 + 2 + 1);
	assert_int_equal(clean(log, T0, NULL), 1);
	read_view(log, 1, &after);
	assert_int_equal(after.n, NK);     /* every key once: its latest committed value */
	compacted_below(&after, hwm);
	same_latest(&before, &after);
	read_view(log, 0, &after);
	assert_int_equal(after.n, NK);
	assert_int_equal(after.nmark, 3);  /* each transaction kept a record */
	assert_int_equal(kaas_log_close(log), 0);
	log = open_log(f, 2);
	read_view(log, 1, &after);
	same_latest(&before, &after);
	assert_int_equal(kaas_log_close(log), 0);
}

/* Producer 3: an aborted transaction, a committed one superseded by the next
 * committed one; producer 4: fenced (its abort written at a higher epoch).
 * The markers of the emptied transactions go after delete.retention.ms; the
 * last markers never; producer state rebuilt from the cleaned log. */
static void test_markers_two_phase(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	put(log, 3, 0, 0, 1, 0, 4, "a");
	int64_t m_abort = marker(log, 3, 0, 0);
	put(log, 3, 0, 4, 1, 0, 4, "c1-");
	int64_t m_c1 = marker(log, 3, 0, 1);
	put(log, 4, 5, 0, 1, 4, 4, "a");
	int64_t m_fence = marker(log, 4, 6, 0);  /* the coordinator fenced epoch 5 */
	put(log, 3, 0, 8, 1, 0, 4, "c2-");
	int64_t m_c2 = marker(log, 3, 0, 1);
	assert_int_equal(kaas_log_roll(log), 0);
	struct view committed, v;
	read_view(log, 1, &committed);
	struct kaas_log_aborted_txn *ab;
	assert_int_equal(kaas_log_aborted_txns(log, 0, INT64_MAX, &ab), 2);
	free(ab);

	/* Pass 1: the aborted records go, the emptied transactions' markers are
	 * stamped (producer 4's is its last batch: never stamped). */
	struct kaas_log_clean_stats st;
	assert_int_equal(clean(log, T0, &st), 1);
	assert_int_equal(st.markers_removed, 0);
	read_view(log, 0, &v);
	assert_int_equal(v.nmark, 4);
	for (int i = 0; i < v.nmark; i++) {
		int stamped = (v.mark_attr[i] & 0x40) != 0;
		assert_int_equal(stamped, v.mark_at[i] == m_abort || v.mark_at[i] == m_c1);
	}
	assert_false(has_tag(&v, "a"));
	/* Before the horizon: a pass keeps them; none is due without force. */
	assert_int_equal(kaas_log_clean(log, T0 + DR / 2, 0, NULL), 0);
	assert_int_equal(clean(log, T0 + DR / 2, &st), 1);
	assert_int_equal(st.markers_removed, 0);
	read_view(log, 0, &v);
	assert_int_equal(v.nmark, 4);
	/* After it: due without force, and they go, with the abort's index entry. */
	assert_int_equal(kaas_log_clean(log, T0 + DR + 1, 0, &st), 1);
	assert_int_equal(st.markers_removed, 2);
	read_view(log, 0, &v);
	assert_int_equal(v.nmark, 2);
	assert_true(v.mark_at[0] == m_fence && v.mark_at[1] == m_c2);
	assert_int_equal(kaas_log_aborted_txns(log, 0, INT64_MAX, &ab), 1);
	assert_int_equal(ab[0].last_offset, m_fence);
	free(ab);
	read_view(log, 1, &v);
	same_latest(&committed, &v);
	assert_int_equal(kaas_log_close(log), 0);

	/* The snapshot and index gone: producer state and index from the log. */
	char path[256];
	snprintf(path, sizeof path, "%s/producer-state.json", f->env.dir);
	assert_int_equal(kaas_sub_unlink(f->sub, path), 0);
	snprintf(path, sizeof path, "%s/aborted-txns.json", f->env.dir);
	(void)kaas_sub_unlink(f->sub, path);
	log = open_log(f, 2);
	struct kaas_log_producer p;
	assert_int_equal(kaas_log_producer_get(log, 4, &p), 0);
	assert_int_equal(p.epoch, 6);
	assert_int_equal(kaas_log_producer_get(log, 3, &p), 0);
	assert_int_equal(p.epoch, 0);
	assert_true(p.n >= 1);
	assert_int_equal(p.batches[p.n - 1].last_seq, 11); /* its last batch kept */
	assert_int_equal(kaas_log_last_stable_offset(log), kaas_log_high_watermark(log));
	assert_int_equal(kaas_log_aborted_txns(log, 0, INT64_MAX, &ab), 1);
	free(ab);
	read_view(log, 1, &v);
	same_latest(&committed, &v);
	/* The next sequence of producer 3 is accepted at its epoch. */
	put(log, 3, 0, 12, 1, 0, 1, "c3-");
	marker(log, 3, 0, 1);
	assert_int_equal(kaas_log_close(log), 0);
}

static void test_open_txn_untouched(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	put(log, -1, 0, 0, 0, 0, NK, "e");   /* early */
	assert_int_equal(kaas_log_roll(log), 0);
	int64_t lso = put(log, 5, 0, 0, 1, 0, 4, "o"); /* open */
	for (int i = 0; i < 4; i++) {
		put(log, -1, 0, 0, 0, 0, NK, i < 3 ? "l" : "m"); /* later, twice per key */
		assert_int_equal(kaas_log_roll(log), 0);
	}
	assert_int_equal(kaas_log_last_stable_offset(log), lso);
	struct view before, v;
	read_view(log, 0, &before);
	assert_true(clean(log, T0, NULL) >= 0);
	read_view(log, 0, &v);
	int nb = 0, na = 0;
	for (int i = 0; i < before.n; i++)
		nb += before.off[i] >= lso;
	for (int i = 0; i < v.n; i++)
		na += v.off[i] >= lso;
	assert_int_equal(na, nb);          /* at and beyond the LSO: every record */
	assert_true(has_tag(&v, "o"));
	/* Committed: now it is all cleanable. */
	marker(log, 5, 0, 1);
	assert_int_equal(kaas_log_roll(log), 0);
	assert_int_equal(clean(log, T0, NULL), 1);
	read_view(log, 1, &v);
	assert_int_equal(v.n, NK);
	assert_false(has_tag(&v, "o"));
	assert_false(has_tag(&v, "l"));
	assert_int_equal(kaas_log_close(log), 0);
}

/* Issue 33, defect 3: an aborted transaction whose abort marker went into
 * the next segment (a roll between its data and its abort).  The pass
 * cleans only the first segment, so the marker lies past the cleaned
 * range; the transaction is still aborted, and its records must not hide
 * the committed values of its keys before it. */
static void test_abort_past_cleaned_range(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	put(log, -1, 0, 0, 0, 0, NK, "v");  /* committed: every key */
	put(log, 6, 0, 0, 1, 0, NK, "a");   /* aborted below, after the roll */
	assert_int_equal(kaas_log_roll(log), 0);
	int64_t m = marker(log, 6, 0, 0);
	struct kaas_log_aborted_txn *ab;
	assert_int_equal(kaas_log_aborted_txns(log, 0, INT64_MAX, &ab), 1);
	assert_int_equal(ab[0].last_offset, m);
	free(ab);
	struct view committed, v;
	read_view(log, 1, &committed);
	assert_int_equal(committed.n, NK);
	assert_false(has_tag(&committed, "a"));
	struct kaas_log_clean_stats st;
	assert_int_equal(clean(log, T0, &st), 1);
	read_view(log, 1, &v);
	assert_int_equal(v.n, NK);         /* every key keeps its committed value */
	same_latest(&committed, &v);
	assert_int_equal(st.aborted_removed, NK);
	read_view(log, 0, &v);
	assert_false(has_tag(&v, "a"));
	same_latest(&committed, &v);
	assert_int_equal(kaas_log_close(log), 0);
	log = open_log(f, 2);
	read_view(log, 1, &v);
	same_latest(&committed, &v);
	assert_int_equal(kaas_log_close(log), 0);
}

/* Several producers, interleaved, over many segments. */
static void mixed(struct kaas_log *log, int rounds, int salt)
{
	int32_t seq[3] = { 0 };
	for (int r = 0; r < rounds; r++) {
		for (int p = 0; p < 3; p++) {
			char tag[12];
			int commit = (r + p + salt) % 3 != 0;
			snprintf(tag, sizeof tag, "%s%d.%d-", commit ? "c" : "a", r, p);
			int n = 1 + (r + p) % 4;
			put(log, 10 + p, 0, seq[p], 1, (r * 3 + p) % NK, n, tag);
			seq[p] += n;
		}
		put(log, -1, 0, 0, 0, r % NK, 1, "p");
		for (int p = 0; p < 3; p++)
			marker(log, 10 + p, 0, (r + p + salt) % 3 != 0);
	}
	assert_int_equal(kaas_log_roll(log), 0);
}

static void test_read_committed_unchanged(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	mixed(log, 30, 0);
	struct view before, v;
	read_view(log, 1, &before);
	assert_false(has_tag(&before, "a"));
	assert_int_equal(clean(log, T0, NULL), 1);
	mixed(log, 10, 1);
	struct view before2;
	read_view(log, 1, &before2);
	for (int pass = 0; pass < 3; pass++) {
		assert_true(clean(log, T0 + pass * DR, NULL) >= 0);
		read_view(log, 1, &v);
		same_latest(&before2, &v);
		read_view(log, 0, &v);
		assert_false(has_tag(&v, "a"));
		same_latest(&before2, &v);
	}
	assert_int_equal(kaas_log_close(log), 0);
	log = open_log(f, 2);
	read_view(log, 1, &v);
	same_latest(&before2, &v);
	read_view(log, 0, &v);
	assert_false(has_tag(&v, "a"));
	assert_int_equal(kaas_log_close(log), 0);
}

/* A newer leader claims the partition just before the pass that would
 * remove markers rewrites the aborted index: that pass fails fenced, and
 * the newer leader serves the old set (its markers, its answers). */
struct steal {
	struct lt_fx *f;
	struct kaas_substrate *sub;
	struct kaas_log *newer;
};

static void steal_hook(void *arg, const char *name)
{
	struct steal *s = arg;
	if (strcmp(name, "log.clean.txn-derived") != 0 || s->newer)
		return;
	struct kaas_log_config c = cfg();
	c.compact = 0;
	assert_int_equal(lt_open_elsewhere(&s->f->env, 2, &c, &s->sub, &s->newer), 0);
}

static void test_fenced_before_txn_derived(void **state)
{
	struct lt_fx *f = *state;
	struct kaas_log *log = open_log(f, 1);
	mixed(log, 12, 0);
	assert_int_equal(clean(log, T0, NULL), 1); /* stamps the emptied transactions' markers */
	struct view want, v;
	read_view(log, 1, &want);
	read_view(log, 0, &v);
	int marks = v.nmark;
	struct kaas_log_aborted_txn *ab;
	int nab = kaas_log_aborted_txns(log, 0, INT64_MAX, &ab);
	free(ab);
	struct steal s = { .f = f };
	kaas_step_set_hook(steal_hook, &s);
	assert_int_equal(kaas_log_clean(log, T0 + DR + 1, 1, NULL), KAAS_LOG_EFENCED);
	kaas_step_set_hook(NULL, NULL);
	assert_non_null(s.newer);
	assert_int_equal(kaas_log_status(log), KAAS_LOG_EFENCED);
	kaas_log_close(log);
	read_view(s.newer, 0, &v);
	assert_int_equal(v.nmark, marks);
	assert_int_equal(kaas_log_aborted_txns(s.newer, 0, INT64_MAX, &ab), nab);
	free(ab);
	read_view(s.newer, 1, &v);
	same_latest(&want, &v);
	assert_int_equal(kaas_log_close(s.newer), 0);
	kaas_substrate_close(s.sub);
}

/* ------------------------------------------------------------ crash sweep */

/* Epoch 1: transactions, a pass that stamps markers, more transactions. */
static void crash_prepare(struct lt_env *env, struct view *want)
{
	struct kaas_substrate *sub = lt_sub(env);
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	assert_int_equal(kaas_log_open(sub, env->dir, 1, &c, &log), 0);
	mixed(log, 12, 0);
	assert_int_equal(kaas_log_clean(log, T0, 1, NULL), 1);
	mixed(log, 4, 1);
	read_view(log, 1, want);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(sub);
}

/* The next leader's view: read_committed as before the crash; its own
 * passes end with no aborted record and no marker of an emptied one. */
static int crash_verify(struct lt_env *env, const struct view *want)
{
	struct kaas_substrate *sub = lt_sub(env);
	struct kaas_log_config c = cfg();
	struct kaas_log *log;
	int rc = kaas_log_open(sub, env->dir, 3, &c, &log);
	if (rc < 0)
		fail_msg("open after the crash: %d %s", rc, kaas_sub_errdetail());
	struct view v;
	read_view(log, 1, &v);
	same_latest(want, &v);
	read_view(log, 0, &v);
	int marks = v.nmark, set = has_tag(&v, "a") ? 1 : 2;
	assert_true(kaas_log_clean(log, T0 + 2 * DR + 2, 1, NULL) >= 0);
	assert_true(kaas_log_clean(log, T0 + 4 * DR + 4, 1, NULL) >= 0);
	read_view(log, 1, &v);
	same_latest(want, &v);
	read_view(log, 0, &v);
	assert_false(has_tag(&v, "a"));
	same_latest(want, &v);
	assert_true(v.nmark <= marks);
	/* The producers' last markers, and those of transactions holding a
	 * key's latest record. */
	assert_true(v.nmark <= 3 + NK);
	assert_int_equal(kaas_log_close(log), 0);
	kaas_substrate_close(sub);
	return set;
}

/* Every point, or every KAAS_CRASH_STRIDE-th (the slower suites set it). */
static unsigned crash_stride(void)
{
	const char *e = getenv("KAAS_CRASH_STRIDE");
	return e && atoi(e) > 0 ? (unsigned)atoi(e) : 1;
}

static void crash_sweep(const char *tag, int by_rename)
{
	unsigned crashes = 0, sets[3] = { 0 }, stride = crash_stride();
	struct view *want = malloc(sizeof *want);
	assert_non_null(want);
	for (unsigned n = 1; n < 500; n += stride) {
		struct lt_env env;
		assert_int_equal(lt_env_init(&env, tag), 0);
		crash_prepare(&env, want);
		struct kaas_crashsub_opts o = { .seed = n };
		if (by_rename)
			o.crash_at_rename = n;
		else
			o.crash_at_fsync = n;
		struct kaas_substrate *cs;
		assert_int_equal(kaas_crashsub_wrap(lt_sub(&env), &o, &cs), 0);
		struct kaas_log_config c = cfg();
		struct kaas_log *log;
		struct kaas_log_clean_stats st = { 0 };
		if (kaas_log_open(cs, env.dir, 2, &c, &log) == 0) {
			/* Removes the stamped markers and their index entries. */
			(void)kaas_log_clean(log, T0 + DR + 1, 1, &st);
			kaas_log_close(log);
		}
		int crashed = kaas_crashsub_crashed(cs);
		if (!crashed) /* the uncrashed pass did remove markers and records */
			assert_true(st.markers_removed > 0 && st.aborted_removed > 0);
		kaas_substrate_close(cs);
		sets[crash_verify(&env, want)]++;
		lt_env_fini(&env);
		if (!crashed)
			break;
		crashes++;
	}
	free(want);
	printf("# %s: %u crash points (every %u): %u left the old set, %u the cleaned one\n", tag,
	       crashes, stride, sets[1], sets[2]);
	assert_true(crashes * stride > 4);
	assert_true(sets[2] > 0 && (sets[1] > 0 || stride > 1));
}

static void test_crash_fsync(void **state)
{
	(void)state;
	crash_sweep("cleantxn-crash-fsync", 0);
}

static void test_crash_rename(void **state)
{
	(void)state;
	crash_sweep("cleantxn-crash-rename", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_aborted_removed, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_committed_compacted, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_markers_two_phase, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_txn_untouched, setup, lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_abort_past_cleaned_range, setup,
						lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_abort_past_cleaned_range, setup_fault,
						lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_committed_unchanged, setup,
						lt_fx_teardown),
		cmocka_unit_test_setup_teardown(test_fenced_before_txn_derived, setup,
						lt_fx_teardown),
		cmocka_unit_test(test_crash_fsync),
		cmocka_unit_test(test_crash_rename),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
