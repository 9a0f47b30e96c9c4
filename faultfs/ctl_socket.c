/* ctl_socket.c — JSON commands over a Unix socket. */
#include "faultfs/ctl_socket.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct kaas_ctl_server {
	struct kaas_fault_model *m;
	int fd;
	int stop_pipe[2];
	char *path;
	pthread_t thread;
};

char *kaas_ctl_socket_path(const char *dir)
{
	char *p = NULL;
	if (asprintf(&p, "%s/.faultfs.sock", dir) < 0)
		return NULL;
	return p;
}

static int addr_for(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path)
		return kaas_sub_fail(ENAMETOOLONG, "control socket path too long (%zu bytes, max %zu): %s",
				     strlen(path), sizeof a->sun_path - 1, path);
	strcpy(a->sun_path, path);
	return 0;
}

/* Read until EOF (bounded: 1 MiB, 10 s without progress). */
static char *read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	while (buf) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 10000) <= 0)
			break;
		if (len + 1 >= cap) {
			if (cap >= (1u << 20))
				break;
			char *b = realloc(buf, cap * 2);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			buf[len] = '\0';
			return buf;
		}
		len += (size_t)n;
	}
	free(buf);
	return NULL;
}

static void write_all(int fd, const char *s)
{
	size_t len = strlen(s);
	while (len) {
		ssize_t n = write(fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

static void *serve(void *arg)
{
	struct kaas_ctl_server *s = arg;
	for (;;) {
		struct pollfd p[2] = { { s->fd, POLLIN, 0 }, { s->stop_pipe[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		char *cmd = read_all(c);
		char *reply = NULL;
		if (cmd)
			kaas_fault_ctl(s->m, cmd, &reply);
		write_all(c, reply ? reply : "{\"ok\":false,\"error\":\"unreadable command\"}");
		write_all(c, "\n");
		free(reply);
		free(cmd);
		close(c);
	}
	return NULL;
}

int kaas_ctl_server_start(struct kaas_fault_model *m, const char *path, struct kaas_ctl_server **out)
{
	*out = NULL;
	struct sockaddr_un a;
	int rc = addr_for(path, &a);
	if (rc < 0)
		return rc;
	struct kaas_ctl_server *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->m = m;
	s->path = strdup(path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || pipe(s->stop_pipe) < 0) {
		rc = kaas_sub_fail(errno, "control socket: %s", strerror(errno));
		goto fail;
	}
	unlink(path);
	if (bind(s->fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->fd, 16) < 0) {
		rc = kaas_sub_fail(errno, "control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	if (pthread_create(&s->thread, NULL, serve, s) != 0) {
		rc = -EAGAIN;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
	return rc;
}

void kaas_ctl_server_stop(struct kaas_ctl_server *s)
{
	if (!s)
		return;
	if (write(s->stop_pipe[1], "x", 1) == 1)
		pthread_join(s->thread, NULL);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	close(s->fd);
	unlink(s->path);
	free(s->path);
	free(s);
}

int kaas_ctl_send(const char *path, const char *cmd, char **reply)
{
	*reply = NULL;
	struct sockaddr_un a;
	int rc = addr_for(path, &a);
	if (rc < 0)
		return rc;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kaas_sub_fail(errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		rc = kaas_sub_fail(errno, "no faultfs daemon answers at %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	write_all(fd, cmd);
	shutdown(fd, SHUT_WR);
	*reply = read_all(fd);
	close(fd);
	if (!*reply)
		return kaas_sub_fail(ETIMEDOUT, "faultfs daemon at %s did not answer", path);
	return 0;
}
