/*
 * probe_atomic.c — the probes of the contract's two atomic primitives:
 * rename within a directory (readers in other processes never see a torn
 * or missing file while a writer replaces it) and exclusive create (racing
 * processes, half of them through the peer, get exactly one winner per name).
 */
#include "check/check_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- probe 1: rename is atomic ---- */

struct reader_stats {
	unsigned long reads, torn, missing, errors;
	unsigned last_version;
	char first_bad[160];
};

static void reader_child(const char *url, const char *target, int stopfd, int outfd)
{
	struct reader_stats s;
	memset(&s, 0, sizeof s);
	struct kaas_substrate *sub;
	if (kaas_substrate_open(url, &sub) < 0) {
		s.errors = 1;
		snprintf(s.first_bad, sizeof s.first_bad, "reader cannot open substrate: %s",
			 kaas_sub_errdetail());
		kaas_check_write_fd(outfd, &s, sizeof s);
		_exit(0);
	}
	uint64_t end = kaas_check_now_ms() + 300000;
	for (;;) {
		struct pollfd pfd = {.fd = stopfd, .events = POLLIN};
		if (poll(&pfd, 1, 0) > 0 || kaas_check_now_ms() > end)
			break;
		struct kaas_file *f;
		int rc = kaas_sub_open(sub, target, KAAS_O_READ, 0, &f);
		if (rc == -ESTALE)
			continue; /* substrate.h: ESTALE from open is retryable (re-open); an
				     NFS-class client can get it when the name was replaced
				     between its lookup and its open */
		if (rc < 0) {
			if (rc == -ENOENT)
				s.missing++;
			else
				s.errors++;
			if (!s.first_bad[0])
				snprintf(s.first_bad, sizeof s.first_bad, "open: %s", kaas_sub_errdetail());
			continue;
		}
		char *buf;
		size_t len;
		rc = kaas_check_read_handle(f, &buf, &len);
		kaas_sub_close(f);
		if (rc < 0) {
			/* ESTALE while reading a replaced file is allowed: the
			 * reader re-opens by name, as the header documents. */
			if (rc != -ESTALE) {
				s.errors++;
				if (!s.first_bad[0])
					snprintf(s.first_bad, sizeof s.first_bad, "read: %s", kaas_sub_errdetail());
			}
			continue;
		}
		s.reads++;
		unsigned v;
		if (kaas_check_parse_version(buf, len, &v) < 0) {
			s.torn++;
			if (!s.first_bad[0])
				snprintf(s.first_bad, sizeof s.first_bad, "torn read: %zu bytes, starts '%.24s'", len,
					 len ? buf : "");
		} else {
			s.last_version = v;
		}
		free(buf);
	}
	kaas_substrate_close(sub);
	kaas_check_write_fd(outfd, &s, sizeof s);
	_exit(0);
}

struct reader_job {
	const char *url, *target;
};

static void reader_job_run(void *arg, int ctlfd, int outfd)
{
	struct reader_job *j = arg;
	reader_child(j->url, j->target, ctlfd, outfd);
}

void kaas_check_probe_rename(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	unsigned n = c->o->renames ? c->o->renames : 1000;
	unsigned readers = c->o->readers ? c->o->readers : 2;
	char *target = kaas_check_path(c, "target");
	size_t len;
	char *buf = kaas_check_make_version(0, &len);
	char *t0 = kaas_check_path(c, "t.0");
	int rc = kaas_check_write_file(c->sub, t0, KAAS_O_CREAT | KAAS_O_EXCL, buf, len, 1);
	if (rc == 0)
		rc = kaas_sub_rename(c->sub, t0, target);
	free(buf);
	free(t0);
	int stop[2];
	if (rc < 0 || pipe(stop) < 0) {
		if (rc < 0)
			kaas_check_seen(r, "cannot create the first version: %s", kaas_sub_errdetail());
		else
			kaas_check_seen(r, "pipe: %s", strerror(errno));
		free(target);
		return;
	}
	pid_t pids[16];
	int outs[16];
	if (readers > 16)
		readers = 16;
	struct reader_job job = {c->peer, target};
	unsigned started = kaas_check_spawn(readers, stop, reader_job_run, &job, pids, outs, NULL);
	close(stop[0]);
	unsigned done = 0;
	int werr = 0;
	char wdetail[200] = "";
	for (unsigned v = 1; v <= n; v++) {
		char *tmp = kaas_check_path(c, "t.%u", v);
		buf = kaas_check_make_version(v, &len);
		rc = kaas_check_write_file(c->sub, tmp, KAAS_O_CREAT | KAAS_O_EXCL, buf, len, 0);
		if (rc == 0)
			rc = kaas_sub_rename(c->sub, tmp, target);
		free(buf);
		free(tmp);
		if (rc < 0) {
			werr = rc;
			snprintf(wdetail, sizeof wdetail, "%s", kaas_sub_errdetail());
			break;
		}
		done++;
	}
	close(stop[1]); /* readers stop */
	struct reader_stats total;
	memset(&total, 0, sizeof total);
	for (unsigned i = 0; i < started; i++) {
		struct reader_stats s;
		if (kaas_check_read_fd(outs[i], &s, sizeof s) < 0) {
			total.errors++;
			snprintf(total.first_bad, sizeof total.first_bad, "reader %u died", i);
		} else {
			total.reads += s.reads;
			total.torn += s.torn;
			total.missing += s.missing;
			total.errors += s.errors;
			if (!total.first_bad[0] && s.first_bad[0])
				memcpy(total.first_bad, s.first_bad, sizeof total.first_bad);
		}
		close(outs[i]);
		kaas_check_wait_child(pids[i], 60000);
	}
	/* The final version must be what a fresh open sees. */
	unsigned final_v = 0;
	int final_ok = 0;
	char *fb;
	size_t fl;
	if (kaas_sub_read_all(c->sub, target, 1 << 20, &fb, &fl) == 0) {
		final_ok = kaas_check_parse_version(fb, fl, &final_v) == 0 && final_v == done;
		free(fb);
	}
	r->pass = !werr && started == readers && total.torn == 0 && total.missing == 0 &&
		  total.errors == 0 && total.reads > 0 && final_ok;
	if (werr)
		kaas_check_seen(r, "writer failed after %u renames: %s", done, wdetail);
	else if (r->pass)
		kaas_check_seen(r, "%u renames; %u reader processes made %lu reads: none torn, none missing", done,
		     started, total.reads);
	else
		kaas_check_seen(r, "%u renames, %lu reads: %lu torn, %lu missing, %lu errors%s%s (first: %s)", done,
		     total.reads, total.torn, total.missing, total.errors,
		     final_ok ? "" : "; final version wrong", total.reads ? "" : "; no read succeeded",
		     total.first_bad[0] ? total.first_bad : "-");
	free(target);
}

