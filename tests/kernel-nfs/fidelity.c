/*
 * fidelity.c — what two NFS clients of one volume observe of each other.
 *
 *   fidelity DIR_A DIR_B [MAX_WAIT_MS]
 *
 * DIR_A and DIR_B are the same directory of one volume seen by host A and
 * host B (two nosharecache kernel NFS mounts, or two faultfs host views).
 * Each scenario does something on one host and records what the other (or
 * the same) host sees; staleness is measured by polling every 20 ms up to
 * MAX_WAIT_MS (default 40000).  Prints one line per observation:
 *
 *   KEY<TAB>OBSERVED
 *
 * where OBSERVED is a short fixed vocabulary (errno names, "same",
 * "new", "after N ms", "never (> N ms)") so that two runs can be compared
 * line by line (scripts/nfs-fidelity).  It works in a fresh directory
 * "fid.<pid>" under DIR_A and removes it at the end.  A measurement tool of
 * the operating system's client: it uses the OS file API on purpose.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char a[4096], b[4096];
static long max_wait = 40000;

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static const char *ename(int e)
{
	switch (e) {
	case 0: return "ok";
	case ENOENT: return "ENOENT";
	case ESTALE: return "ESTALE";
	case ENOTEMPTY: return "ENOTEMPTY";
	case EBUSY: return "EBUSY";
	case EIO: return "EIO";
	case EEXIST: return "EEXIST";
	case EACCES: return "EACCES";
	default: return strerrorname_np(e) ? strerrorname_np(e) : "other";
	}
}

static void out(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(const char *key, const char *fmt, ...)
{
	va_list ap;
	printf("%s\t", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static char *pa(const char *name)
{
	static char buf[4][4200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", a, name);
	return buf[k];
}

static char *pb(const char *name)
{
	static char buf[4][4200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", b, name);
	return buf[k];
}

static int put(const char *path, const char *data, size_t n, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, data, n);
	int e = w == (ssize_t)n ? 0 : -EIO;
	if (close(fd) < 0 && !e)
		e = -errno;
	return e;
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? -1 : st.st_size;
}

/* Names in dir starting with prefix (count), and the first in first. */
static int count_prefix(const char *dir, const char *prefix, char *first, size_t fsz)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			if (!n && first)
				snprintf(first, fsz, "%s", e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static int listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	int found = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (!strcmp(e->d_name, name))
			found = 1;
	closedir(d);
	return found;
}

/* Poll cond(arg) every 20 ms up to max_wait; print "after N ms" or never. */
static void poll_until(const char *key, int (*cond)(const void *), const void *arg)
{
	long t0 = now_ms();
	for (;;) {
		if (cond(arg)) {
			long dt = now_ms() - t0;
			if (dt < 100)
				out(key, "at once (< 100 ms)");
			else
				out(key, "after ~%ld s", (dt + 500) / 1000);
			return;
		}
		if (now_ms() - t0 > max_wait) {
			out(key, "never (> %ld s)", max_wait / 1000);
			return;
		}
		usleep(20000);
	}
}

