/*
 * disk_bench.c — the machine's own limits on a volume, measured through the
 * substrate (so a directory, a faultfs mount and an nfs:// URL are measured
 * the way kaasd sees them).  Behind scripts/bench; prints one JSON object.
 *
 *   kaas-disk-bench write URL PATH PER SECONDS MAXBYTES
 *       sequential pwrite of PER bytes + fsync (fdatasync on POSIX), looped
 *       until SECONDS have passed or MAXBYTES are written, on a new file
 *       PATH (removed afterwards): MB/s, fsyncs, and the fsync call's own
 *       latency p50/p99/p99.9 in milliseconds.
 *   kaas-disk-bench fill URL PATH BYTES
 *       write a BYTES-long file (1 MiB writes, one fsync at the end).
 *   kaas-disk-bench read URL PATH
 *       read PATH sequentially in 1 MiB reads; a directory is read file by
 *       file, recursively, in name order: MB/s.
 *   kaas-disk-bench rm URL PATH
 *       remove PATH (a file or a whole tree).
 *
 * Exit status 0, or 1 with a message naming the failed step on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract/contract.h"
#include "substrate/substrate.h"

#define CHUNK (1u << 20)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, int rc)
{
	const char *d = kaas_sub_errdetail();
	fprintf(stderr, "kaas-disk-bench: %s: %s%s%s\n", what, strerror(-rc), d && *d ? ": " : "",
		d ? d : "");
	return 1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	if (n == 0)
		return -1;
	size_t i = (size_t)(p * (double)n);
	return v[i < n ? i : n - 1];
}

static unsigned char *pattern(size_t n)
{
	unsigned char *b = malloc(n ? n : 1);
	if (!b) {
		fprintf(stderr, "kaas-disk-bench: out of memory\n");
		exit(1);
	}
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < n; i++) { /* xorshift: not compressible */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)x;
	}
	return b;
}

static int bench_write(struct kaas_substrate *sub, const char *path, uint64_t per, double secs,
		       uint64_t maxbytes)
{
	unsigned char *buf = pattern(per);
	size_t cap = 1024, n = 0;
	double *lat = malloc(cap * sizeof *lat);
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f);
	if (rc < 0)
		return die("open for writing", rc);
	uint64_t pos = 0;
	double t0 = now_s(), t = t0;
	while (pos < maxbytes && t - t0 < secs) {
		rc = kaas_sub_pwrite_full(f, buf, per, pos);
		if (rc < 0)
			return die("write", rc);
		double s0 = now_s();
		rc = kaas_sub_fsync(f);
		if (rc < 0)
			return die("fsync", rc);
		t = now_s();
		if (n == cap) {
			cap *= 2;
			lat = realloc(lat, cap * sizeof *lat);
		}
		lat[n++] = t - s0;
		pos += per;
	}
	double dt = t - t0;
	kaas_sub_close(f);
	kaas_sub_unlink(sub, path);
	qsort(lat, n, sizeof *lat, cmp_d);
	printf("{\"bytes_per_fsync\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.3f,"
	       "\"MBps\":%.1f,\"fsyncs\":%zu,\"fsync_p50_ms\":%.3f,\"fsync_p99_ms\":%.3f,"
	       "\"fsync_p999_ms\":%.3f}\n",
	       per, pos, dt, dt > 0 ? (double)pos / dt / 1e6 : 0.0, n, pct(lat, n, 0.5) * 1e3,
	       pct(lat, n, 0.99) * 1e3, pct(lat, n, 0.999) * 1e3);
	free(lat);
	free(buf);
	return 0;
}

static int bench_fill(struct kaas_substrate *sub, const char *path, uint64_t bytes)
{
	unsigned char *buf = pattern(CHUNK);
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f);
	if (rc < 0)
		return die("open for writing", rc);
	double t0 = now_s();
	for (uint64_t pos = 0; pos < bytes; pos += CHUNK) {
		size_t len = bytes - pos < CHUNK ? (size_t)(bytes - pos) : CHUNK;
		rc = kaas_sub_pwrite_full(f, buf, len, pos);
		if (rc < 0)
			return die("write", rc);
	}
	rc = kaas_sub_fsync(f);
	if (rc < 0)
		return die("fsync", rc);
	double dt = now_s() - t0;
	kaas_sub_close(f);
	printf("{\"bytes\":%" PRIu64 ",\"seconds\":%.3f,\"MBps\":%.1f}\n", bytes, dt,
	       dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
	free(buf);
	return 0;
}

