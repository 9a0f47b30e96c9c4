/* nfs_conn.c — the libnfs backend's pool of contexts (connect, borrow,
 * bind, reconnect) and its error mapping; see nfs_sub.h. */
#include "backends/nfs_sub.h"
#include "util/assert_held.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Errors                                                               */

/* libnfs's -errno (or odd values) to the substrate's errno (positive). */
int kaas_nfs_map_err(int rc, const char *msg)
{
	int e = rc < 0 ? -rc : rc;
	if (e == EINTR) /* libnfs: "Command timed out" / "Command was cancelled" */
		return ETIMEDOUT;
	if (e == EFAULT) /* libnfs: RPC_STATUS_ERROR, the transport failed */
		return ECONNRESET;
	if (e == ERANGE && msg && strstr(msg, "EXIST"))
		return EEXIST;
	if (e == 0 || e > 4095)
		return EIO;
	return e;
}

int kaas_nfs_is_conn_err(int e)
{
	return e == -ETIMEDOUT || e == -ECONNRESET || e == -ECONNREFUSED || e == -EPIPE ||
	       e == -ENOTCONN;
}

int kaas_nfs_fail(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc, const char *what, const char *path)
{
	const char *msg = c && c->nfs ? nfs_get_error(c->nfs) : NULL;
	int e = kaas_nfs_map_err(rc, msg);
	if (!msg || !*msg)
		return kaas_sub_fail(e, "%s %s/%s: %s", what, s->root, path, strerror(e));
	return kaas_sub_fail(e, "%s %s/%s: %s (libnfs: %s)", what, s->root, path, strerror(e), msg);
}

/* "/" + path: libnfs paths are relative to the mounted directory. */
char *kaas_nfs_abspath(const char *path)
{
	size_t n = strlen(path);
	char *p = malloc(n + 2);
	if (!p)
		return NULL;
	p[0] = '/';
	memcpy(p + 1, path, n + 1);
	return p;
}

/* ------------------------------------------------------------------ */
/* Connections                                                          */

/* libnfs 4.0 says only "nfs_service failed" when it cannot connect: find
 * out which port refuses (or why the host is unreachable) with a plain TCP
 * connect, bounded by the substrate's timeout. */
static int try_connect(const char *server, int port, int timeout_ms)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	if (getaddrinfo(server, ps, &hints, &ai) != 0 || !ai)
		return EHOSTUNREACH;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int e = 0;
	if (fd < 0) {
		e = errno;
	} else if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		e = errno;
		if (e == EINPROGRESS) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int n = poll(&p, 1, timeout_ms);
			socklen_t sl = sizeof e;
			if (n == 0)
				e = ETIMEDOUT;
			else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
				e = errno;
		}
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return e;
}

static int diagnose_connect(const char *server, struct kaas_nfs_sub *s, char *why, size_t size)
{
	int ports[2] = {s->nfsport, s->version == 3 ? s->mountport : 0};
	const char *names[2] = {"nfsport", "mountport"};
	for (int i = 0; i < 2; i++) {
		if (!ports[i])
			continue;
		int e = try_connect(server, ports[i], s->timeout_ms);
		if (e) {
			snprintf(why, size, " (%s %d: %s)", names[i], ports[i], strerror(e));
			return e;
		}
	}
	if (!s->nfsport) {
		int e = try_connect(server, 111, s->timeout_ms);
		if (e) {
			snprintf(why, size, " (portmapper port 111: %s; give nfsport and mountport)", strerror(e));
			return e;
		}
	}
	snprintf(why, size, " (the server's RPC service does not answer)");
	return ECONNRESET;
}

/* A connected, mounted context, or NULL with the failure recorded. */
static struct nfs_context *connect_ctx(struct kaas_nfs_sub *s, int *err)
{
	struct nfs_context *nfs = nfs_init_context();
	if (!nfs) {
		*err = kaas_sub_fail(ENOMEM, "%s: cannot create an NFS context", s->root);
		return NULL;
	}
	nfs_set_timeout(nfs, s->timeout_ms);
	if (s->version == 4) {
		/* Every context is its own NFSv4 client: a shared client name
		 * would let one context's SETCLIENTID expire another's state. */
		static unsigned seq;
		char name[96], verf[8];
		unsigned n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
		snprintf(name, sizeof name, "kaas-%s-%ld-%u", s->base.host[0] ? s->base.host : "host",
			 (long)getpid(), n);
		nfs4_set_client_name(nfs, name);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)n << 48) ^ (uint64_t)getpid();
		memcpy(verf, &v, sizeof verf);
		nfs4_set_verifier(nfs, verf);
	}
	/* A SYN to a black hole must not take the kernel's two minutes. */
	nfs_set_tcp_syncnt(nfs, 2);
	struct nfs_url *u = nfs_parse_url_dir(nfs, s->liburl);
	if (!u) {
		*err = kaas_sub_fail(EINVAL, "%s: not a valid nfs:// URL: %s", s->base.url ? s->base.url : s->root,
				     nfs_get_error(nfs));
		nfs_destroy_context(nfs);
		return NULL;
	}
	nfs_set_dircache(nfs, 0); /* other hosts' creates and removes must show at once */
	int rc = nfs_mount(nfs, u->server, u->path);
	if (rc < 0) {
		const char *msg = nfs_get_error(nfs);
		int e = kaas_nfs_map_err(rc, msg);
		char why[160] = "";
		if (msg && strstr(msg, "nfs_service failed"))
			e = diagnose_connect(u->server, s, why, sizeof why);
		else if (msg && strstr(msg, "resolv"))
			e = EHOSTUNREACH;
		else if (msg && strstr(msg, "MNT3ERR_NOENT"))
			e = ENOENT;
		else if (msg && (strstr(msg, "MNT3ERR_ACCES") || strstr(msg, "NFS4ERR_ACCESS")))
			e = EACCES;
		else if (msg && strstr(msg, "timed out"))
			e = ETIMEDOUT;
		if (e == EACCES)
			snprintf(why, sizeof why, " (is %s exported to this client?)", u->path);
		*err = kaas_sub_fail(e, "%s: cannot mount %s on %s: %s%s", s->root, u->path, u->server,
				     msg && *msg ? msg : strerror(e), why);
		nfs_destroy_url(u);
		nfs_destroy_context(nfs);
		return NULL;
	}
	nfs_destroy_url(u);
	return nfs;
}