/* 1. silly rename: A unlinks a file A holds open. */
static void silly(void)
{
	put(pa("s1"), "silly", 5, O_EXCL);
	int fd = open(pa("s1"), O_RDONLY);
	if (fd < 0) {
		out("silly.setup", "%s", ename(errno));
		return;
	}
	int e = unlink(pa("s1")) < 0 ? errno : 0;
	out("silly.unlink-open-file", "%s", ename(e));
	char name[300] = "";
	int na = count_prefix(a, ".nfs", name, sizeof name);
	int nb = count_prefix(b, ".nfs", NULL, 0);
	if (na > 0)
		out("silly.name-on-A", "%.4s + %zu hex digits", name, strlen(name) - 4);
	else
		out("silly.name-on-A", "none");
	out("silly.listed-on-B", "%s", nb > 0 ? "yes" : "no");
	char buf[8] = "";
	ssize_t r = pread(fd, buf, sizeof buf, 0);
	out("silly.read-through-A-handle", "%s", r == 5 ? "data" : ename(r < 0 ? errno : 0));
	if (na > 0) {
		char p[4400];
		snprintf(p, sizeof p, "%s/%s", a, name);
		e = unlink(p) < 0 ? errno : 0;
		out("silly.unlink-silly-name", "%s", ename(e));
		/* another client unlinks A's .nfs name */
		snprintf(p, sizeof p, "%s/%s", b, name);
		e = unlink(p) < 0 ? errno : 0;
		out("silly.B-unlinks-A-silly-name", "%s", ename(e));
		r = pread(fd, buf, sizeof buf, 0);
		out("silly.A-read-after-B-unlink", "%s", r == 5 ? "data" : ename(r < 0 ? errno : 0));
	}
	close(fd);
	long t0 = now_ms();
	int left;
	while ((left = count_prefix(a, ".nfs", NULL, 0)) > 0 && now_ms() - t0 < 5000)
		usleep(20000);
	out("silly.after-last-close", "%s", left > 0 ? "still there after 5 s" : "gone");
}

/* 2. B holds a file open; A removes it (really: A has no handle). */
static void estale(void)
{
	put(pa("e1"), "estale-data", 11, O_EXCL);
	int fd = open(pb("e1"), O_RDONLY);
	if (fd < 0) {
		out("estale.setup", "B open: %s", ename(errno));
		return;
	}
	char buf[16];
	ssize_t r = pread(fd, buf, sizeof buf, 0); /* B caches the data */
	unlink(pa("e1"));
	struct stat st;
	int e = fstat(fd, &st) < 0 ? errno : 0;
	out("estale.B-fstat-after-A-unlink", "%s", ename(e));
	r = pread(fd, buf, sizeof buf, 0);
	out("estale.B-read-after-A-unlink", "%s", r == 11 ? "data" : ename(r < 0 ? errno : 0));
	int fd2 = open(pa("e1x"), O_WRONLY | O_CREAT, 0644);
	if (fd2 >= 0)
		close(fd2);
	e = close(fd) < 0 ? errno : 0;
	out("estale.B-close", "%s", ename(e));
	e = stat(pb("e1"), &st) < 0 ? errno : 0;
	out("estale.B-stat-name-after", "%s", ename(e));
}

struct sz {
	const char *path;
	off_t want;
};
static int size_is(const void *arg)
{
	const struct sz *s = arg;
	return size_of(s->path) == s->want;
}