/* Read one file or a tree; adds to *bytes. */
static int read_path(struct kaas_substrate *sub, const char *path, unsigned char *buf,
		     uint64_t *bytes)
{
	struct kaas_stat st;
	int rc = kaas_sub_stat(sub, path, &st);
	if (rc < 0)
		return die("stat", rc);
	if (st.type == KAAS_FT_DIR) {
		struct kaas_dirlist l;
		rc = kaas_sub_list(sub, path, &l);
		if (rc < 0)
			return die("list", rc);
		for (size_t i = 0; i < l.n && rc == 0; i++) {
			size_t len = strlen(path) + strlen(l.names[i]) + 2;
			char *child = malloc(len);
			snprintf(child, len, "%s/%s", path, l.names[i]);
			if (l.types[i] == KAAS_FT_FILE || l.types[i] == KAAS_FT_DIR)
				rc = read_path(sub, child, buf, bytes);
			free(child);
		}
		kaas_dirlist_free(&l);
		return rc;
	}
	if (st.type != KAAS_FT_FILE)
		return 0;
	struct kaas_file *f;
	rc = kaas_sub_open(sub, path, KAAS_O_READ, 0, &f);
	if (rc < 0)
		return die("open for reading", rc);
	uint64_t pos = 0;
	for (;;) {
		ssize_t got = kaas_sub_pread(f, buf, CHUNK, pos);
		if (got < 0) {
			kaas_sub_close(f);
			return die("read", (int)got);
		}
		if (got == 0)
			break;
		pos += (uint64_t)got;
	}
	kaas_sub_close(f);
	*bytes += pos;
	return 0;
}

static int bench_read(struct kaas_substrate *sub, const char *path)
{
	unsigned char *buf = malloc(CHUNK);
	uint64_t bytes = 0;
	double t0 = now_s();
	int rc = read_path(sub, path, buf, &bytes);
	double dt = now_s() - t0;
	free(buf);
	if (rc)
		return rc;
	printf("{\"bytes\":%" PRIu64 ",\"seconds\":%.3f,\"MBps\":%.1f}\n", bytes, dt,
	       dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: kaas-disk-bench write URL PATH PER SECONDS MAXBYTES\n"
			"       kaas-disk-bench fill URL PATH BYTES\n"
			"       kaas-disk-bench read URL PATH\n"
			"       kaas-disk-bench rm URL PATH\n");
	return 2;
}

/* A positive integer argument, or exit 2 naming it. */
static uint64_t arg_u64(const char *name, const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || v == 0) {
		fprintf(stderr, "kaas-disk-bench: %s must be a positive integer, not '%s'\n", name, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	const char *mode = argv[1], *url = argv[2], *path = argv[3];
	struct kaas_substrate *sub;
	int rc = kaas_substrate_open(url, &sub);
	if (rc < 0)
		return die("open the volume", rc);
	if (strcmp(mode, "write") == 0 && argc == 7) {
		double secs = (double)arg_u64("SECONDS", argv[5]);
		rc = bench_write(sub, path, arg_u64("PER", argv[4]), secs, arg_u64("MAXBYTES", argv[6]));
	} else if (strcmp(mode, "fill") == 0 && argc == 5) {
		rc = bench_fill(sub, path, arg_u64("BYTES", argv[4]));
	} else if (strcmp(mode, "read") == 0 && argc == 4) {
		rc = bench_read(sub, path);
	} else if (strcmp(mode, "rm") == 0 && argc == 4) {
		rc = kaas_remove_tree(sub, path, NULL);
		rc = rc < 0 && rc != -ENOENT ? die("remove", rc) : 0;
	} else {
		rc = usage();
	}
	kaas_substrate_close(sub);
	return rc;
}
