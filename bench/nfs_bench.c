/*
 * nfs_bench.c — kaas-nfs-bench: sequential write + COMMIT throughput to an
 * NFS server, either through the kaas substrate (backends/nfs.c) or with a plain libnfs loop,
 * so bench/nfs.sh can print the two side by side from one run.
 *
 *   kaas-nfs-bench kaas|raw URL NAME TOTAL_MIB CHUNK_KIB SYNC_KIB
 *
 * Writes TOTAL_MIB to NAME under the URL's directory in CHUNK_KIB writes,
 * with an fsync (COMMIT) every SYNC_KIB and at the end, then removes the
 * file.  Prints one line: "<mode> <MB/s> <commits/s> <seconds>".
 * Not a test: it prints numbers and never judges them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <nfsc/libnfs.h>

#include "substrate/substrate.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int run_raw(const char *url, const char *name, uint64_t total, size_t chunk, uint64_t sync_every,
		   const char *buf, unsigned *commits)
{
	struct nfs_context *nfs = nfs_init_context();
	if (!nfs)
		return -ENOMEM;
	struct nfs_url *u = nfs_parse_url_dir(nfs, url);
	if (!u || nfs_mount(nfs, u->server, u->path) < 0) {
		fprintf(stderr, "raw: %s: %s\n", url, nfs_get_error(nfs));
		return -EIO;
	}
	char path[512];
	snprintf(path, sizeof path, "/%s", name);
	struct nfsfh *fh;
	if (nfs_open2(nfs, path, O_CREAT | O_WRONLY | O_TRUNC, 0644, &fh) < 0) {
		fprintf(stderr, "raw: open %s: %s\n", path, nfs_get_error(nfs));
		return -EIO;
	}
	uint64_t off = 0, since = 0;
	while (off < total) {
		size_t want = chunk;
		size_t done = 0;
		while (done < want) {
			int n = nfs_pwrite(nfs, fh, off + done, want - done, buf + done);
			if (n <= 0) {
				fprintf(stderr, "raw: write: %s\n", nfs_get_error(nfs));
				return -EIO;
			}
			done += (size_t)n;
		}
		off += want;
		since += want;
		if (since >= sync_every || off >= total) {
			if (nfs_fsync(nfs, fh) < 0) {
				fprintf(stderr, "raw: commit: %s\n", nfs_get_error(nfs));
				return -EIO;
			}
			(*commits)++;
			since = 0;
		}
	}
	nfs_close(nfs, fh);
	nfs_unlink(nfs, path);
	nfs_destroy_url(u);
	nfs_destroy_context(nfs);
	return 0;
}

static int run_kaas(const char *url, const char *name, uint64_t total, size_t chunk, uint64_t sync_every,
		    const char *buf, unsigned *commits)
{
	struct kaas_substrate *s;
	if (kaas_substrate_open(url, &s) < 0) {
		fprintf(stderr, "kaas: %s\n", kaas_sub_errdetail());
		return -EIO;
	}
	struct kaas_file *f;
	if (kaas_sub_open(s, name, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f) < 0) {
		fprintf(stderr, "kaas: %s\n", kaas_sub_errdetail());
		return -EIO;
	}
	uint64_t off = 0, since = 0;
	while (off < total) {
		if (kaas_sub_pwrite_full(f, buf, chunk, off) < 0) {
			fprintf(stderr, "kaas: %s\n", kaas_sub_errdetail());
			return -EIO;
		}
		off += chunk;
		since += chunk;
		if (since >= sync_every || off >= total) {
			if (kaas_sub_fsync(f) < 0) {
				fprintf(stderr, "kaas: %s\n", kaas_sub_errdetail());
				return -EIO;
			}
			(*commits)++;
			since = 0;
		}
	}
	kaas_sub_close(f);
	kaas_sub_unlink(s, name);
	kaas_substrate_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: %s kaas|raw URL NAME TOTAL_MIB CHUNK_KIB SYNC_KIB\n", argv[0]);
		return 2;
	}
	uint64_t total = strtoull(argv[4], NULL, 10) << 20;
	size_t chunk = (size_t)strtoull(argv[5], NULL, 10) << 10;
	uint64_t sync_every = strtoull(argv[6], NULL, 10) << 10;
	if (!total || !chunk || !sync_every) {
		fprintf(stderr, "kaas-nfs-bench: sizes must be positive\n");
		return 2;
	}
	char *buf = malloc(chunk);
	if (!buf)
		return 1;
	for (size_t i = 0; i < chunk; i++)
		buf[i] = (char)(i * 31 + 7);
	unsigned commits = 0;
	double t0 = now();
	int rc;
	if (!strcmp(argv[1], "raw"))
		rc = run_raw(argv[2], argv[3], total, chunk, sync_every, buf, &commits);
	else if (!strcmp(argv[1], "kaas"))
		rc = run_kaas(argv[2], argv[3], total, chunk, sync_every, buf, &commits);
	else {
		fprintf(stderr, "kaas-nfs-bench: mode must be kaas or raw\n");
		return 2;
	}
	double dt = now() - t0;
	free(buf);
	if (rc < 0)
		return 1;
	printf("%s %.1f %.1f %.3f\n", argv[1], (double)total / dt / 1e6, commits / dt, dt);
	return 0;
}
