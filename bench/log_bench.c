/* log_bench.c — kaas-log-bench: numbers for the partition log engine.
 *
 *   kaas-log-bench append URL BATCH_BYTES APPENDERS SECONDS
 *       Appenders each append BATCH_BYTES batches back to back (acks=all:
 *       each waits for its completion) for SECONDS, in slices of 0.25 s;
 *       after each slice a plain sequential pwrite+fsync loop on a file in
 *       the same directory writes the same bytes with the same number of
 *       fsyncs (the log's group-commit cadence in that slice).  Prints both
 *       throughputs (each over its own time) and their ratio.
 *   kaas-log-bench fill URL DIR BYTES
 *       Append BYTES (100 KiB batches, 8 appenders) to partition DIR and
 *       exit without closing: an unclean stop.
 *   kaas-log-bench recover URL DIR
 *       Open DIR with a higher epoch and print how long recovery took.
 *
 * Output lines are "key=value" pairs, for bench/log.sh.  Uses only the
 * substrate interface (the plain loop included), like everything in kaas. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "log/log.h"
#include "substrate/substrate.h"
#include "util/crc32c.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* A valid RecordBatch v2 of `size` bytes holding one record's worth of filler. */
static unsigned char *make_batch(size_t size)
{
	unsigned char *b = calloc(1, size);
	if (!b)
		return NULL;
	put32(b + 8, (uint32_t)(size - 12));
	b[16] = 2;
	put32(b + 23, 0);
	uint64_t ts = (uint64_t)time(NULL) * 1000;
	put32(b + 27, (uint32_t)(ts >> 32));
	put32(b + 31, (uint32_t)ts);
	memcpy(b + 35, b + 27, 8);
	memset(b + 43, 0xff, 8); /* producer id -1 */
	memset(b + 51, 0xff, 6); /* epoch -1, sequence -1 */
	put32(b + 57, 1);
	for (size_t i = KAAS_BATCH_HEADER_LEN; i < size; i++)
		b[i] = (unsigned char)(i * 31 + 7);
	put32(b + 17, kaas_crc32c(0, b + 21, size - 21));
	return b;
}

struct worker {
	struct kaas_log *log;
	const unsigned char *batch;
	size_t size;
	double until;
	uint64_t n;
	int err;
};

static void *append_main(void *arg)
{
	struct worker *w = arg;
	struct kaas_log_batch d = { .data = w->batch, .len = w->size, .record_count = 1,
				    .max_timestamp = 0, .producer_id = -1, .producer_epoch = -1,
				    .base_sequence = -1 };
	while (now_s() < w->until) {
		int64_t r = kaas_log_append_sync(w->log, &d);
		if (r < 0) {
			w->err = (int)r;
			break;
		}
		w->n++;
	}
	return NULL;
}

struct filler {
	struct kaas_log *log;
	const unsigned char *batch;
	size_t size;
	uint64_t *left;
	pthread_mutex_t *mu;
	int err;
};

static void *fill_main(void *arg)
{
	struct filler *f = arg;
	struct kaas_log_batch d = { .data = f->batch, .len = f->size, .record_count = 1,
				    .producer_id = -1, .producer_epoch = -1, .base_sequence = -1 };
	for (;;) {
		pthread_mutex_lock(f->mu);
		int go = *f->left >= f->size;
		if (go)
			*f->left -= f->size;
		pthread_mutex_unlock(f->mu);
		if (!go)
			break;
		int64_t r = kaas_log_append_sync(f->log, &d);
		if (r < 0) {
			f->err = (int)r;
			break;
		}
	}
	return NULL;
}

static int die(const char *what, int rc)
{
	fprintf(stderr, "kaas-log-bench: %s: %s (%s)\n", what, strerror(-rc), kaas_sub_errdetail());
	return 1;
}

/* Append from nthreads appenders for secs: returns the appends made. */
static int run_log_slice(struct kaas_log *log, const unsigned char *batch, size_t size,
			 int nthreads, double secs, uint64_t *appends)
{
	struct worker w[64];
	pthread_t th[64];
	double t0 = now_s();
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .log = log, .batch = batch, .size = size, .until = t0 + secs };
		pthread_create(&th[i], NULL, append_main, &w[i]);
	}
	int err = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		*appends += w[i].n;
		if (w[i].err)
			err = w[i].err;
	}
	return err ? die("append", err) : 0;
}

/* The plain loop: `count` times pwrite `per` bytes + fsync, at *pos. */
static int run_plain(struct kaas_file *f, const unsigned char *chunk, uint64_t per, uint64_t count,
		     uint64_t *pos)
{
	for (uint64_t i = 0; i < count; i++) {
		int rc = kaas_sub_pwrite_full(f, chunk, per, *pos);
		if (rc == 0)
			rc = kaas_sub_fsync(f);
		if (rc < 0)
			return die("plain loop", rc);
		*pos += per;
	}
	return 0;
}

/* The log and the plain loop take turns in short slices (the plain loop at
 * the fsync cadence the log had in the slice before it), so that a machine
 * whose load changes during the run weighs on both alike. */
