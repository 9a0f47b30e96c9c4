/*
 * chaos_txn.c — the transactional workload of a chaos run (issue 16):
 * a librdkafka transactional producer and the checker of what a
 * read_committed reader read.
 *
 *   chaos_txn produce BOOTSTRAP TOPIC NPART TXNID LOGFILE [PAUSE_US]
 *       Transactions until SIGTERM (the one under way is finished first).
 *       Transaction n of producer generation G writes K = 1 + n % 5 records
 *       "TXNID.G-n-k" (k = 0..K-1) to partition (n + k) % NPART, then
 *       commits, or aborts when n % 3 == 2 (after flushing the records:
 *       the abort reaches the coordinator as EndTxn(abort) and the aborted
 *       records are on the log for read_committed to skip).  Appends one line per
 *       transaction to LOGFILE once its outcome is known:
 *         "commit TXNID.G-n K"   commit_transaction succeeded
 *         "abort TXNID.G-n K"    abort_transaction succeeded
 *         "unknown TXNID.G-n K"  a fatal error (the producer is rebuilt as
 *                                generation G+1: its init fences the old one)
 *       transaction.timeout.ms is 10 s.  Prints "transactions N committed C
 *       aborted A unknown U" on stderr at the end.  Exit 0.
 *   chaos_txn lso BOOTSTRAP TOPIC NPART OUTFILE
 *       Until SIGTERM, every 200 ms: ListOffsets latest at read_committed
 *       (the last stable offset) of every partition; each change appended
 *       to OUTFILE as "PARTITION LSO".
 *   chaos_txn check LOGFILE READFILE [LSOFILE]
 *       READFILE: what "CHAOS_ISOLATION=read_committed chaos_client consume"
 *       read ("TOPIC PARTITION OFFSET VALUE"; its ends are the last stable
 *       offsets).
 *       Violations, as JSON on stdout ({"violation_count", "by_kind",
 *       "violations": [...]}; exit 1 when there are any, 2 on bad input):
 *         aborted_visible      a record of an aborted transaction was read
 *         committed_missing    no record of a committed transaction was read
 *         committed_partial    some but not all of its records were read
 *         unknown_partial      the same for a transaction of unknown outcome
 *         duplicate            a record read twice
 *         order                a transaction's records in one partition out
 *                              of order
 *         unlogged_visible     a record of a transaction never logged
 *         lso_backwards        (LSOFILE) a partition's LSO went down
 *   chaos_txn ctp BOOTSTRAP INTOPIC NPART OUTTOPIC COMPTOPIC NOUT GROUP TXNID
 *                 LOGFILE SEENFILE
 *       Consume-transform-produce until SIGTERM (the transaction under way is
 *       finished first): a read_committed consumer of group GROUP, assigned
 *       every partition of INTOPIC at its committed offset, reads up to 8
 *       records (each appended to SEENFILE as "MS PARTITION OFFSET VALUE",
 *       MS the wall clock when it was read); one transaction of producer
 *       TXNID writes, for each, "TAG|P|O|VALUE" to OUTTOPIC and, keyed
 *       "pP.(O % 8)" with header id "TAG|P|O", "TAG|P|O" to COMPTOPIC
 *       (compacted), both in partition P % NOUT, sends the consumer's
 *       positions with send_offsets_to_transaction and commits; every
 *       fourth transaction is aborted instead (after a flush) and read
 *       again from the committed offsets.  LOGFILE as for produce, with the
 *       number of input records for K.
 *   chaos_txn committed BOOTSTRAP GROUP TOPIC NPART OUTFILE
 *       GROUP's committed offsets of TOPIC as a read_committed consumer
 *       fetches them: "PARTITION OFFSET" lines (-1 none).  Exit 1 when they
 *       could not be fetched in 60 s.
 *   chaos_txn ctp-check TXNLOG INREAD CTPLOG SEEN OUTREAD COMMITTED COMPREAD
 *       Exactly-once of consume-transform-produce.  TXNLOG: produce's log of
 *       the input's transactions (its fourth field: when commit_transaction
 *       was first called, ms, -1 never); INREAD: a read_committed read of
 *       the input after the run; CTPLOG, SEEN: ctp's files; OUTREAD: a
 *       read_committed read of OUTTOPIC; COMMITTED: the committed output of
 *       "committed"; COMPREAD: a read_committed read of COMPTOPIC after
 *       cleaning, in chaos_client's key-value format.  Violations as check:
 *         visible_before_commit  the transformer (read_committed) read an
 *                                input record before its transaction's
 *                                commit was called, or of one never
 *                                committed
 *         seen_aborted           ... a record of an aborted transaction
 *         ctp_aborted_visible    an output of an aborted ctp transaction read
 *         ctp_unlogged           an output of a transaction ctp never logged
 *         ctp_duplicate          an input record transformed twice in the
 *                                committed output
 *         offsets_without_output a committed input record below the group's
 *                                committed offset has no committed output
 *         output_without_offsets a committed output of an input record at or
 *                                above the committed offset
 *         committed_value_lost   a key of the compacted output whose last
 *                                committed value is missing after cleaning
 *         committed_value_stale  ... read with an older value last
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static rd_kafka_conf_t *conf_for(const char *bootstrap)
{
	char err[512];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
	rd_kafka_conf_set(c, "reconnect.backoff.max.ms", "200", err, sizeof(err));
	return c;
}

/* ------------------------------------------------------------ produce */

