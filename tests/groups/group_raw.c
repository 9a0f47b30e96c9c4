/*
 * group_raw.c — the rebalance protocol's answers, request by request, from
 * two hand-driven members of one group on a running kaasd: JoinGroup v5
 * (MEMBER_ID_REQUIRED, then joined), SyncGroup v3 relaying the leader's
 * assignments, Heartbeat v3 (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
 * REBALANCE_IN_PROGRESS), a second member's join parking until the first
 * rejoins, LeaveGroup v3.
 *
 *   group_raw HOST:PORT GROUP
 * Exit 0 when every answer is the expected one, 1 otherwise.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kafka/codec.h"
#include "tests/support/tcp.h"

static int failures;
static const char *group;

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                              \
			fprintf(stderr, "\n");                                              \
			failures++;                                                         \
		}                                                                           \
	} while (0)

static void start(struct kaas_kw *w, int16_t key, int16_t ver)
{
	kaas_kw_init(w);
	kaas_kw_i32(w, 0);
	kaas_kw_i16(w, key);
	kaas_kw_i16(w, ver);
	kaas_kw_i32(w, key);
	kaas_kw_str(w, 0, "group_raw");
}

static void send_req(int fd, struct kaas_kw *w)
{
	kaas_kw_put_i32_at(w, 0, (int32_t)(w->len - 4));
	if (send(fd, w->buf, w->len, MSG_NOSIGNAL) != (ssize_t)w->len)
		exit(1);
	kaas_kw_free(w);
}

static int recv_n(int fd, uint8_t *p, size_t n, int timeout_ms)
{
	while (n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, timeout_ms) <= 0)
			return -1;
		ssize_t r = recv(fd, p, n, 0);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Read one response into r (body after the correlation id); buf owned. */
static uint8_t *recv_resp(int fd, struct kaas_kr *r, int timeout_ms)
{
	uint8_t h[8];
	if (recv_n(fd, h, 8, timeout_ms) < 0)
		return NULL;
	uint32_t size = ((uint32_t)h[0] << 24) | ((uint32_t)h[1] << 16) | ((uint32_t)h[2] << 8) | h[3];
	if (size < 4 || size > (1u << 24))
		exit(1);
	uint8_t *b = malloc(size);
	if (!b || recv_n(fd, b, size - 4, 5000) < 0)
		exit(1);
	kaas_kr_init(r, b, size - 4);
	return b;
}

/* Has a response arrived within timeout? */
static int readable(int fd, int timeout_ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	return poll(&pf, 1, timeout_ms) > 0;
}

static void send_join(int fd, const char *member)
{
	struct kaas_kw w;
	start(&w, 11, 5);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, 10000);
	kaas_kw_i32(&w, 20000);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, NULL);
	kaas_kw_str(&w, 0, "consumer");
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, "range");
	kaas_kw_bytes(&w, 0, member[0] ? member : "new", member[0] ? (int32_t)strlen(member) : 3);
	send_req(fd, &w);
}

struct join_ans {
	int16_t err;
	int32_t gen;
	char leader[128], member[128];
	int32_t nmembers;
};

static void recv_join(int fd, struct join_ans *a)
{
	struct kaas_kr r;
	uint8_t *b = recv_resp(fd, &r, 15000);
	if (!b) {
		fprintf(stderr, "FAIL: no JoinGroup answer\n");
		exit(1);
	}
	(void)kaas_kr_i32(&r);
	a->err = kaas_kr_i16(&r);
	a->gen = kaas_kr_i32(&r);
	(void)kaas_kr_str(&r, 0);
	struct kaas_kslice l = kaas_kr_str(&r, 0), m = kaas_kr_str(&r, 0);
	a->nmembers = kaas_kr_array(&r, 0, 1);
	snprintf(a->leader, sizeof(a->leader), "%.*s", l.len, (const char *)l.p);
	snprintf(a->member, sizeof(a->member), "%.*s", m.len, (const char *)m.p);
	free(b);
}

static int16_t heartbeat(int fd, int32_t gen, const char *member)
{
	struct kaas_kw w;
	start(&w, 12, 3);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, NULL);
	send_req(fd, &w);
	struct kaas_kr r;
	uint8_t *b = recv_resp(fd, &r, 5000);
	if (!b)
		exit(1);
	(void)kaas_kr_i32(&r);
	int16_t e = kaas_kr_i16(&r);
	free(b);
	return e;
}

/* SyncGroup; with two assignments when `leader`. */
static void send_sync(int fd, int32_t gen, const char *member, const char *m1, const char *m2)
{
	struct kaas_kw w;
	start(&w, 14, 3);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, NULL);
	int n = (m1 != NULL) + (m2 != NULL);
	kaas_kw_i32(&w, n);
	if (m1) {
		kaas_kw_str(&w, 0, m1);
		kaas_kw_bytes(&w, 0, "for-1", 5);
	}
	if (m2) {
		kaas_kw_str(&w, 0, m2);
		kaas_kw_bytes(&w, 0, "for-2", 5);
	}
	send_req(fd, &w);
}

/* SyncGroup of a follower whose assignments array is null (-1): no
 * assignments, as an empty one. */
