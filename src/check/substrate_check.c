/* substrate_check.c — probes that qualify a substrate against the contract. */
#include "check/substrate_check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "substrate/substrate.h"
#include "util/crc32c.h"

static const struct {
	const char *key;
	const char *guarantee;
} probe_names[KAAS_CHECK_COUNT] = {
	{"rename-atomic", "1. rename within a directory is atomic"},
	{"exclusive-create", "2. exclusive create is atomic"},
	{"close-to-open", "3. close-to-open consistency"},
	{"fsync-visible", "   an fsynced write is visible to a new open"},
	{"fsync-reopen", "   fsync, close, reopen returns every byte"},
	{"readdir", "   readdir lists every entry exactly once"},
	{"rmdir-nonempty", "   rmdir of a non-empty directory: ENOTEMPTY"},
	{"error-codes", "   error codes as substrate.h documents them"},
};

struct ctx {
	const char *url;
	const char *peer;       /* host B's URL: the peer, or url again */
	const struct kaas_check_opts *o;
	struct kaas_substrate *sub;
	char scratch[160];
};

static void seen(struct kaas_check_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->seen, sizeof r->seen, fmt, ap);
	va_end(ap);
}

static char *spath(struct ctx *c, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	return kaas_path_join(c->scratch, name);
}

/* ---- versioned payloads that a reader can verify on its own ---- */

static size_t payload_size(unsigned v)
{
	return 1000 + (v * 97u) % 20000;
}

static unsigned char payload_byte(unsigned v, size_t i)
{
	return (unsigned char)((i * 31u + v * 7u + (i >> 8)) & 0xff);
}

/* Build version v: a header line, then payload_size(v) bytes. */
static char *make_version(unsigned v, size_t *len)
{
	size_t n = payload_size(v);
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = payload_byte(v, i);
	char head[96];
	int hl = snprintf(head, sizeof head, "kaas-probe v=%u n=%zu crc=%08" PRIx32 "\n", v, n,
			  kaas_crc32c(0, p, n));
	char *out = malloc((size_t)hl + n);
	memcpy(out, head, (size_t)hl);
	memcpy(out + hl, p, n);
	free(p);
	*len = (size_t)hl + n;
	return out;
}

/* 0 if buf holds a whole valid version (its number in *v), else -1. */
static int check_version(const char *buf, size_t len, unsigned *v)
{
	const char *nl = memchr(buf, '\n', len < 96 ? len : 96);
	if (!nl)
		return -1;
	unsigned ver;
	size_t n;
	uint32_t crc;
	char head[100];
	memcpy(head, buf, (size_t)(nl - buf));
	head[nl - buf] = '\0';
	if (sscanf(head, "kaas-probe v=%u n=%zu crc=%" SCNx32, &ver, &n, &crc) != 3)
		return -1;
	size_t hl = (size_t)(nl - buf) + 1;
	if (len != hl + n || n != payload_size(ver))
		return -1;
	if (kaas_crc32c(0, buf + hl, n) != crc)
		return -1;
	*v = ver;
	return 0;
}

static int write_file(struct kaas_substrate *sub, const char *path, int flags, const void *buf,
		      size_t len, int do_fsync)
{
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, path, KAAS_O_WRITE | flags, 0644, &f);
	if (rc < 0)
		return rc;
	rc = kaas_sub_pwrite_full(f, buf, len, 0);
	if (rc == 0 && do_fsync)
		rc = kaas_sub_fsync(f);
	int c = kaas_sub_close(f);
	return rc < 0 ? rc : c;
}