static rd_kafka_t *new_producer(const char *bootstrap, const char *txnid)
{
	char err[512];
	rd_kafka_conf_t *c = conf_for(bootstrap);
	if (rd_kafka_conf_set(c, "transactional.id", txnid, err, sizeof(err)) != RD_KAFKA_CONF_OK ||
	    rd_kafka_conf_set(c, "transaction.timeout.ms", "10000", err, sizeof(err)) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "chaos_txn: %s\n", err);
		rd_kafka_conf_destroy(c);
		return NULL;
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk)
		fprintf(stderr, "chaos_txn: %s\n", err);
	return rk;
}

/* init (0), commit (1) or abort (2), retried while the error is
 * retriable (at most 20 times, 1 s apart): the final error, NULL on success. */
static rd_kafka_error_t *txn_call(rd_kafka_t *rk, int what)
{
	rd_kafka_error_t *e = NULL;
	for (int try = 0; try < 20; try++) {
		e = what == 0 ? rd_kafka_init_transactions(rk, 30000)
		  : what == 1 ? rd_kafka_commit_transaction(rk, 30000)
			      : rd_kafka_abort_transaction(rk, 30000);
		if (!e || !rd_kafka_error_is_retriable(e) || try == 19)
			break;
		rd_kafka_error_destroy(e);
		sleep(1);
	}
	return e;
}

enum outcome { COMMITTED, ABORTED, UNKNOWN };

/* The wall clock in ms (the producer's commit calls and the transformer's
 * reads are compared across processes of one host). */
static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One transaction: its outcome (UNKNOWN after a fatal error); *t0: when
 * commit_transaction was first called (-1: never). */
static enum outcome one_txn(rd_kafka_t *rk, const char *topic, int npart, const char *tag,
			    long n, int k, int abort, long long *t0)
{
	*t0 = -1;
	rd_kafka_error_t *e = rd_kafka_begin_transaction(rk);
	if (e) {
		int fatal = rd_kafka_error_is_fatal(e);
		fprintf(stderr, "chaos_txn: begin %s: %s\n", tag, rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
		return fatal ? UNKNOWN : ABORTED; /* nothing produced yet */
	}
	for (int i = 0; i < k; i++) {
		char v[160];
		int len = snprintf(v, sizeof v, "%s-%d", tag, i);
		rd_kafka_resp_err_t err;
		while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
						RD_KAFKA_V_PARTITION((int32_t)((n + i) % npart)),
						RD_KAFKA_V_VALUE(v, (size_t)len),
						RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
						RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 100);
		if (err) {
			fprintf(stderr, "chaos_txn: produce %s: %s\n", v, rd_kafka_err2str(err));
			abort = 1;
			break;
		}
	}
	if (!abort) {
		*t0 = now_ms();
		e = txn_call(rk, 1);
		if (!e)
			return COMMITTED;
		fprintf(stderr, "chaos_txn: commit %s: %s\n", tag, rd_kafka_error_string(e));
		int fatal = rd_kafka_error_is_fatal(e), must_abort = rd_kafka_error_txn_requires_abort(e);
		rd_kafka_error_destroy(e);
		if (fatal || !must_abort)
			return UNKNOWN;
	} else {
		/* A chosen abort: the records go out first.  abort_transaction
		 * purges what is still queued, and when nothing of the
		 * transaction reached the broker (no AddPartitionsToTxn sent)
		 * librdkafka ends it locally without an EndTxn: the abort would
		 * never reach the coordinator nor put aborted records on the log
		 * for read_committed to skip.  A failed delivery here is the
		 * abort's business. */
		rd_kafka_flush(rk, 30000);
	}
	e = txn_call(rk, 2);
	if (!e)
		return ABORTED;
	fprintf(stderr, "chaos_txn: abort %s: %s\n", tag, rd_kafka_error_string(e));
	rd_kafka_error_destroy(e);
	return UNKNOWN;
}

