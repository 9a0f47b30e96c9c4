/* incarnation.c — this process's incarnation and the private names it
 * writes (replace temps, exclusive-create link names). */
#include "substrate/substrate.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static atomic_uint_least64_t incarnation; /* 0: not drawn yet */
static atomic_ulong private_seq;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A forked child is another writer: it draws its own incarnation. */
static void forget_in_child(void)
{
	atomic_store(&incarnation, 0);
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_in_child);
}

uint64_t kaas_incarnation(void)
{
	pthread_once(&atfork_once, install_atfork);
	uint64_t v = atomic_load(&incarnation);
	if (v)
		return v;
	uint64_t r = 0;
	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
	}
	r |= 1; /* never 0 */
	uint64_t expect = 0;
	if (!atomic_compare_exchange_strong(&incarnation, &expect, r))
		return expect; /* another thread drew first */
	return r;
}

unsigned long kaas_private_seq_next(void)
{
	return atomic_fetch_add(&private_seq, 1) + 1;
}

int kaas_private_name_fmt(char *buf, size_t size, const char *prefix, const char *host,
			  unsigned long seq)
{
	int n = snprintf(buf, size, "%s%s.%ld.%016llx.%lu", prefix, host && *host ? host : "host",
			 (long)getpid(), (unsigned long long)kaas_incarnation(), seq);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int kaas_private_name(char *buf, size_t size, const char *prefix, const char *host)
{
	return kaas_private_name_fmt(buf, size, prefix, host, kaas_private_seq_next());
}

/* Is [p, e) all decimal digits (at least one)? */
static int all_digits(const char *p, const char *e)
{
	if (p >= e)
		return 0;
	for (; p < e; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

int kaas_private_name_parse(const char *name, const char *prefix, char *host, size_t hsize,
			    long *pid, uint64_t *inc)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0)
		return -EINVAL;
	const char *start = name + pl;
	const char *end = name + strlen(name);
	const char *dots[4];
	int found = 0;
	for (const char *p = end - 1; p >= start && found < 4; p--)
		if (*p == '.')
			dots[found++] = p;
	/* dots[0] before seq, dots[1] before inc (or pid, legacy), ... */
	if (found < 2 || !all_digits(dots[0] + 1, end))
		return -EINVAL;
	const char *h_end, *pid_at, *pid_end;
	*inc = 0;
	if (found >= 3 && dots[0] - dots[1] - 1 == 16 && all_digits(dots[2] + 1, dots[1])) {
		char hex[17];
		memcpy(hex, dots[1] + 1, 16);
		hex[16] = '\0';
		char *x;
		*inc = strtoull(hex, &x, 16);
		if (*x || !*inc)
			return -EINVAL;
		pid_at = dots[2] + 1;
		pid_end = dots[1];
		h_end = dots[2];
	} else {
		/* The format before incarnations: <host>.<pid>.<seq>. */
		if (!all_digits(dots[1] + 1, dots[0]))
			return -EINVAL;
		pid_at = dots[1] + 1;
		pid_end = dots[0];
		h_end = dots[1];
	}
	/* For a temp the host is the component before the pid (the target
	 * name before it may hold dots). */
	const char *h = h_end - 1;
	while (h >= start && *h != '.')
		h--;
	h++;
	size_t hl = (size_t)(h_end - h);
	if (hl >= hsize)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*pid = strtol(pid_at, NULL, 10);
	(void)pid_end;
	return 0;
}
