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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/kgroup.h"
#include "tests/support/kwire.h"

static int failures;
static struct kgroup g = { .client = "group_raw", .session_ms = 10000, .rebalance_ms = 20000 };

#define CHECK(...) KWIRE_EXPECT(failures, __VA_ARGS__)

/* A JoinGroup as `member` ("" for a new one); its metadata is the member id. */
static void send_join(int fd, const char *member)
{
	kgroup_send_join(fd, &g, member, NULL, member[0] ? member : "new");
}

static void recv_join(int fd, struct kgroup_join *a)
{
	kgroup_recv_join(fd, a);
}

/* SyncGroup of a follower whose assignments array is null (-1): no
 * assignments, as an empty one. */
static void send_sync_null(int fd, int32_t gen, const char *member)
{
	struct kaas_kw w;
	kgroup_begin(&w, &g, 14, 3);
	kaas_kw_str(&w, 0, g.group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, NULL);
	kaas_kw_i32(&w, -1);
	kgroup_send(fd, &w, "SyncGroup");
}

static int16_t recv_sync(int fd, char *assignment, size_t size)
{
	return kgroup_recv_sync(fd, assignment, size);
}

static int16_t heartbeat(int fd, int32_t gen, const char *member)
{
	return kgroup_heartbeat(fd, &g, gen, member, NULL);
}

/* SyncGroup; a leader assigns "for-1" to m1 and "for-2" to m2. */
static void send_sync(int fd, int32_t gen, const char *member, const char *m1, const char *m2)
{
	kgroup_send_sync(fd, &g, gen, member, NULL, m1, m2);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: group_raw HOST:PORT GROUP\n");
		return 2;
	}
	g.group = argv[2];
	int c1 = kwire_connect(argv[1], 5000), c2 = kwire_connect(argv[1], 5000);
	if (c1 < 0 || c2 < 0) {
		fprintf(stderr, "cannot connect to %s\n", argv[1]);
		return 1;
	}
	struct kgroup_join j1, j2;
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
	CHECK(!kwire_readable(c2, 300), "the second join was answered before the rebalance completed");
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
	CHECK(!kwire_readable(c2, 300), "the follower's sync was answered before the leader's");
	send_sync(c1, 2, m1, m1, m2);
	CHECK(recv_sync(c1, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0, "leader's sync: '%s'", a);
	CHECK(recv_sync(c2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0, "follower's sync: '%s'", a);
	send_sync_null(c2, 2, m2);
	CHECK(recv_sync(c2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0,
	      "follower's sync with a null assignments array: '%s'", a);
	send_sync(c1, 1, m1, NULL, NULL);
	CHECK(recv_sync(c1, a, sizeof(a)) == 22, "sync at an old generation: not ILLEGAL_GENERATION");

	/* The second member leaves: the first is told to rejoin. */
	int16_t left = kgroup_leave(c2, &g, m2, NULL);
	CHECK(left == 0, "leave: %d", left);
	CHECK(heartbeat(c1, 2, m1) == 27, "after a leave: not REBALANCE_IN_PROGRESS");
	CHECK(heartbeat(c2, 2, m2) == 25, "the member that left: not UNKNOWN_MEMBER_ID");
	close(c1);
	close(c2);
	if (failures)
		return 1;
	printf("rebalance protocol: ok\n");
	return 0;
}