static int produce(const char *bootstrap, const char *topic, int npart, const char *txnid,
		   const char *logfile, long pause_us)
{
	FILE *log = fopen(logfile, "a");
	if (!log) {
		perror(logfile);
		return 2;
	}
	long counts[3] = { 0, 0, 0 }, total = 0;
	for (int gen = 0; !stop; gen++) {
		rd_kafka_t *rk = new_producer(bootstrap, txnid);
		if (!rk)
			return 2;
		rd_kafka_error_t *e = txn_call(rk, 0);
		if (e) {
			fprintf(stderr, "chaos_txn: init: %s\n", rd_kafka_error_string(e));
			rd_kafka_error_destroy(e);
			rd_kafka_destroy(rk);
			sleep(1);
			continue;
		}
		for (long n = 0; !stop; n++) {
			char tag[128];
			snprintf(tag, sizeof tag, "%s.%d-%ld", txnid, gen, n);
			int k = 1 + (int)(n % 5);
			long long t0;
			enum outcome o = one_txn(rk, topic, npart, tag, n, k, n % 3 == 2, &t0);
			static const char *const word[] = { "commit", "abort", "unknown" };
			fprintf(log, "%s %s %d %lld\n", word[o], tag, k, t0);
			fflush(log);
			counts[o]++;
			total++;
			if (o == UNKNOWN)
				break; /* a new generation fences this one */
			if (pause_us > 0)
				usleep((useconds_t)pause_us);
		}
		rd_kafka_destroy(rk);
	}
	fclose(log);
	fprintf(stderr, "transactions %ld committed %ld aborted %ld unknown %ld\n", total,
		counts[COMMITTED], counts[ABORTED], counts[UNKNOWN]);
	return 0;
}

/* ---------------------------------------------------------------- lso */

/* Every 200 ms until SIGTERM, ListOffsets latest at read_committed (the
 * LSO) of every partition; each change appended to OUTFILE as "PARTITION
 * LSO".  Exit 0. */
static int watch_lso(const char *bootstrap, const char *topic, int npart, const char *file)
{
	FILE *out = fopen(file, "a");
	if (!out) {
		perror(file);
		return 2;
	}
	char err[512];
	rd_kafka_conf_t *c = conf_for(bootstrap);
	rd_kafka_conf_set(c, "isolation.level", "read_committed", err, sizeof(err));
	rd_kafka_conf_set(c, "group.id", "chaos-txn-lso", err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_txn: %s\n", err);
		fclose(out);
		return 2;
	}
	int64_t *last = calloc((size_t)npart, sizeof *last);
	for (int p = 0; p < npart; p++)
		last[p] = -1;
	while (!stop) {
		for (int p = 0; p < npart && !stop; p++) {
			int64_t lo, hi;
			if (rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 2000) ||
			    hi == last[p])
				continue;
			fprintf(out, "%d %lld\n", p, (long long)hi);
			fflush(out);
			last[p] = hi;
		}
		usleep(200000);
	}
	free(last);
	rd_kafka_destroy(rk);
	fclose(out);
	return 0;
}

/* -------------------------------------------------------------- check */

struct txn {
	char tag[128];
	int outcome;   /* 0 commit, 1 abort, 2 unknown */
	int k;
	int seen;
	int last_k[64]; /* per partition (mod 64): the last k read, -1 none */
	char *got;     /* per k: read already */
};

static struct txn *txns;
static size_t ntxns;
static int nviol, by_kind[8];
static const char *const kinds[] = { "aborted_visible", "committed_missing", "committed_partial",
				     "unknown_partial", "duplicate", "order", "unlogged_visible",
				     "lso_backwards" };

static void violation(int kind, const char *what)
{
	printf("%s{\"kind\":\"%s\",\"detail\":\"%s\"}", nviol ? "," : "", kinds[kind], what);
	nviol++;
	by_kind[kind]++;
}

static struct txn *find_txn(const char *tag)
{
	for (size_t i = ntxns; i-- > 0;)
		if (strcmp(txns[i].tag, tag) == 0)
			return &txns[i];
	return NULL;
}

/* The LSO file of watch_lso: a partition's LSO never goes down. */
static void check_lso(const char *lsofile)
{
	FILE *f = fopen(lsofile, "r");
	if (!f)
		return;
	long long last[64], v;
	int p;
	memset(last, 0xff, sizeof last);
	while (fscanf(f, "%d %lld", &p, &v) == 2) {
		if (p < 0 || p >= 64)
			continue;
		if (v < last[p]) {
			char what[120];
			snprintf(what, sizeof what, "partition %d: LSO %lld after %lld", p, v, last[p]);
			violation(7, what);
		}
		last[p] = v;
	}
	fclose(f);
}

