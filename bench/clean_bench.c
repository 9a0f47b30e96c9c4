/* clean_bench.c — kaas-clean-bench: the log cleaner's throughput and its
 * effect on produce latency (issue 21).
 *
 *   kaas-clean-bench URL MIB UNIQUE_PERCENT
 *       Fill a compacted partition with MIB MiB of keyed records (100-byte
 *       values, keys drawn from UNIQUE_PERCENT % of the record count),
 *       sealed.  Then a producer appends 1 KiB batches (acks=all, one at a
 *       time) for 2 s alone, then while one forced cleaning pass runs.
 *       Prints the pass (time, MiB/s over the bytes read, bytes in/out) and
 *       the producer's latency p50/p99 alone and during the pass.
 *
 * Output lines are "key=value" pairs, for bench/clean.sh. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "log/log.h"
#include "substrate/substrate.h"
#include "tests/log/logtest.h"

#define PER 100

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct producer {
	struct kaas_log *log;
	atomic_int phase;        /* 0 alone, 1 during the pass, 2 stop */
	double *lat[2];
	size_t n[2], cap;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	char val[900];
	memset(val, 'p', sizeof val - 1);
	val[sizeof val - 1] = 0;
	struct lt_record r = { .key = "producer", .value = val };
	int ph;
	while ((ph = atomic_load(&p->phase)) < 2) {
		r.ts = (int64_t)(now_s() * 1000);
		size_t len;
		unsigned char *b = lt_keyed_batch(&r, 1, r.ts, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		double t0 = now_s();
		int64_t rc = kaas_log_append_sync(p->log, &d);
		double dt = now_s() - t0;
		free(b);
		if (rc < 0) {
			fprintf(stderr, "append: %lld\n", (long long)rc);
			break;
		}
		if (p->n[ph] < p->cap)
			p->lat[ph][p->n[ph]++] = dt;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp);
	return v[(size_t)(q * (double)(n - 1))] * 1000;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: kaas-clean-bench URL MIB UNIQUE_PERCENT\n");
		return 2;
	}
	struct kaas_substrate *sub;
	if (kaas_substrate_open(argv[1], &sub) < 0) {
		fprintf(stderr, "open %s: %s\n", argv[1], kaas_sub_errdetail());
		return 1;
	}
	uint64_t bytes = (uint64_t)atoll(argv[2]) << 20;
	double unique = atof(argv[3]) / 100;
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 64u << 20;
	c.compact = 1;
	c.retention_ms = -1;
	struct kaas_log *log;
	char dir[64];
	snprintf(dir, sizeof dir, "clean-bench-%ld/0", (long)getpid());
	if (kaas_log_open(sub, dir, 1, &c, &log) < 0) {
		fprintf(stderr, "log open: %s\n", kaas_sub_errdetail());
		return 1;
	}
	/* Fill: records of ~130 bytes, keys from unique × the record count. */
	uint64_t nrec = bytes / 130, nkeys = (uint64_t)((double)nrec * unique) + 1;
	char keys[PER][32], val[101];
	memset(val, 'v', 100);
	val[100] = 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < nrec; i += PER) {
		struct lt_record r[PER];
		for (int j = 0; j < PER; j++) {
			snprintf(keys[j], sizeof keys[j], "key-%012" PRIu64,
				 ((i + (uint64_t)j) * 2654435761u) % nkeys);
			r[j] = (struct lt_record){ .key = keys[j], .value = val, .ts = 1 };
		}
		size_t len;
		unsigned char *b = lt_keyed_batch(r, PER, 1, &len);
		struct kaas_log_batch d = lt_desc(b, len);
		if (kaas_log_append(log, &d, NULL, NULL, NULL) < 0) {
			fprintf(stderr, "fill: %s\n", kaas_sub_errdetail());
			return 1;
		}
		free(b);
	}
	kaas_log_wait(log, kaas_log_end_offset(log) - 1, -1);
	kaas_log_roll(log);
	printf("fill_mib=%.0f fill_s=%.2f records=%" PRIu64 " keys=%" PRIu64 "\n",
	       (double)bytes / (1 << 20), now_s() - t0, nrec, nkeys);

	struct producer p = { .log = log, .cap = 1 << 20 };
	p.lat[0] = malloc(p.cap * sizeof(double));
	p.lat[1] = malloc(p.cap * sizeof(double));
	pthread_t th;
	pthread_create(&th, NULL, produce, &p);
	struct timespec two = { 2, 0 };
	nanosleep(&two, NULL);
	atomic_store(&p.phase, 1);
	struct kaas_log_clean_stats st;
	t0 = now_s();
	int rc = kaas_log_clean(log, 0, 1, &st);
	double dt = now_s() - t0;
	atomic_store(&p.phase, 2);
	pthread_join(th, NULL);
	if (rc < 0) {
		fprintf(stderr, "clean: %d %s\n", rc, kaas_sub_errdetail());
		return 1;
	}
	printf("clean_s=%.2f clean_mib_s=%.1f bytes_in=%" PRIu64 " bytes_out=%" PRIu64
	       " segments_in=%" PRIu64 " segments_out=%" PRIu64 "\n", dt,
	       (double)st.bytes_in / (1 << 20) / dt, st.bytes_in, st.bytes_out, st.segments_in,
	       st.segments_out);
	printf("produce_alone_p50_ms=%.2f produce_alone_p99_ms=%.2f produce_during_p50_ms=%.2f "
	       "produce_during_p99_ms=%.2f appends_during=%zu\n", pct(p.lat[0], p.n[0], 0.5),
	       pct(p.lat[0], p.n[0], 0.99), pct(p.lat[1], p.n[1], 0.5), pct(p.lat[1], p.n[1], 0.99),
	       p.n[1]);
	kaas_log_close(log);
	char top[64];
	snprintf(top, sizeof top, "clean-bench-%ld", (long)getpid());
	kaas_remove_tree(sub, top, NULL);
	kaas_substrate_close(sub);
	free(p.lat[0]);
	free(p.lat[1]);
	return 0;
}