static int bench_append(const char *url, size_t size, int nthreads, double secs)
{
	struct kaas_substrate *sub;
	int rc = kaas_substrate_open(url, &sub);
	if (rc < 0)
		return die("open substrate", rc);
	unsigned char *batch = make_batch(size);
	char top[64], dir[96], path[128];
	snprintf(top, sizeof top, "bench-append-%ld", (long)getpid());
	snprintf(dir, sizeof dir, "%s/0", top);
	snprintf(path, sizeof path, "%s/plain.dat", top);
	struct kaas_log *log;
	struct kaas_log_config cfg;
	kaas_log_config_default(&cfg);
	if (getenv("KAAS_BENCH_NO_FENCE_CHECK"))
		cfg.fence_check = 0;
	rc = kaas_log_open(sub, dir, 1, &cfg, &log);
	if (rc < 0)
		return die("open log", rc);
	struct kaas_file *f;
	rc = kaas_sub_open(sub, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f);
	if (rc < 0)
		return die("open plain file", rc);
	unsigned char *chunk = NULL;
	double t_log = 0, t_plain = 0, slice = 0.25;
	uint64_t appends = 0, log_bytes = 0, fsyncs = 0, plain_bytes = 0;
	for (double done = 0; done < secs; done += slice) {
		struct kaas_log_stats a, b;
		kaas_log_get_stats(log, &a);
		double t0 = now_s();
		if (run_log_slice(log, batch, size, nthreads, slice, &appends))
			return 1;
		t_log += now_s() - t0;
		kaas_log_get_stats(log, &b);
		uint64_t bytes = b.bytes - a.bytes, fs = b.fsyncs - a.fsyncs;
		log_bytes += bytes;
		fsyncs += fs;
		uint64_t per = fs ? bytes / fs : 0;
		if (!per)
			continue;
		free(chunk);
		chunk = malloc(per);
		for (uint64_t i = 0; i < per; i++)
			chunk[i] = batch[i % size];
		uint64_t pos = plain_bytes;
		t0 = now_s();
		if (run_plain(f, chunk, per, fs, &pos))
			return 1;
		t_plain += now_s() - t0;
		plain_bytes = pos;
	}
	kaas_sub_close(f);
	kaas_log_close(log);
	double mb_log = (double)log_bytes / t_log / 1e6, mb_plain = (double)plain_bytes / t_plain / 1e6;
	printf("batch=%zu appenders=%d appends=%" PRIu64 " fsyncs=%" PRIu64
	       " bytes_per_fsync=%" PRIu64 " log_MBps=%.1f plain_MBps=%.1f ratio=%.2f\n",
	       size, nthreads, appends, fsyncs, fsyncs ? log_bytes / fsyncs : 0, mb_log, mb_plain,
	       mb_log / mb_plain);
	free(chunk);
	free(batch);
	kaas_remove_tree(sub, top, NULL);
	kaas_substrate_close(sub);
	return 0;
}

static int bench_fill(const char *url, const char *dir, uint64_t bytes)
{
	struct kaas_substrate *sub;
	int rc = kaas_substrate_open(url, &sub);
	if (rc < 0)
		return die("open substrate", rc);
	struct kaas_log *log;
	rc = kaas_log_open(sub, dir, 1, NULL, &log);
	if (rc < 0)
		return die("open log", rc);
	size_t size = 100 << 10;
	unsigned char *batch = make_batch(size);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	uint64_t left = bytes;
	struct filler fl[8];
	pthread_t th[8];
	for (int i = 0; i < 8; i++) {
		fl[i] = (struct filler){ .log = log, .batch = batch, .size = size, .left = &left, .mu = &mu };
		pthread_create(&th[i], NULL, fill_main, &fl[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		if (fl[i].err)
			return die("append", fl[i].err);
	}
	printf("filled=%" PRIu64 " hwm=%" PRId64 "\n", bytes - left, kaas_log_high_watermark(log));
	fflush(stdout);
	_exit(0); /* unclean stop: no close, no final checkpoint */
}

static int bench_recover(const char *url, const char *dir)
{
	struct kaas_substrate *sub;
	int rc = kaas_substrate_open(url, &sub);
	if (rc < 0)
		return die("open substrate", rc);
	struct kaas_log *log;
	double t0 = now_s();
	rc = kaas_log_open(sub, dir, 2, NULL, &log);
	double t = now_s() - t0;
	if (rc < 0)
		return die("recover", rc);
	struct kaas_log_stats st;
	kaas_log_get_stats(log, &st);
	printf("recover_ms=%.1f recovered_bytes=%" PRIu64 " segments=%" PRIu64 " hwm=%" PRId64 "\n",
	       t * 1e3, st.recovered_bytes, st.segments, kaas_log_high_watermark(log));
	kaas_log_close(log);
	kaas_substrate_close(sub);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "append"))
		return bench_append(argv[2], strtoul(argv[3], NULL, 10), atoi(argv[4]), atof(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "fill"))
		return bench_fill(argv[2], argv[3], strtoull(argv[4], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "recover"))
		return bench_recover(argv[2], argv[3]);
	fprintf(stderr, "usage: kaas-log-bench append URL BATCH_BYTES APPENDERS SECONDS\n"
			"       kaas-log-bench fill URL DIR BYTES\n"
			"       kaas-log-bench recover URL DIR\n");
	return 2;
}