static int check(const char *logfile, const char *readfile, const char *lsofile)
{
	FILE *lf = fopen(logfile, "r"), *rf = fopen(readfile, "r");
	if (!lf || !rf) {
		perror(!lf ? logfile : readfile);
		return 2;
	}
	char word[16], tag[128], line[512];
	int k;
	size_t cap = 0;
	while (fgets(line, sizeof line, lf)) {
		if (sscanf(line, "%15s %127s %d", word, tag, &k) != 3 || k < 1 || k > 64)
			return 2;
		if (ntxns == cap) {
			cap = cap ? cap * 2 : 256;
			txns = realloc(txns, cap * sizeof *txns);
		}
		struct txn *t = &txns[ntxns++];
		memset(t, 0, sizeof *t);
		snprintf(t->tag, sizeof t->tag, "%s", tag);
		t->outcome = strcmp(word, "commit") == 0 ? 0 : strcmp(word, "abort") == 0 ? 1 : 2;
		t->k = k;
		t->got = calloc((size_t)k, 1);
		memset(t->last_k, 0xff, sizeof t->last_k);
	}
	printf("{\"violations\":[");
	while (fgets(line, sizeof line, rf)) {
		int part;
		long long off;
		char topic[128], value[200];
		if (sscanf(line, "%127s %d %lld %199s", topic, &part, &off, value) != 4)
			continue;
		char *dash = strrchr(value, '-');
		if (!dash)
			continue;
		*dash = 0;
		int i = atoi(dash + 1);
		struct txn *t = find_txn(value);
		char what[300];
		snprintf(what, sizeof what, "%s-%d at partition %d offset %lld", value, i, part, off);
		if (!t) {
			violation(6, what);
			continue;
		}
		if (t->outcome == 1)
			violation(0, what);
		if (i < 0 || i >= t->k)
			continue;
		if (t->got[i]) {
			violation(4, what);
			continue;
		}
		t->got[i] = 1;
		t->seen++;
		int *last = &t->last_k[part & 63];
		if (*last > i)
			violation(5, what);
		*last = i;
	}
	for (size_t i = 0; i < ntxns; i++) {
		struct txn *t = &txns[i];
		char what[200];
		snprintf(what, sizeof what, "%s: %d of %d records read", t->tag, t->seen, t->k);
		if (t->outcome == 0 && t->seen == 0)
			violation(1, what);
		else if (t->outcome == 0 && t->seen < t->k)
			violation(2, what);
		else if (t->outcome == 2 && t->seen && t->seen < t->k)
			violation(3, what);
	}
	if (lsofile)
		check_lso(lsofile);
	printf("],\"violation_count\":%d,\"by_kind\":{", nviol);
	for (int i = 0; i < 8; i++)
		printf("%s\"%s\":%d", i ? "," : "", kinds[i], by_kind[i]);
	printf("},\"transactions\":%zu}\n", ntxns);
	fclose(lf);
	fclose(rf);
	return nviol ? 1 : 0;
}

/* ---------------------------------------------------------------- ctp */

#define CTP_BATCH 8

struct in_rec {
	int32_t part;
	long long off;
	char value[160];
};

/* A read_committed consumer of group `group` assigned every partition of
 * `topic` at its committed offset (the beginning when there is none). */
static rd_kafka_t *ctp_consumer(const char *bootstrap, const char *group, const char *topic,
				int npart)
{
	char err[512];
	rd_kafka_conf_t *c = conf_for(bootstrap);
	rd_kafka_conf_set(c, "group.id", group, err, sizeof(err));
	rd_kafka_conf_set(c, "isolation.level", "read_committed", err, sizeof(err));
	rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof(err));
	rd_kafka_conf_set(c, "auto.offset.reset", "earliest", err, sizeof(err));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "chaos_txn: %s\n", err);
		return NULL;
	}
	rd_kafka_poll_set_consumer(rk);
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(npart);
	for (int p = 0; p < npart; p++)
		rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_STORED;
	rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		fprintf(stderr, "chaos_txn: assign: %s\n", rd_kafka_err2str(e));
		rd_kafka_destroy(rk);
		return NULL;
	}
	return rk;
}

static void ctp_close(rd_kafka_t *c)
{
	rd_kafka_consumer_close(c);
	rd_kafka_destroy(c);
}

/* Up to CTP_BATCH records read within about 300 ms; each is appended to
 * `seen` as "MS PARTITION OFFSET VALUE" (MS: when it was read). */
static int ctp_read(rd_kafka_t *c, FILE *seen, struct in_rec *r)
{
	int n = 0;
	long long end = now_ms() + 300;
	while (n < CTP_BATCH && now_ms() < end && !stop) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
		if (!m)
			continue;
		if (m->err) {
			if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
				fprintf(stderr, "chaos_txn: ctp consume: %s\n", rd_kafka_message_errstr(m));
		} else {
			r[n].part = m->partition;
			r[n].off = m->offset;
			snprintf(r[n].value, sizeof r[n].value, "%.*s", (int)(m->len < 150 ? m->len : 150),
				 m->payload ? (const char *)m->payload : "");
			fprintf(seen, "%lld %d %lld %s\n", now_ms(), (int)r[n].part, r[n].off, r[n].value);
			n++;
		}
		rd_kafka_message_destroy(m);
	}
	fflush(seen);
	return n;
}

/* send_offsets_to_transaction, retried like txn_call. */
static rd_kafka_error_t *ctp_offsets(rd_kafka_t *rk, rd_kafka_t *c, const char *topic,
				     const struct in_rec *r, int n)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
	for (int i = 0; i < n; i++) {
		rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_find(l, topic, r[i].part);
		if (!tp)
			tp = rd_kafka_topic_partition_list_add(l, topic, r[i].part);
		if (tp->offset < r[i].off + 1)
			tp->offset = r[i].off + 1;
	}
	rd_kafka_consumer_group_metadata_t *md = rd_kafka_consumer_group_metadata(c);
	rd_kafka_error_t *e = NULL;
	for (int try = 0; try < 20; try++) {
		e = rd_kafka_send_offsets_to_transaction(rk, l, md, 30000);
		if (!e || !rd_kafka_error_is_retriable(e) || try == 19)
			break;
		rd_kafka_error_destroy(e);
		sleep(1);
	}
	rd_kafka_consumer_group_metadata_destroy(md);
	rd_kafka_topic_partition_list_destroy(l);
	return e;
}