/* ---- probe 2: exclusive create is atomic ---- */

static void excl_child(const char *url, const char *dir, unsigned rounds, int gofd, int outfd)
{
	unsigned char *res = calloc(rounds, 1);
	struct kaas_substrate *sub;
	if (kaas_substrate_open(url, &sub) < 0) {
		memset(res, 2, rounds);
		kaas_check_write_fd(outfd, res, rounds);
		_exit(0);
	}
	char c;
	while (read(gofd, &c, 1) < 0 && errno == EINTR)
		; /* returns 0 when the parent closes the go pipe */
	for (unsigned i = 0; i < rounds; i++) {
		char name[64];
		snprintf(name, sizeof name, "x-%05u", i);
		char *p = kaas_path_join(dir, name);
		struct kaas_file *f;
		int rc = kaas_sub_open(sub, p, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f);
		if (rc == 0) {
			res[i] = 1;
			kaas_sub_close(f);
		} else {
			res[i] = rc == -EEXIST ? 0 : 2;
		}
		free(p);
	}
	kaas_substrate_close(sub);
	kaas_check_write_fd(outfd, res, rounds);
	_exit(0);
}

struct excl_job {
	const char *url, *peer, *dir;
	unsigned rounds;
	unsigned next;          /* racers forked so far: odd ones use the peer */
};

static void excl_job_run(void *arg, int ctlfd, int outfd)
{
	struct excl_job *j = arg;
	excl_child(j->next % 2 ? j->peer : j->url, j->dir, j->rounds, ctlfd, outfd);
}

void kaas_check_probe_excl(struct kaas_check_ctx *c, struct kaas_check_result *r)
{
	unsigned rounds = c->o->excl_rounds ? c->o->excl_rounds : 200;
	unsigned procs = c->o->excl_procs ? c->o->excl_procs : 4;
	if (procs > 16)
		procs = 16;
	char *dir = kaas_check_mkdir(c, r, "excl");
	if (!dir)
		return;
	int go[2];
	if (pipe(go) < 0) {
		free(dir);
		return;
	}
	pid_t pids[16];
	int outs[16];
	struct excl_job job = {c->url, c->peer, dir, rounds, 0};
	unsigned started = kaas_check_spawn(procs, go, excl_job_run, &job, pids, outs, &job.next);
	close(go[0]);
	usleep(100000); /* let every child open its substrate before the start */
	close(go[1]);
	unsigned *winners = calloc(rounds, sizeof *winners);
	unsigned errors = 0, died = 0;
	unsigned char *res = malloc(rounds);
	for (unsigned i = 0; i < started; i++) {
		if (kaas_check_read_fd(outs[i], res, rounds) < 0) {
			died++;
		} else {
			for (unsigned k = 0; k < rounds; k++) {
				if (res[k] == 1)
					winners[k]++;
				else if (res[k] == 2)
					errors++;
			}
		}
		close(outs[i]);
		kaas_check_wait_child(pids[i], 120000);
	}
	unsigned bad = 0, first_bad = 0, first_count = 0;
	for (unsigned k = 0; k < rounds; k++)
		if (winners[k] != 1) {
			if (!bad) {
				first_bad = k;
				first_count = winners[k];
			}
			bad++;
		}
	r->pass = started == procs && !died && !errors && !bad;
	if (r->pass)
		kaas_check_seen(r, "%u rounds x %u processes: exactly one winner in every round", rounds, procs);
	else
		kaas_check_seen(r, "%u rounds x %u processes: %u rounds without exactly one winner (round %u had %u), %u errors, %u racers died",
		     rounds, started, bad, first_bad, first_count, errors, died);
	free(res);
	free(winners);
	free(dir);
}
