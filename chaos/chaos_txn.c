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

/* One transaction: its outcome (UNKNOWN after a fatal error). */
static enum outcome one_txn(rd_kafka_t *rk, const char *topic, int npart, const char *tag,
			    long n, int k, int abort)
{
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
			enum outcome o = one_txn(rk, topic, npart, tag, n, k, n % 3 == 2);
			static const char *const word[] = { "commit", "abort", "unknown" };
			fprintf(log, "%s %s %d\n", word[o], tag, k);
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
	while (fscanf(lf, "%15s %127s %d", word, tag, &k) == 3) {
		if (k < 1 || k > 64)
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
	fprintf(stderr, "usage: chaos_txn produce BOOTSTRAP TOPIC NPART TXNID LOGFILE [PAUSE_US]\n"
			"       chaos_txn lso BOOTSTRAP TOPIC NPART OUTFILE\n"
			"       chaos_txn check LOGFILE READFILE [LSOFILE]\n");
	return 2;
}
