/*
 * check_support.c — what every probe of the substrate check shares: the
 * result text, scratch paths, self-verifying payloads, whole-file write and
 * read, forked children and the pipes to them (check_internal.h).
 */
#include "check/check_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/crc32c.h"

void kaas_check_seen(struct kaas_check_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->seen, sizeof r->seen, fmt, ap);
	va_end(ap);
}

void kaas_check_verdict(struct kaas_check_result *r, const char *ok, const char *prefix, const char *why)
{
	if (r->pass)
		kaas_check_seen(r, "%s", ok);
	else
		kaas_check_seen(r, "%s%s", prefix, why);
}

char *kaas_check_path(struct kaas_check_ctx *c, const char *fmt, ...)
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
char *kaas_check_make_version(unsigned v, size_t *len)
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
int kaas_check_parse_version(const char *buf, size_t len, unsigned *v)
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

int kaas_check_write_file(struct kaas_substrate *sub, const char *path, int flags, const void *buf,
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

int kaas_check_read_handle(struct kaas_file *f, char **out, size_t *len)
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

uint64_t kaas_check_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for a child, SIGKILLing it after timeout_ms.  Returns its exit code or -1. */
int kaas_check_wait_child(pid_t pid, uint64_t timeout_ms)
{
	uint64_t end = kaas_check_now_ms() + timeout_ms;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0)
			return -1;
		if (kaas_check_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

int kaas_check_read_fd(int fd, void *buf, size_t len)
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

void kaas_check_write_fd(int fd, const void *buf, size_t len)
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
unsigned kaas_check_spawn(unsigned n, const int ctl[2], void (*run)(void *, int, int), void *arg,
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

void kaas_check_fill(unsigned char *b, size_t n, unsigned seed)
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
int kaas_check_verify_on(struct kaas_substrate *sub, const char *path, const unsigned char *want,
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
	rc = kaas_check_read_handle(f, &buf, &len);
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

int kaas_check_open_peer(struct kaas_check_ctx *c, struct kaas_check_result *r, struct kaas_substrate **b)
{
	if (kaas_substrate_open(c->peer, b) < 0) {
		kaas_check_seen(r, "cannot open a second host: %s", kaas_sub_errdetail());
		return -1;
	}
	return 0;
}

char *kaas_check_mkdir(struct kaas_check_ctx *c, struct kaas_check_result *r, const char *name)
{
	char *dir = kaas_check_path(c, "%s", name);
	if (kaas_sub_mkdir(c->sub, dir, 0755) < 0) {
		kaas_check_seen(r, "mkdir: %s", kaas_sub_errdetail());
		free(dir);
		return NULL;
	}
	return dir;
}