static void send_sync_null(int fd, int32_t gen, const char *member)
{
	struct kaas_kw w;
	start(&w, 14, 3);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, NULL);
	kaas_kw_i32(&w, -1);
	send_req(fd, &w);
}

static int16_t recv_sync(int fd, char *assignment, size_t size)
{
	struct kaas_kr r;
	uint8_t *b = recv_resp(fd, &r, 15000);
	if (!b) {
		fprintf(stderr, "FAIL: no SyncGroup answer\n");
		exit(1);
	}
	(void)kaas_kr_i32(&r);
	int16_t e = kaas_kr_i16(&r);
	struct kaas_kslice a = kaas_kr_nbytes(&r, 0);
	snprintf(assignment, size, "%.*s", a.len > 0 ? a.len : 0, a.len > 0 ? (const char *)a.p : "");
	free(b);
	return e;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: group_raw HOST:PORT GROUP\n");
		return 2;
	}
	group = argv[2];
	int c1 = kaas_test_connect(argv[1]), c2 = kaas_test_connect(argv[1]);
	struct join_ans j1, j2;
	char a[64];

	send_join(c1, "");
	recv_join(c1, &j1);
	CHECK(j1.err == 79 && j1.member[0], "first join: error %d, expected MEMBER_ID_REQUIRED", j1.err);
	char m1[128];
	snprintf(m1, sizeof(m1), "%s", j1.member);
	send_join(c1, m1);
	recv_join(c1, &j1);
	CHECK(j1.err == 0 && j1.gen == 1 && strcmp(j1.leader, m1) == 0 && j1.nmembers == 1,
	      "joined: error %d generation %d leader %s members %d", j1.err, j1.gen, j1.leader,
	      j1.nmembers);
	send_sync(c1, 1, m1, m1, NULL);
	CHECK(recv_sync(c1, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0, "sync gen 1: '%s'", a);
	CHECK(heartbeat(c1, 1, m1) == 0, "heartbeat");
	CHECK(heartbeat(c1, 7, m1) == 22, "heartbeat at a wrong generation: not ILLEGAL_GENERATION");
	CHECK(heartbeat(c1, 1, "nobody") == 25, "heartbeat of a stranger: not UNKNOWN_MEMBER_ID");

	/* A second member: its join waits for the first one to rejoin. */
	send_join(c2, "");
	recv_join(c2, &j2);
	CHECK(j2.err == 79, "second member's first join: %d", j2.err);
	char m2[128];
	snprintf(m2, sizeof(m2), "%s", j2.member);
	send_join(c2, m2);
	CHECK(!readable(c2, 300), "the second join was answered before the rebalance completed");
	CHECK(heartbeat(c1, 1, m1) == 27, "heartbeat during the rebalance: not REBALANCE_IN_PROGRESS");
	send_join(c1, m1);
	recv_join(c1, &j1);
	recv_join(c2, &j2);
	CHECK(j1.err == 0 && j1.gen == 2 && j1.nmembers == 2 && strcmp(j1.leader, m1) == 0,
	      "leader's rejoin: error %d generation %d members %d", j1.err, j1.gen, j1.nmembers);
	CHECK(j2.err == 0 && j2.gen == 2 && j2.nmembers == 0 && strcmp(j2.leader, m1) == 0,
	      "follower's join: error %d generation %d members %d", j2.err, j2.gen, j2.nmembers);
	/* The follower's sync waits for the leader's assignments. */
	send_sync(c2, 2, m2, NULL, NULL);
	CHECK(!readable(c2, 300), "the follower's sync was answered before the leader's");
	send_sync(c1, 2, m1, m1, m2);
	CHECK(recv_sync(c1, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0, "leader's sync: '%s'", a);
	CHECK(recv_sync(c2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0, "follower's sync: '%s'", a);
	send_sync_null(c2, 2, m2);
	CHECK(recv_sync(c2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0,
	      "follower's sync with a null assignments array: '%s'", a);
	send_sync(c1, 1, m1, NULL, NULL);
	CHECK(recv_sync(c1, a, sizeof(a)) == 22, "sync at an old generation: not ILLEGAL_GENERATION");

	/* The second member leaves: the first is told to rejoin. */
	struct kaas_kw w;
	start(&w, 13, 3);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, m2);
	kaas_kw_str(&w, 0, NULL);
	send_req(c2, &w);
	struct kaas_kr r;
	uint8_t *b = recv_resp(c2, &r, 5000);
	if (!b)
		return 1;
	(void)kaas_kr_i32(&r);
	int16_t top = kaas_kr_i16(&r);
	int32_t n = kaas_kr_array(&r, 0, 1);
	(void)kaas_kr_str(&r, 0);
	(void)kaas_kr_nstr(&r, 0);
	int16_t me = kaas_kr_i16(&r);
	free(b);
	CHECK(top == 0 && n == 1 && me == 0, "leave: %d/%d/%d", top, n, me);
	CHECK(heartbeat(c1, 2, m1) == 27, "after a leave: not REBALANCE_IN_PROGRESS");
	CHECK(heartbeat(c2, 2, m2) == 25, "the member that left: not UNKNOWN_MEMBER_ID");
	close(c1);
	close(c2);
	if (failures)
		return 1;
	printf("rebalance protocol: ok\n");
	return 0;
}