/* One consume-transform-produce transaction over r[0..n-1]: its outcome. */
static enum outcome ctp_txn(rd_kafka_t *rk, rd_kafka_t *c, const char *in, const char *out,
			    const char *comp, int nout, const char *tag, const struct in_rec *r, int n,
			    int abort, long long *t0)
{
	*t0 = -1;
	rd_kafka_error_t *e = rd_kafka_begin_transaction(rk);
	if (e) {
		int fatal = rd_kafka_error_is_fatal(e);
		fprintf(stderr, "chaos_txn: ctp begin %s: %s\n", tag, rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
		return fatal ? UNKNOWN : ABORTED;
	}
	int failed = 0;
	for (int i = 0; i < n && !failed; i++) {
		char v[300], key[48], id[160];
		int vl = snprintf(v, sizeof v, "%s|%d|%lld|%s", tag, (int)r[i].part, r[i].off, r[i].value);
		int kl = snprintf(key, sizeof key, "p%d.%lld", (int)r[i].part, r[i].off % 8);
		int il = snprintf(id, sizeof id, "%s|%d|%lld", tag, (int)r[i].part, r[i].off);
		rd_kafka_resp_err_t err;
		while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(out),
						RD_KAFKA_V_PARTITION(r[i].part % nout),
						RD_KAFKA_V_VALUE(v, (size_t)vl),
						RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
						RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 100);
		while (!err && (err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(comp),
							RD_KAFKA_V_PARTITION(r[i].part % nout),
							RD_KAFKA_V_KEY(key, (size_t)kl),
							RD_KAFKA_V_VALUE(id, (size_t)il),
							RD_KAFKA_V_HEADER("id", id, il),
							RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
							RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(rk, 100);
		if (err) {
			fprintf(stderr, "chaos_txn: ctp produce %s: %s\n", v, rd_kafka_err2str(err));
			failed = abort = 1;
		}
	}
	if (!abort) {
		e = ctp_offsets(rk, c, in, r, n);
		if (e) {
			fprintf(stderr, "chaos_txn: ctp offsets %s: %s\n", tag, rd_kafka_error_string(e));
			int fatal = rd_kafka_error_is_fatal(e);
			rd_kafka_error_destroy(e);
			if (fatal)
				return UNKNOWN;
			abort = 1;
		}
	}
	if (!abort) {
		*t0 = now_ms();
		e = txn_call(rk, 1);
		if (!e)
			return COMMITTED;
		fprintf(stderr, "chaos_txn: ctp commit %s: %s\n", tag, rd_kafka_error_string(e));
		int fatal = rd_kafka_error_is_fatal(e), must_abort = rd_kafka_error_txn_requires_abort(e);
		rd_kafka_error_destroy(e);
		if (fatal || !must_abort)
			return UNKNOWN;
	} else {
		rd_kafka_flush(rk, 30000); /* the aborted records reach the log (see one_txn) */
	}
	e = txn_call(rk, 2);
	if (!e)
		return ABORTED;
	fprintf(stderr, "chaos_txn: ctp abort %s: %s\n", tag, rd_kafka_error_string(e));
	rd_kafka_error_destroy(e);
	return UNKNOWN;
}

static int ctp(const char *bootstrap, const char *in, int npart, const char *out,
	       const char *comp, int nout, const char *group, const char *txnid,
	       const char *logfile, const char *seenfile)
{
	FILE *log = fopen(logfile, "a"), *seen = fopen(seenfile, "a");
	if (!log || !seen) {
		perror(!log ? logfile : seenfile);
		return 2;
	}
	long counts[3] = { 0, 0, 0 }, total = 0, records = 0;
	struct in_rec r[CTP_BATCH];
	for (int gen = 0; !stop; gen++) {
		rd_kafka_t *rk = new_producer(bootstrap, txnid);
		if (!rk)
			return 2;
		rd_kafka_error_t *e = txn_call(rk, 0);
		if (e) {
			fprintf(stderr, "chaos_txn: ctp init: %s\n", rd_kafka_error_string(e));
			rd_kafka_error_destroy(e);
			rd_kafka_destroy(rk);
			sleep(1);
			continue;
		}
		rd_kafka_t *c = NULL;
		for (long n = 0; !stop;) {
			if (!c && !(c = ctp_consumer(bootstrap, group, in, npart))) {
				sleep(1);
				continue;
			}
			int k = ctp_read(c, seen, r);
			if (k == 0)
				continue;
			char tag[128];
			snprintf(tag, sizeof tag, "%s.%d-%ld", txnid, gen, n);
			long long t0;
			enum outcome o = ctp_txn(rk, c, in, out, comp, nout, tag, r, k, n % 4 == 3, &t0);
			static const char *const word[] = { "commit", "abort", "unknown" };
			fprintf(log, "%s %s %d %lld\n", word[o], tag, k, t0);
			fflush(log);
			counts[o]++;
			total++;
			records += k;
			n++;
			if (o != COMMITTED) {
				/* Read again from the committed offsets: a new
				 * consumer (after the abort's markers). */
				ctp_close(c);
				c = NULL;
			}
			if (o == UNKNOWN)
				break; /* a new generation fences this one */
		}
		if (c)
			ctp_close(c);
		rd_kafka_destroy(rk);
	}
	fclose(log);
	fclose(seen);
	fprintf(stderr, "ctp transactions %ld committed %ld aborted %ld unknown %ld, %ld input "
		"records\n", total, counts[COMMITTED], counts[ABORTED], counts[UNKNOWN], records);
	return 0;
}

/* The committed offsets of `group` for every partition of `topic`, as a
 * read_committed consumer fetches them (retried for 60 s): "PARTITION
 * OFFSET" lines (-1: none).  0, or 1 when they could not be fetched. */
static int committed(const char *bootstrap, const char *group, const char *topic, int npart,
		     const char *file)
{
	char err[512];
	rd_kafka_conf_t *cf = conf_for(bootstrap);
	rd_kafka_conf_set(cf, "group.id", group, err, sizeof(err));
	rd_kafka_conf_set(cf, "isolation.level", "read_committed", err, sizeof(err));
	rd_kafka_conf_set(cf, "enable.auto.commit", "false", err, sizeof(err));
	rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, cf, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "chaos_txn: %s\n", err);
		return 2;
	}
	int ok = 0;
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(npart);
	for (int p = 0; p < npart; p++)
		rd_kafka_topic_partition_list_add(l, topic, p);
	for (int try = 0; try < 60 && !ok; try++) {
		rd_kafka_resp_err_t e = rd_kafka_committed(c, l, 10000);
		ok = !e;
		for (int i = 0; ok && i < l->cnt; i++)
			ok = !l->elems[i].err;
		if (!ok) {
			fprintf(stderr, "chaos_txn: committed: %s\n",
				rd_kafka_err2str(e ? e : l->elems[0].err));
			sleep(1);
		}
	}
	FILE *f = ok ? fopen(file, "w") : NULL;
	if (f) {
		for (int i = 0; i < l->cnt; i++)
			fprintf(f, "%d %lld\n", (int)l->elems[i].partition,
				l->elems[i].offset < 0 ? -1LL : (long long)l->elems[i].offset);
		fclose(f);
	}
	rd_kafka_topic_partition_list_destroy(l);
	rd_kafka_destroy(c);
	return f ? 0 : 1;
}