static int read_handle_all(struct kaas_file *f, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap);
		}
		ssize_t r = kaas_sub_pread(f, b + n, cap - n, n);
		if (r < 0) {
			free(b);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = b;
	*len = n;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for a child, SIGKILLing it after timeout_ms.  Returns its exit code or -1. */
static int wait_child(pid_t pid, uint64_t timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0)
			return -1;
		if (now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

static int read_exact_fd(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void write_exact_fd(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		done += (size_t)n;
	}
}

/* Fork up to n (<= 16) children that each run run(arg, ctl[0], their own
 * result pipe) and never return; ctl is the parent's start/stop pipe.
 * Fills pids/outs (read ends) and returns how many started.  If index is
 * not NULL, *index is the child's number (0, 1, ...) when run is called. */
static unsigned spawn_children(unsigned n, const int ctl[2], void (*run)(void *, int, int), void *arg,
			       pid_t *pids, int *outs, unsigned *index)
{
	unsigned started = 0;
	for (unsigned i = 0; i < n && i < 16; i++) {
		int out[2];
		if (pipe(out) < 0)
			break;
		if (index)
			*index = i;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			close(ctl[1]);
			close(out[0]);
			run(arg, ctl[0], out[1]);
			_exit(0);
		}
		close(out[1]);
		if (pid < 0) {
			close(out[0]);
			break;
		}
		pids[started] = pid;
		outs[started++] = out[0];
	}
	return started;
}

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
		write_exact_fd(outfd, &s, sizeof s);
		_exit(0);
	}
	uint64_t end = now_ms() + 300000;
	for (;;) {
		struct pollfd pfd = {.fd = stopfd, .events = POLLIN};
		if (poll(&pfd, 1, 0) > 0 || now_ms() > end)
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
		rc = read_handle_all(f, &buf, &len);
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
		if (check_version(buf, len, &v) < 0) {
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
	write_exact_fd(outfd, &s, sizeof s);
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

static void probe_rename(struct ctx *c, struct kaas_check_result *r)
{
	unsigned n = c->o->renames ? c->o->renames : 1000;
	unsigned readers = c->o->readers ? c->o->readers : 2;
	char *target = spath(c, "target");
	size_t len;
	char *buf = make_version(0, &len);
	char *t0 = spath(c, "t.0");
	int rc = write_file(c->sub, t0, KAAS_O_CREAT | KAAS_O_EXCL, buf, len, 1);
	if (rc == 0)
		rc = kaas_sub_rename(c->sub, t0, target);
	free(buf);
	free(t0);
	if (rc < 0) {
		seen(r, "cannot create the first version: %s", kaas_sub_errdetail());
		free(target);
		return;
	}
	int stop[2];
	if (pipe(stop) < 0) {
		seen(r, "pipe: %s", strerror(errno));
		free(target);
		return;
	}
	pid_t pids[16];
	int outs[16];
	if (readers > 16)
		readers = 16;
	struct reader_job job = {c->peer, target};
	unsigned started = spawn_children(readers, stop, reader_job_run, &job, pids, outs, NULL);
	close(stop[0]);
	unsigned done = 0;
	int werr = 0;
	char wdetail[200] = "";
	for (unsigned v = 1; v <= n; v++) {
		char *tmp = spath(c, "t.%u", v);
		buf = make_version(v, &len);
		rc = write_file(c->sub, tmp, KAAS_O_CREAT | KAAS_O_EXCL, buf, len, 0);
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
		if (read_exact_fd(outs[i], &s, sizeof s) < 0) {
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
		wait_child(pids[i], 60000);
	}
	/* The final version must be what a fresh open sees. */
	unsigned final_v = 0;
	int final_ok = 0;
	char *fb;
	size_t fl;
	if (kaas_sub_read_all(c->sub, target, 1 << 20, &fb, &fl) == 0) {
		final_ok = check_version(fb, fl, &final_v) == 0 && final_v == done;
		free(fb);
	}
	r->pass = !werr && started == readers && total.torn == 0 && total.missing == 0 &&
		  total.errors == 0 && total.reads > 0 && final_ok;
	if (werr)
		seen(r, "writer failed after %u renames: %s", done, wdetail);
	else if (r->pass)
		seen(r, "%u renames; %u reader processes made %lu reads: none torn, none missing", done,
		     started, total.reads);
	else
		seen(r, "%u renames, %lu reads: %lu torn, %lu missing, %lu errors%s%s (first: %s)", done,
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
		write_exact_fd(outfd, res, rounds);
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
	write_exact_fd(outfd, res, rounds);
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

static void probe_excl(struct ctx *c, struct kaas_check_result *r)
{
	unsigned rounds = c->o->excl_rounds ? c->o->excl_rounds : 200;
	unsigned procs = c->o->excl_procs ? c->o->excl_procs : 4;
	if (procs > 16)
		procs = 16;
	char *dir = spath(c, "excl");
	int rc = kaas_sub_mkdir(c->sub, dir, 0755);
	if (rc < 0) {
		seen(r, "mkdir: %s", kaas_sub_errdetail());
		free(dir);
		return;
	}
	int go[2];
	if (pipe(go) < 0) {
		free(dir);
		return;
	}
	pid_t pids[16];
	int outs[16];
	struct excl_job job = {c->url, c->peer, dir, rounds, 0};
	unsigned started = spawn_children(procs, go, excl_job_run, &job, pids, outs, &job.next);
	close(go[0]);
	usleep(100000); /* let every child open its substrate before the start */
	close(go[1]);
	unsigned *winners = calloc(rounds, sizeof *winners);
	unsigned errors = 0, died = 0;
	unsigned char *res = malloc(rounds);
	for (unsigned i = 0; i < started; i++) {
		if (read_exact_fd(outs[i], res, rounds) < 0) {
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
		wait_child(pids[i], 120000);
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
		seen(r, "%u rounds x %u processes: exactly one winner in every round", rounds, procs);
	else
		seen(r, "%u rounds x %u processes: %u rounds without exactly one winner (round %u had %u), %u errors, %u racers died",
		     rounds, started, bad, first_bad, first_count, errors, died);
	free(res);
	free(winners);
	free(dir);
}

/* ---- probe 3: close-to-open between two hosts ---- */

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (unsigned char)x;
	}
}

/* Open `path` on `sub`, read it all, compare with want[0..n). */
static int verify_on(struct kaas_substrate *sub, const char *path, const unsigned char *want,
		     size_t n, char *why, size_t whysz)
{
	struct kaas_file *f;
	int rc = kaas_sub_open(sub, path, KAAS_O_READ, 0, &f);
	if (rc < 0) {
		snprintf(why, whysz, "open: %s", kaas_sub_errdetail());
		return -1;
	}
	char *buf;
	size_t len;
	rc = read_handle_all(f, &buf, &len);
	kaas_sub_close(f);
	if (rc < 0) {
		snprintf(why, whysz, "read: %s", kaas_sub_errdetail());
		return -1;
	}
	int ok = len == n && memcmp(buf, want, n) == 0;
	if (!ok) {
		size_t i = 0;
		while (i < len && i < n && (unsigned char)buf[i] == want[i])
			i++;
		snprintf(why, whysz, "saw %zu bytes, expected %zu; first difference at byte %zu", len, n, i);
	}
	free(buf);
	return ok ? 0 : -1;
}

static void probe_c2o(struct ctx *c, struct kaas_check_result *r)
{
	struct kaas_substrate *b;
	if (kaas_substrate_open(c->peer, &b) < 0) {
		seen(r, "cannot open a second host: %s", kaas_sub_errdetail());
		return;
	}
	char *p = spath(c, "c2o");
	size_t n1 = (1u << 20) + 123, n2 = 65536 + 7, n3 = 4096 * 3 + 1;
	unsigned char *want = malloc(n1 + n2);
	char why[256] = "";
	const char *step = "";
	fill(want, n1, 1);
	int rc = write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, want, n1, 0);
	step = "after create+write+close on host A, host B's open";
	if (rc < 0) {
		snprintf(why, sizeof why, "write: %s", kaas_sub_errdetail());
		goto out;
	}
	if (verify_on(b, p, want, n1, why, sizeof why) < 0)
		goto out;
	/* B has now cached the file; A appends and closes. */
	fill(want + n1, n2, 2);
	struct kaas_file *f;
	step = "after an append+close on host A, host B's new open";
	rc = kaas_sub_open(c->sub, p, KAAS_O_WRITE, 0, &f);
	if (rc == 0) {
		rc = kaas_sub_pwrite_full(f, want + n1, n2, n1);
		int cr = kaas_sub_close(f);
		rc = rc < 0 ? rc : cr;
	}
	if (rc < 0) {
		snprintf(why, sizeof why, "append: %s", kaas_sub_errdetail());
		goto out;
	}
	if (verify_on(b, p, want, n1 + n2, why, sizeof why) < 0)
		goto out;
	/* A rewrites the file shorter (truncate on open). */
	fill(want, n3, 3);
	step = "after a truncate+rewrite+close on host A, host B's new open";
	rc = write_file(c->sub, p, KAAS_O_TRUNC, want, n3, 0);
	if (rc < 0) {
		snprintf(why, sizeof why, "rewrite: %s", kaas_sub_errdetail());
		goto out;
	}
	if (verify_on(b, p, want, n3, why, sizeof why) < 0)
		goto out;
	r->pass = 1;
	seen(r, "host B's new opens saw every byte host A closed (create 1 MiB, append 64 KiB, rewrite 12 KiB)");
out:
	if (!r->pass)
		seen(r, "%s: %s", step, why);
	free(want);
	free(p);
	kaas_substrate_close(b);
}

/* ---- probe 4: an fsynced write is visible to another host's new open ---- */

static void probe_fsync_visible(struct ctx *c, struct kaas_check_result *r)
{
	struct kaas_substrate *b;
	if (kaas_substrate_open(c->peer, &b) < 0) {
		seen(r, "cannot open a second host: %s", kaas_sub_errdetail());
		return;
	}
	char *p = spath(c, "fsync-visible");
	size_t n = 256 * 1024 + 5;
	unsigned char *want = malloc(n);
	fill(want, n, 4);
	char why[256] = "";
	struct kaas_file *f;
	int rc = kaas_sub_open(c->sub, p, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f);
	if (rc == 0) {
		rc = kaas_sub_pwrite_full(f, want, n, 0);
		if (rc == 0)
			rc = kaas_sub_fsync(f);
		if (rc < 0) {
			snprintf(why, sizeof why, "write/fsync: %s", kaas_sub_errdetail());
		} else if (verify_on(b, p, want, n, why, sizeof why) == 0) {
			r->pass = 1;
		}
		kaas_sub_close(f);
	} else {
		snprintf(why, sizeof why, "create: %s", kaas_sub_errdetail());
	}
	if (r->pass)
		seen(r, "256 KiB fsynced on host A (still open) read back whole by host B");
	else
		seen(r, "after fsync on host A, host B's open: %s", why);
	free(want);
	free(p);
	kaas_substrate_close(b);
}

/* ---- probe 5: fsync, close, reopen ---- */

static void probe_fsync_reopen(struct ctx *c, struct kaas_check_result *r)
{
	char *p = spath(c, "fsync-reopen");
	size_t n = (1u << 20) + 4097;
	unsigned char *want = malloc(n);
	fill(want, n, 5);
	char why[256] = "";
	int rc = write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, want, n, 1);
	if (rc < 0)
		snprintf(why, sizeof why, "write/fsync/close: %s", kaas_sub_errdetail());
	else if (verify_on(c->sub, p, want, n, why, sizeof why) == 0) {
		struct kaas_stat st;
		if (kaas_sub_stat(c->sub, p, &st) < 0)
			snprintf(why, sizeof why, "stat: %s", kaas_sub_errdetail());
		else if (st.size != n || st.type != KAAS_FT_FILE)
			snprintf(why, sizeof why, "stat says %" PRIu64 " bytes, type %d", st.size, (int)st.type);
		else
			r->pass = 1;
	}
	if (r->pass)
		seen(r, "1 MiB + 4097 bytes written, fsynced, closed, reopened: identical; stat size right");
	else
		seen(r, "%s", why);
	free(want);
	free(p);
}

/* ---- probe 6: readdir completeness ---- */

/* List dir on sub and check it names f-00000 .. f-<n-1>, each once, as
 * files.  Returns 1 if so; else 0 with what was wrong in why. */
static int listing_complete(struct kaas_substrate *sub, const char *dir, unsigned n, size_t *listed,
			    char *why, size_t whysz)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(sub, dir, &l);
	if (rc < 0) {
		snprintf(why, whysz, "readdir: %s", kaas_sub_errdetail());
		return 0;
	}
	unsigned extra = 0, dup = 0, missing = 0;
	unsigned char *got = calloc(n, 1);
	for (size_t i = 0; i < l.n; i++) {
		unsigned k;
		char tail;
		if (sscanf(l.names[i], "f-%5u%c", &k, &tail) == 1 && k < n) {
			if (got[k]++)
				dup++;
			if (l.types[i] != KAAS_FT_FILE)
				extra++;
		} else {
			extra++;
		}
	}
	for (unsigned k = 0; k < n; k++)
		if (!got[k])
			missing++;
	*listed = l.n;
	if (extra || dup || missing)
		snprintf(why, whysz, "%u files created, %zu listed: %u missing, %u duplicated, %u unexpected or mistyped",
			 n, l.n, missing, dup, extra);
	free(got);
	kaas_dirlist_free(&l);
	return !extra && !dup && !missing;
}

static void probe_readdir(struct ctx *c, struct kaas_check_result *r)
{
	unsigned n = c->o->files ? c->o->files : 300;
	char *dir = spath(c, "listing");
	int rc = kaas_sub_mkdir(c->sub, dir, 0755);
	if (rc < 0) {
		seen(r, "mkdir: %s", kaas_sub_errdetail());
		free(dir);
		return;
	}
	for (unsigned i = 0; i < n && rc == 0; i++) {
		char name[32];
		snprintf(name, sizeof name, "f-%05u", i);
		char *p = kaas_path_join(dir, name);
		rc = write_file(c->sub, p, KAAS_O_CREAT | KAAS_O_EXCL, "x", 1, 0);
		free(p);
	}
	if (rc < 0) {
		seen(r, "creating files: %s", kaas_sub_errdetail());
		free(dir);
		return;
	}
	char why[300];
	size_t listed = 0, listed_b = 0;
	if (!listing_complete(c->sub, dir, n, &listed, why, sizeof why)) {
		seen(r, "%s", why);
		free(dir);
		return;
	}
	if (c->peer != c->url) {
		struct kaas_substrate *b;
		if (kaas_substrate_open(c->peer, &b) < 0) {
			seen(r, "cannot open host B: %s", kaas_sub_errdetail());
			free(dir);
			return;
		}
		int ok = listing_complete(b, dir, n, &listed_b, why, sizeof why);
		kaas_substrate_close(b);
		if (!ok) {
			seen(r, "host B's listing: %s", why);
			free(dir);
			return;
		}
	}
	r->pass = 1;
	if (c->peer != c->url)
		seen(r, "%u files created, %zu listed by host A and %zu by host B: each exactly once, typed as files", n,
		     listed, listed_b);
	else
		seen(r, "%u files created, %zu listed: each exactly once, typed as files", n, listed);
	free(dir);
}

/* ---- probe 7: rmdir of a non-empty directory ---- */

static void probe_rmdir(struct ctx *c, struct kaas_check_result *r)
{
	char *dir = spath(c, "nonempty");
	char *f = spath(c, "nonempty/a");
	int rc = kaas_sub_mkdir(c->sub, dir, 0755);
	if (rc == 0)
		rc = write_file(c->sub, f, KAAS_O_CREAT | KAAS_O_EXCL, "a", 1, 0);
	if (rc < 0) {
		seen(r, "setup: %s", kaas_sub_errdetail());
		goto out;
	}
	rc = kaas_sub_rmdir(c->sub, dir);
	if (rc != -ENOTEMPTY) {
		seen(r, "rmdir of a directory holding one file returned %d (%s), expected -ENOTEMPTY", rc,
		     rc ? strerror(-rc) : "success");
		goto out;
	}
	if ((rc = kaas_sub_unlink(c->sub, f)) < 0 || (rc = kaas_sub_rmdir(c->sub, dir)) < 0) {
		seen(r, "after emptying it, rmdir: %s", kaas_sub_errdetail());
		goto out;
	}
	r->pass = 1;
	seen(r, "ENOTEMPTY while it held a file; removed once empty");
out:
	free(dir);
	free(f);
}

/* ---- probe 8: error codes ---- */

struct errcase {
	const char *what;
	int want;
	int got;
};

static void probe_errors(struct ctx *c, struct kaas_check_result *r)
{
	char *missing = spath(c, "missing");
	char *e = spath(c, "exists");
	char *d = spath(c, "adir");
	char *nop = spath(c, "noparent/sub");
	char *under = spath(c, "exists/child");
	char *x = spath(c, "x");
	struct kaas_stat st;
	struct kaas_file *f = NULL;
	struct errcase cs[16];
	size_t n = 0;
	int setup = write_file(c->sub, e, KAAS_O_CREAT | KAAS_O_EXCL, "e", 1, 0);
	if (setup == 0)
		setup = kaas_sub_mkdir(c->sub, d, 0755);
	if (setup < 0) {
		seen(r, "setup: %s", kaas_sub_errdetail());
		goto out;
	}
#define CASE(w, want_, expr)                                                                \
	do {                                                                                \
		int got_ = (expr);                                                          \
		cs[n++] = (struct errcase){w, want_, got_ > 0 ? 0 : got_};                  \
	} while (0)
	CASE("stat of a missing file", -ENOENT, kaas_sub_stat(c->sub, missing, &st));
	CASE("open of a missing file", -ENOENT, kaas_sub_open(c->sub, missing, KAAS_O_READ, 0, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("unlink of a missing file", -ENOENT, kaas_sub_unlink(c->sub, missing));
	CASE("rmdir of a missing directory", -ENOENT, kaas_sub_rmdir(c->sub, missing));
	CASE("rename of a missing file", -ENOENT, kaas_sub_rename(c->sub, missing, x));
	CASE("exclusive create of an existing file", -EEXIST,
	     kaas_sub_open(c->sub, e, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("mkdir of an existing directory", -EEXIST, kaas_sub_mkdir(c->sub, d, 0755));
	CASE("mkdir under a missing parent", -ENOENT, kaas_sub_mkdir(c->sub, nop, 0755));
	CASE("open of a directory for writing", -EISDIR, kaas_sub_open(c->sub, d, KAAS_O_WRITE, 0, &f));
	if (f) {
		kaas_sub_close(f);
		f = NULL;
	}
	CASE("unlink of a directory", -EISDIR, kaas_sub_unlink(c->sub, d));
	CASE("a file used as a directory", -ENOTDIR, kaas_sub_stat(c->sub, under, &st));
	CASE("a path with '..'", -EINVAL, kaas_sub_stat(c->sub, "../etc", &st));
	CASE("an absolute path", -EINVAL, kaas_sub_stat(c->sub, "/etc", &st));
	if (kaas_sub_open(c->sub, e, KAAS_O_READ, 0, &f) == 0) {
		char b[4];
		CASE("write through a read-only handle", -EBADF, (int)kaas_sub_pwrite(f, "x", 1, 0));
		CASE("read at end of file returns 0", 0, (int)kaas_sub_pread(f, b, sizeof b, 1));
		kaas_sub_close(f);
		f = NULL;
	}
#undef CASE
	char bad[400] = "";
	size_t bl = 0;
	unsigned nbad = 0;
	for (size_t i = 0; i < n; i++)
		if (cs[i].got != cs[i].want) {
			nbad++;
			if (bl < sizeof bad - 1)
				bl += (size_t)snprintf(bad + bl, sizeof bad - bl, "%s%s: %s (want %s)", nbad > 1 ? "; " : "",
						       cs[i].what, cs[i].got ? strerror(-cs[i].got) : "success",
						       cs[i].want ? strerror(-cs[i].want) : "success");
		}
	r->pass = nbad == 0;
	if (r->pass)
		seen(r, "%zu error cases, each as documented", n);
	else
		seen(r, "%u of %zu wrong: %s", nbad, n, bad);
out:
	free(missing);
	free(e);
	free(d);
	free(nop);
	free(under);
	free(x);
}

/* ---- driver ---- */

/* 0 if host B (the peer URL) sees the scratch directory host A just made,
 * else -errno with the detail set (-ENOENT: the peer is another volume). */
static int peer_sees(struct ctx *c)
{
	struct kaas_substrate *b;
	char why[300];
	int rc = kaas_substrate_open(c->peer, &b);
	if (rc < 0) {
		snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
		return kaas_sub_fail(rc, "cannot open the peer %s: %s", c->peer, why);
	}
	struct kaas_stat st;
	rc = kaas_sub_stat(b, c->scratch, &st);
	snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
	kaas_substrate_close(b);
	if (rc == -ENOENT)
		return kaas_sub_fail(rc, "the peer %s does not see the directory %s made through %s: "
				     "it is not the same volume", c->peer, c->scratch, c->url);
	if (rc < 0)
		return kaas_sub_fail(rc, "the peer %s cannot stat %s: %s", c->peer, c->scratch, why);
	if (st.type != KAAS_FT_DIR)
		return kaas_sub_fail(-ENOTDIR, "the peer %s sees %s, but not as a directory", c->peer, c->scratch);
	return 0;
}

int kaas_check_lookup(const char *key)
{
	for (int i = 0; i < KAAS_CHECK_COUNT; i++)
		if (!strcmp(probe_names[i].key, key))
			return i;
	return -1;
}

int kaas_substrate_check(const char *url, const struct kaas_check_opts *opts,
			 struct kaas_check_report *rep)
{
	static const struct kaas_check_opts defaults;
	static unsigned counter;
	memset(rep, 0, sizeof *rep);
	struct ctx c = {.url = url, .o = opts ? opts : &defaults};
	c.peer = c.o->peer_url ? c.o->peer_url : url;
	rep->peer_url = c.o->peer_url;
	unsigned long mask = c.o->mask ? c.o->mask : ~0ul;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		rep->r[i].key = probe_names[i].key;
		rep->r[i].guarantee = probe_names[i].guarantee;
		rep->r[i].ran = (mask >> i) & 1;
	}
	int rc = kaas_substrate_open(url, &c.sub);
	if (rc == 0) {
		snprintf(c.scratch, sizeof c.scratch, ".kaas-check.%s.%ld.%u", c.sub->host, (long)getpid(),
			 counter++);
		rc = kaas_sub_mkdir(c.sub, c.scratch, 0755);
	}
	const char *failed_step = c.sub ? "create a scratch directory" : "open the substrate";
	if (rc == 0 && c.o->peer_url) {
		rc = peer_sees(&c);
		failed_step = "use the peer";
		if (rc < 0) {
			struct kaas_converge_opts co = {.max_attempts = 20, .max_delay_us = 100000};
			char keep[400];
			snprintf(keep, sizeof keep, "%s", kaas_sub_errdetail());
			kaas_remove_tree(c.sub, c.scratch, &co);
			kaas_sub_fail(rc, "%s", keep);
		}
	}
	if (rc < 0) {
		char why[400];
		snprintf(why, sizeof why, "%s", kaas_sub_errdetail());
		for (int i = 0; i < KAAS_CHECK_COUNT; i++)
			if (rep->r[i].ran)
				seen(&rep->r[i], "cannot %s: %s", failed_step, why);
		kaas_substrate_close(c.sub);
		rep->all_pass = 0;
		return rc;
	}
	static void (*const probes[KAAS_CHECK_COUNT])(struct ctx *, struct kaas_check_result *) = {
		probe_rename, probe_excl, probe_c2o, probe_fsync_visible,
		probe_fsync_reopen, probe_readdir, probe_rmdir, probe_errors,
	};
	rep->all_pass = 1;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		if (!rep->r[i].ran)
			continue;
		probes[i](&c, &rep->r[i]);
		if (!rep->r[i].pass)
			rep->all_pass = 0;
	}
	struct kaas_converge_opts co = {.max_attempts = 20, .max_delay_us = 100000};
	kaas_remove_tree(c.sub, c.scratch, &co);
	kaas_substrate_close(c.sub);
	return 0;
}

void kaas_check_print(const char *url, const struct kaas_check_report *rep, void *file)
{
	FILE *out = file;
	fprintf(out, "substrate check of %s\n", url);
	if (rep->peer_url)
		fprintf(out, "peer (host B): %s\n", rep->peer_url);
	fprintf(out, "\n");
	fprintf(out, "%-46s %-6s %s\n", "GUARANTEE", "RESULT", "SEEN");
	for (int i = 0; i < KAAS_CHECK_COUNT; i++) {
		const struct kaas_check_result *r = &rep->r[i];
		if (!r->ran)
			continue;
		fprintf(out, "%-46s %-6s %s\n", r->guarantee, r->pass ? "PASS" : "FAIL", r->seen);
	}
	int failed = 0;
	for (int i = 0; i < KAAS_CHECK_COUNT; i++)
		if (rep->r[i].ran && !rep->r[i].pass)
			failed++;
	if (failed) {
		fprintf(out, "\nFAILED: %d check(s). This substrate does not meet the contract; do not put kaas data on it:", failed);
		for (int i = 0; i < KAAS_CHECK_COUNT; i++)
			if (rep->r[i].ran && !rep->r[i].pass)
				fprintf(out, " %s", rep->r[i].key);
		fprintf(out, "\n");
	} else {
		fprintf(out, "\nAll checks passed: the substrate meets the contract's guarantees as far as these probes can see.\n");
	}
}