struct kaas_nfs_conn *kaas_nfs_conn_new(struct kaas_nfs_sub *s, int *err)
{
	struct kaas_nfs_conn *c = calloc(1, sizeof *c);
	if (!c) {
		*err = kaas_sub_fail(ENOMEM, "%s: out of memory", s->root);
		return NULL;
	}
	c->nfs = connect_ctx(s, err);
	if (!c->nfs) {
		free(c);
		return NULL;
	}
	c->writemax = nfs_get_writemax(c->nfs);
	if (s->version == 4 && (c->writemax == 0 || c->writemax > KAAS_NFS4_MAX_WRITE))
		c->writemax = KAAS_NFS4_MAX_WRITE;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* Replace a conn's context by a fresh one (called with c->lock held).
 * Only done when no handle is bound to it: handles belong to a context. */
int kaas_nfs_conn_reconnect(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c)
{
	assert_held(&c->lock);
	int err = 0;
	struct nfs_context *nfs = connect_ctx(s, &err);
	if (!nfs)
		return err;
	if (c->nfs)
		nfs_destroy_context(c->nfs);
	c->nfs = nfs;
	return 0;
}

/* Borrow a context for an op by name: an idle one, else a new one while
 * the pool has room, else wait for one in turn.  Returns it locked. */
struct kaas_nfs_conn *kaas_nfs_conn_borrow(struct kaas_nfs_sub *s, int *err)
{
	pthread_mutex_lock(&s->lock);
	unsigned n = s->nconns;
	pthread_mutex_unlock(&s->lock);
	for (unsigned i = 0; i < n; i++)
		if (pthread_mutex_trylock(&s->conns[i]->lock) == 0)
			return s->conns[i];
	pthread_mutex_lock(&s->lock);
	if (s->nconns < s->maxconns) {
		struct kaas_nfs_conn *c = kaas_nfs_conn_new(s, err);
		if (!c) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		pthread_mutex_lock(&c->lock);
		s->conns[s->nconns++] = c;
		pthread_mutex_unlock(&s->lock);
		return c;
	}
	struct kaas_nfs_conn *c = s->conns[s->rr++ % s->nconns];
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&c->lock);
	return c;
}

/* Pick the context a new handle is bound to: the one with the fewest
 * handles, a new one if every existing one has some and there is room.
 * Returns it locked with nfiles already counted. */
struct kaas_nfs_conn *kaas_nfs_conn_for_file(struct kaas_nfs_sub *s, int *err)
{
	pthread_mutex_lock(&s->lock);
	struct kaas_nfs_conn *best = NULL;
	for (unsigned i = 0; i < s->nconns; i++)
		if (!best || s->conns[i]->nfiles < best->nfiles)
			best = s->conns[i];
	if ((!best || best->nfiles > 0) && s->nconns < s->maxconns) {
		struct kaas_nfs_conn *c = kaas_nfs_conn_new(s, err);
		if (c) {
			s->conns[s->nconns++] = c;
			best = c;
		} else if (!best) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
	}
	best->nfiles++;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&best->lock);
	return best;
}

void kaas_nfs_conn_unbind(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c)
{
	pthread_mutex_lock(&s->lock);
	c->nfiles--;
	pthread_mutex_unlock(&s->lock);
}

/* After a connection error on an op that is safe to repeat: reconnect the
 * context if no handle is bound to it (else libnfs's own reconnect is all
 * there is) and say whether to re-drive. */
int kaas_nfs_redrive(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c, int rc)
{
	if (!kaas_nfs_is_conn_err(rc))
		return 0;
	pthread_mutex_lock(&s->lock);
	unsigned bound = c->nfiles;
	pthread_mutex_unlock(&s->lock);
	if (bound)
		return 1; /* libnfs reconnects under the handles; try once more */
	return kaas_nfs_conn_reconnect(s, c) == 0;
}

unsigned kaas_nfs_conn_bound(struct kaas_nfs_sub *s, struct kaas_nfs_conn *c)
{
	pthread_mutex_lock(&s->lock);
	unsigned n = c->nfiles;
	pthread_mutex_unlock(&s->lock);
	return n;
}