/* ---------------------------------------------------------- ctp-check */

#define CTP_PARTS 64

static const char *const ctp_kinds[] = {
	"visible_before_commit", "seen_aborted", "ctp_aborted_visible", "ctp_unlogged",
	"ctp_duplicate", "offsets_without_output", "output_without_offsets",
	"committed_value_lost", "committed_value_stale",
};
#define CTP_NKINDS (int)(sizeof ctp_kinds / sizeof ctp_kinds[0])
static int ctp_nviol, ctp_by_kind[CTP_NKINDS];

static void ctp_violation(int kind, const char *what)
{
	printf("%s{\"kind\":\"%s\",\"detail\":\"%s\"}", ctp_nviol ? "," : "", ctp_kinds[kind], what);
	ctp_nviol++;
	ctp_by_kind[kind]++;
}

/* A transaction log of produce or ctp: tag, outcome, commit start. */
struct logged {
	char tag[128];
	int outcome; /* 0 commit, 1 abort, 2 unknown */
	long long t0;
};

static struct logged *read_log(const char *file, size_t *n)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		perror(file);
		return NULL;
	}
	struct logged *l = NULL;
	size_t cap = 0;
	char line[512], word[16], tag[128];
	int k;
	*n = 0;
	while (fgets(line, sizeof line, f)) {
		long long t0 = -1;
		if (sscanf(line, "%15s %127s %d %lld", word, tag, &k, &t0) < 3) {
			fprintf(stderr, "chaos_txn: %s: malformed line: %s", file, line);
			free(l);
			fclose(f);
			return NULL;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			l = realloc(l, cap * sizeof *l);
		}
		struct logged *e = &l[(*n)++];
		snprintf(e->tag, sizeof e->tag, "%s", tag);
		e->outcome = !strcmp(word, "commit") ? 0 : !strcmp(word, "abort") ? 1 : 2;
		e->t0 = t0;
	}
	fclose(f);
	if (!l)
		l = calloc(1, sizeof *l);
	return l;
}

static const struct logged *find_logged(const struct logged *l, size_t n, const char *tag)
{
	for (size_t i = n; i-- > 0;)
		if (!strcmp(l[i].tag, tag))
			return &l[i];
	return NULL;
}