/* 3. attribute cache: B stats, A appends and closes, B stats again. */
static void attrs(void)
{
	put(pa("a1"), "0123456789", 10, O_EXCL);
	size_of(pb("a1")); /* B caches the attributes */
	usleep(200000);
	int fd = open(pa("a1"), O_WRONLY | O_APPEND);
	if (write(fd, "more", 4) != 4)
		out("attr.setup", "write failed");
	close(fd);
	struct sz s = {pb("a1"), 14};
	out("attr.B-stat-right-after-A-close", "%s", size_of(pb("a1")) == 14 ? "new size" : "old size");
	poll_until("attr.B-stat-sees-new-size", size_is, &s);
	/* B's open (close-to-open: revalidates) */
	put(pa("a2"), "0123456789", 10, O_EXCL);
	size_of(pb("a2"));
	fd = open(pa("a2"), O_WRONLY | O_APPEND);
	if (write(fd, "more", 4) != 4)
		out("attr.setup", "write failed");
	close(fd);
	fd = open(pb("a2"), O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	char buf[32];
	ssize_t r = read(fd, buf, sizeof buf);
	close(fd);
	if (st.st_size == 14 && r == 14)
		out("attr.B-open-after-A-close", "new size and data");
	else
		out("attr.B-open-after-A-close", "stale (size %lld, read %zd)", (long long)st.st_size, r);
}

static int can_open(const void *arg)
{
	int fd = open(arg, O_RDONLY);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}
static int can_stat(const void *arg)
{
	return size_of(arg) >= 0;
}
static int is_listed(const void *arg)
{
	const char *const *p = arg;
	return listed(p[0], p[1]) == 1;
}

/* 4. negative lookups: B looks a name up (ENOENT), A creates it. */
static void negative(void)
{
	int fd = open(pb("n1"), O_RDONLY);
	out("neg.B-open-missing", "%s", ename(fd < 0 ? errno : 0));
	if (fd >= 0)
		close(fd);
	put(pa("n1"), "n", 1, O_EXCL);
	fd = open(pb("n1"), O_RDONLY);
	out("neg.B-open-right-after-A-create", "%s", ename(fd < 0 ? errno : 0));
	if (fd >= 0)
		close(fd);
	poll_until("neg.B-open-sees-new-name", can_open, pb("n1"));

	/* the same with stat */
	size_of(pb("n2"));
	put(pa("n2"), "n", 1, O_EXCL);
	out("neg.B-stat-right-after-A-create", "%s", size_of(pb("n2")) >= 0 ? "found" : "ENOENT");
	poll_until("neg.B-stat-sees-new-name", can_stat, pb("n2"));

	/* exclusive create on B of a name A created, B having cached ENOENT */
	size_of(pb("n3"));
	put(pa("n3"), "n", 1, O_EXCL);
	fd = open(pb("n3"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	out("neg.B-excl-create-of-A-name", "%s", ename(fd < 0 ? errno : 0));
	if (fd >= 0)
		close(fd);

	/* B removes a name itself, A creates it again, B stats it at once */
	put(pa("n4"), "n", 1, O_EXCL);
	size_of(pb("n4"));
	unlink(pb("n4"));
	put(pa("n4"), "n", 1, O_EXCL);
	out("neg.B-stat-after-own-unlink-and-A-create", "%s", size_of(pb("n4")) >= 0 ? "found" : "ENOENT");
}

/* 5. directory listing: B lists, A creates, B lists again. */
static void listing(void)
{
	char d_a[4300], d_b[4300];
	snprintf(d_a, sizeof d_a, "%s", pa("ld"));
	snprintf(d_b, sizeof d_b, "%s", pb("ld"));
	mkdir(d_a, 0755);
	put(pa("ld/x0"), "x", 1, O_EXCL);
	listed(d_b, "x0"); /* B caches the directory */
	usleep(200000);
	put(pa("ld/x1"), "x", 1, O_EXCL);
	out("list.B-lists-new-name-right-after", "%s", listed(d_b, "x1") == 1 ? "yes" : "no");
	const char *args[2] = {d_b, "x1"};
	poll_until("list.B-lists-new-name", is_listed, args);
	unlink(pa("ld/x0"));
	out("list.B-lists-removed-name-right-after", "%s", listed(d_b, "x0") == 1 ? "still listed" : "gone");
	unlink(pa("ld/x1"));
	rmdir(d_a);
}

/* 6. close-to-open with 1 MiB. */
static void c2o(void)
{
	size_t n = 1 << 20;
	char *buf = malloc(n), *got = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(i * 7 + 3);
	put(pa("c1"), buf, n, O_EXCL);
	int fd = open(pb("c1"), O_RDONLY);
	size_t have = 0;
	ssize_t r;
	while (fd >= 0 && have < n && (r = read(fd, got + have, n - have)) > 0)
		have += (size_t)r;
	if (fd >= 0)
		close(fd);
	if (have == n && !memcmp(buf, got, n))
		out("c2o.B-open-after-A-close", "every byte");
	else
		out("c2o.B-open-after-A-close", "short or wrong (%zu bytes)", have);
	/* A rewrites while B still has it open: B's old handle */
	fd = open(pb("c1"), O_RDONLY);
	buf[0] ^= 1;
	int fa = open(pa("c1"), O_WRONLY);
	if (pwrite(fa, buf, 1, 0) != 1)
		out("c2o.setup", "pwrite failed");
	close(fa);
	char c;
	r = pread(fd, &c, 1, 0);
	out("c2o.B-old-handle-after-A-rewrite", "%s", r == 1 && c == buf[0] ? "new byte" : "old byte (cached)");
	close(fd);
	free(buf);
	free(got);
}

/* 7. rmdir of a directory holding a silly-renamed file. */
static void rmdir_silly(void)
{
	mkdir(pa("rd"), 0755);
	put(pa("rd/f"), "f", 1, O_EXCL);
	int fd = open(pa("rd/f"), O_RDONLY);
	unlink(pa("rd/f"));
	int e = rmdir(pa("rd")) < 0 ? errno : 0;
	out("rmdir.A-rmdir-dir-with-A-silly-file", "%s", ename(e));
	e = rmdir(pb("rd")) < 0 ? errno : 0;
	out("rmdir.B-rmdir-dir-with-A-silly-file", "%s", ename(e));
	close(fd);
	usleep(500000);
	e = rmdir(pa("rd")) < 0 ? errno : 0;
	out("rmdir.A-rmdir-after-close", "%s", ename(e));
}

/* 8. rename over an open file. */
static void rename_over(void)
{
	put(pa("r1"), "version1", 8, O_EXCL);
	int fb = open(pb("r1"), O_RDONLY);
	char buf[16] = "";
	ssize_t r = pread(fb, buf, sizeof buf, 0);
	put(pa("r1.tmp"), "VERSION2", 8, O_EXCL);
	int e = rename(pa("r1.tmp"), pa("r1")) < 0 ? errno : 0;
	out("rename.A-rename-over-file-B-holds", "%s", ename(e));
	memset(buf, 0, sizeof buf);
	r = pread(fb, buf, sizeof buf, 0);
	out("rename.B-old-handle-read", "%s", r == 8 ? (!strcmp(buf, "version1") ? "old data" : "new data")
						    : ename(r < 0 ? errno : 0));
	struct stat st;
	e = fstat(fb, &st) < 0 ? errno : 0;
	out("rename.B-old-handle-fstat", "%s", ename(e));
	close(fb);
	int fd = open(pb("r1"), O_RDONLY);
	memset(buf, 0, sizeof buf);
	r = fd >= 0 ? pread(fd, buf, sizeof buf, 0) : -1;
	out("rename.B-new-open", "%s", fd < 0 ? ename(errno) : (!strcmp(buf, "VERSION2") ? "new data" : "old data"));
	if (fd >= 0)
		close(fd);
	/* same host: A holds the target open, A renames over it */
	int fa = open(pa("r1"), O_RDONLY);
	put(pa("r1.tmp"), "version3", 8, O_EXCL);
	rename(pa("r1.tmp"), pa("r1"));
	out("rename.A-renames-over-file-A-holds", "%s",
	    count_prefix(a, ".nfs", NULL, 0) > 0 ? "silly-renamed (.nfs*)" : "no silly name");
	close(fa);
}

static void rmtree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[4400];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rmtree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: fidelity DIR_A DIR_B [MAX_WAIT_MS]\n");
		return 2;
	}
	if (argc > 3)
		max_wait = atol(argv[3]);
	snprintf(a, sizeof a, "%s/fid.%ld", argv[1], (long)getpid());
	snprintf(b, sizeof b, "%s/fid.%ld", argv[2], (long)getpid());
	if (mkdir(a, 0755) < 0) {
		perror(a);
		return 1;
	}
	silly();
	estale();
	attrs();
	negative();
	listing();
	c2o();
	rmdir_silly();
	rename_over();
	rmtree(a);
	return 0;
}