/* Per input partition: which offsets the committed input holds, how many
 * committed outputs each has, and per key (offset % 8) the newest. */
struct ctp_part {
	long long cap;
	char *in;            /* in[o]: a committed input record at o */
	unsigned char *outs; /* outs[o]: committed outputs of o */
	long long newest[8]; /* per key: the highest input offset output, -1 */
	long long committed; /* the group's committed offset, -1 none */
};

static void ctp_grow(struct ctp_part *p, long long o)
{
	if (o < p->cap)
		return;
	long long cap = p->cap ? p->cap : 1024;
	while (cap <= o)
		cap *= 2;
	p->in = realloc(p->in, (size_t)cap);
	p->outs = realloc(p->outs, (size_t)cap);
	memset(p->in + p->cap, 0, (size_t)(cap - p->cap));
	memset(p->outs + p->cap, 0, (size_t)(cap - p->cap));
	p->cap = cap;
}

/* "TAG|P|O[|...]": the tag, P and O; 0, or -1 when not that shape. */
static int split_out(char *v, int *part, long long *off)
{
	char *a = strchr(v, '|');
	if (!a)
		return -1;
	*a = 0;
	char *end;
	long pl = strtol(a + 1, &end, 10);
	if (*end != '|' || pl < 0 || pl >= CTP_PARTS)
		return -1;
	long long o = strtoll(end + 1, &end, 10);
	if ((*end != '|' && *end != 0) || o < 0 || o > (1LL << 30))
		return -1;
	*part = (int)pl;
	*off = o;
	return 0;
}

/* ctp-check TXNLOG INREAD CTPLOG SEEN OUTREAD COMMITTED COMPREAD. */
static int ctp_check(char **a)
{
	size_t np, nc;
	struct logged *prod = read_log(a[0], &np), *ctl = read_log(a[2], &nc);
	FILE *in = fopen(a[1], "r"), *seen = fopen(a[3], "r"), *out = fopen(a[4], "r"),
	     *com = fopen(a[5], "r"), *comp = fopen(a[6], "r");
	if (!prod || !ctl || !in || !seen || !out || !com || !comp) {
		fprintf(stderr, "chaos_txn: ctp-check: an input is missing or malformed\n");
		free(prod);
		free(ctl);
		FILE *fs[] = { in, seen, out, com, comp };
		for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
			if (fs[i])
				fclose(fs[i]);
		return 2;
	}
	static struct ctp_part parts[CTP_PARTS];
	for (int p = 0; p < CTP_PARTS; p++) {
		memset(parts[p].newest, 0xff, sizeof parts[p].newest);
		parts[p].committed = -1;
	}
	char line[600], topic[128], value[400], what[1200];
	int part;
	long long off, ms;
	printf("{\"violations\":[");
	/* The input a read_committed reader read after the run. */
	while (fgets(line, sizeof line, in))
		if (sscanf(line, "%127s %d %lld %399s", topic, &part, &off, value) == 4 && part >= 0 &&
		    part < CTP_PARTS && off >= 0 && off < (1LL << 30)) {
			ctp_grow(&parts[part], off);
			parts[part].in[off] = 1;
		}
	/* What the transformer read during the run, and when. */
	long nseen = 0;
	while (fgets(line, sizeof line, seen)) {
		if (sscanf(line, "%lld %d %lld %399s", &ms, &part, &off, value) != 4)
			continue;
		nseen++;
		char *dash = strrchr(value, '-');
		if (!dash)
			continue;
		*dash = 0;
		const struct logged *t = find_logged(prod, np, value);
		if (!t)
			continue; /* the producer's log says nothing of it (checked on the read) */
		snprintf(what, sizeof what, "%s-%s at partition %d offset %lld read at %lld, commit "
			 "called at %lld", value, dash + 1, part, off, ms, t->t0);
		if (t->outcome == 1)
			ctp_violation(1, what);
		else if (t->t0 < 0 || ms < t->t0)
			ctp_violation(0, what);
	}
	/* The committed output (not compacted). */
	long nout = 0;
	while (fgets(line, sizeof line, out)) {
		long long ooff;
		int opart, ip;
		long long io;
		if (sscanf(line, "%127s %d %lld %399s", topic, &opart, &ooff, value) != 4)
			continue;
		nout++;
		snprintf(what, sizeof what, "%s at %s/%d offset %lld", value, topic, opart, ooff);
		if (split_out(value, &ip, &io) < 0) {
			ctp_violation(3, what);
			continue;
		}
		const struct logged *t = find_logged(ctl, nc, value);
		if (!t)
			ctp_violation(3, what);
		else if (t->outcome == 1)
			ctp_violation(2, what);
		struct ctp_part *p = &parts[ip];
		ctp_grow(p, io);
		if (p->outs[io] < 255 && ++p->outs[io] == 2)
			ctp_violation(4, what);
		if (io > p->newest[io % 8])
			p->newest[io % 8] = io;
	}
	/* The group's committed input offsets. */
	while (fgets(line, sizeof line, com))
		if (sscanf(line, "%d %lld", &part, &off) == 2 && part >= 0 && part < CTP_PARTS)
			parts[part].committed = off;
	for (int p = 0; p < CTP_PARTS; p++) {
		struct ctp_part *c = &parts[p];
		for (long long o = 0; o < c->cap; o++) {
			snprintf(what, sizeof what, "input partition %d offset %lld, committed offset %lld",
				 p, o, c->committed);
			if (c->in[o] && o < c->committed && !c->outs[o])
				ctp_violation(5, what);
			else if (c->outs[o] && o >= c->committed)
				ctp_violation(6, what);
		}
	}
	/* The compacted output after cleaning: each key's last committed value. */
	long long last[CTP_PARTS][8];
	memset(last, 0xff, sizeof last);
	long ncomp = 0;
	while (fgets(line, sizeof line, comp)) {
		char key[64], kind[8];
		int cpart, ip;
		long long coff, io;
		if (sscanf(line, "%127s %d %lld %63s %7s %399s", topic, &cpart, &coff, key, kind,
			   value) != 6)
			continue;
		ncomp++;
		snprintf(what, sizeof what, "%s (key %s) at %s/%d offset %lld", value, key, topic,
			 cpart, coff);
		if (split_out(value, &ip, &io) < 0) {
			ctp_violation(3, what);
			continue;
		}
		const struct logged *t = find_logged(ctl, nc, value);
		if (!t)
			ctp_violation(3, what);
		else if (t->outcome == 1)
			ctp_violation(2, what);
		last[ip][io % 8] = io;
	}
	long keys = 0;
	for (int p = 0; p < CTP_PARTS; p++)
		for (int k = 0; k < 8; k++) {
			long long want = parts[p].newest[k];
			if (want < 0)
				continue;
			keys++;
			snprintf(what, sizeof what, "key p%d.%d: last committed value from input offset "
				 "%lld, read %lld", p, k, want, last[p][k]);
			if (last[p][k] < 0)
				ctp_violation(7, what);
			else if (last[p][k] != want)
				ctp_violation(8, what);
		}
	printf("],\"violation_count\":%d,\"by_kind\":{", ctp_nviol);
	for (int i = 0; i < CTP_NKINDS; i++)
		printf("%s\"%s\":%d", i ? "," : "", ctp_kinds[i], ctp_by_kind[i]);
	long ccommit = 0;
	for (size_t i = 0; i < nc; i++)
		ccommit += ctl[i].outcome == 0;
	printf("},\"ctp_transactions\":%zu,\"ctp_committed\":%ld,\"seen\":%ld,\"outputs\":%ld,"
	       "\"compacted_read\":%ld,\"keys\":%ld}\n", nc, ccommit, nseen, nout, ncomp, keys);
	for (int p = 0; p < CTP_PARTS; p++) {
		free(parts[p].in);
		free(parts[p].outs);
	}
	free(prod);
	free(ctl);
	fclose(in);
	fclose(seen);
	fclose(out);
	fclose(com);
	fclose(comp);
	return ctp_nviol ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 7 && strcmp(argv[1], "produce") == 0) {
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term);
		return produce(argv[2], argv[3], atoi(argv[4]), argv[5], argv[6],
			       argc > 7 ? atol(argv[7]) : 20000);
	}
	if (argc >= 4 && strcmp(argv[1], "check") == 0)
		return check(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	if (argc == 6 && strcmp(argv[1], "lso") == 0) {
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term);
		return watch_lso(argv[2], argv[3], atoi(argv[4]), argv[5]);
	}
	if (argc == 12 && strcmp(argv[1], "ctp") == 0) {
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term);
		return ctp(argv[2], argv[3], atoi(argv[4]), argv[5], argv[6], atoi(argv[7]), argv[8],
			   argv[9], argv[10], argv[11]);
	}
	if (argc == 7 && strcmp(argv[1], "committed") == 0)
		return committed(argv[2], argv[3], argv[4], atoi(argv[5]), argv[6]);
	if (argc == 9 && strcmp(argv[1], "ctp-check") == 0)
		return ctp_check(argv + 2);
	fprintf(stderr, "usage: chaos_txn produce BOOTSTRAP TOPIC NPART TXNID LOGFILE [PAUSE_US]\n"
			"       chaos_txn ctp BOOTSTRAP INTOPIC NPART OUTTOPIC COMPTOPIC NOUT GROUP TXNID LOGFILE SEENFILE\n"
			"       chaos_txn committed BOOTSTRAP GROUP TOPIC NPART OUTFILE\n"
			"       chaos_txn ctp-check TXNLOG INREAD CTPLOG SEEN OUTREAD COMMITTED COMPREAD\n"
			"       chaos_txn lso BOOTSTRAP TOPIC NPART OUTFILE\n"
			"       chaos_txn check LOGFILE READFILE [LSOFILE]\n");
	return 2;
}
