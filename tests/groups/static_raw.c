/*
 * static_raw.c — static group membership (KIP-345) request by request, from
 * hand-driven members of one group on a running kaasd:
 *   - a JoinGroup v5 with a group.instance.id joins at once (no
 *     MEMBER_ID_REQUIRED round trip);
 *   - the same instance id joining again with no member id replaces the
 *     first: same generation, no rebalance for the other member (its
 *     heartbeat stays OK), the previous assignment back through SyncGroup;
 *   - the replaced member id is fenced: Heartbeat v3, SyncGroup v3,
 *     JoinGroup v5 and OffsetCommit v7 answer FENCED_INSTANCE_ID;
 *   - DescribeGroups v4 shows the instance ids;
 *   - LeaveGroup v3 by instance id (no member id) removes the member and
 *     the other one is told to rebalance; an unknown instance id is
 *     UNKNOWN_MEMBER_ID, a stale member id of a known one FENCED;
 *   - a static leader that does not rejoin a rebalance stays a member (the
 *     new leader, one that rejoined, assigns it) and, coming back within
 *     its session timeout, gets that assignment with no further rebalance.
 *
 *   static_raw HOST:PORT GROUP
 *   static_raw HOST:PORT GROUP delay MS
 *     the broker runs with group.initial.rebalance.delay.ms MS (> 300):
 *     two members joining an empty group 200 ms apart form one generation
 *     of both, answered no sooner than MS after the first join.
 * Exit 0 when every answer is the expected one, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/kgroup.h"
#include "tests/support/kwire.h"

#define FENCED 82

static int failures;
static struct kgroup g = { .client = "static_raw", .session_ms = 10000, .rebalance_ms = 20000 };

#define CHECK(...) KWIRE_EXPECT(failures, __VA_ARGS__)

static void send_join(int fd, const char *member, const char *instance)
{
	kgroup_send_join(fd, &g, member, instance, "meta");
}

static void recv_join(int fd, struct kgroup_join *a)
{
	kgroup_recv_join(fd, a);
}

static int16_t recv_sync(int fd, char *assignment, size_t size)
{
	return kgroup_recv_sync(fd, assignment, size);
}

static int16_t leave(int fd, const char *member, const char *instance)
{
	return kgroup_leave(fd, &g, member, instance);
}

static int16_t heartbeat(int fd, int32_t gen, const char *member, const char *instance)
{
	return kgroup_heartbeat(fd, &g, gen, member, instance);
}

/* SyncGroup v3 (see kgroup_send_sync); its answer when `assignment`. */
static int16_t sync_group(int fd, int32_t gen, const char *member, const char *instance,
			  const char *m1, const char *m2, char *assignment, size_t size)
{
	kgroup_send_sync(fd, &g, gen, member, instance, m1, m2);
	return assignment ? kgroup_recv_sync(fd, assignment, size) : 0;
}

/* OffsetCommit v7 of offset 1 of partition 0 of `topic`: the partition's error. */
static int16_t commit(int fd, int32_t gen, const char *member, const char *instance,
		      const char *topic)
{
	struct kaas_kw w;
	kgroup_begin(&w, &g, 8, 7);
	kaas_kw_str(&w, 0, g.group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, instance);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, 0);
	kaas_kw_i64(&w, 1);
	kaas_kw_i32(&w, -1);
	kaas_kw_str(&w, 0, NULL);
	kgroup_send(fd, &w, "OffsetCommit");
	struct kaas_kr r;
	uint8_t *b = kgroup_answer(fd, &r, "OffsetCommit");
	(void)kaas_kr_i32(&r);
	int16_t e = -1;
	if (kaas_kr_array(&r, 0, 1) == 1) {
		(void)kaas_kr_str(&r, 0);
		if (kaas_kr_array(&r, 0, 1) == 1) {
			(void)kaas_kr_i32(&r);
			e = kaas_kr_i16(&r);
		}
	}
	free(b);
	return e;
}

/* DescribeGroups v4: "member=instance" pairs (instance "-" when null),
 * sorted by the caller's expectations: written in response order. */
static void describe(int fd, char *out, size_t size)
{
	struct kaas_kw w;
	kgroup_begin(&w, &g, 15, 4);
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, g.group);
	kaas_kw_i8(&w, 0);
	kgroup_send(fd, &w, "DescribeGroups");
	struct kaas_kr r;
	uint8_t *b = kgroup_answer(fd, &r, "DescribeGroups");
	(void)kaas_kr_i32(&r);
	out[0] = '\0';
	if (kaas_kr_array(&r, 0, 1) == 1) {
		int16_t e = kaas_kr_i16(&r);
		(void)kaas_kr_str(&r, 0);
		(void)kaas_kr_str(&r, 0);
		(void)kaas_kr_str(&r, 0);
		(void)kaas_kr_str(&r, 0);
		int32_t n = kaas_kr_array(&r, 0, 1);
		size_t at = (size_t)snprintf(out, size, "err=%d", e);
		for (int32_t i = 0; i < n && kaas_kr_ok(&r) && at < size; i++) {
			struct kaas_kslice m = kaas_kr_str(&r, 0);
			struct kaas_kslice in = kaas_kr_nstr(&r, 0);
			(void)kaas_kr_str(&r, 0);
			(void)kaas_kr_str(&r, 0);
			(void)kaas_kr_nbytes(&r, 0);
			(void)kaas_kr_nbytes(&r, 0);
			at += (size_t)snprintf(out + at, size - at, " %.*s=%.*s", m.len, (const char *)m.p,
					       in.len >= 0 ? in.len : 1,
					       in.len >= 0 ? (const char *)in.p : "-");
		}
	}
	free(b);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int initial_delay(const char *hostport, int delay_ms)
{
	int c1 = kwire_connect(hostport, 5000), c2 = kwire_connect(hostport, 5000);
	struct kgroup_join j1, j2;
	double t0 = now_ms();
	send_join(c1, "", "delay-1");
	usleep(200000);
	send_join(c2, "", "delay-2");
	recv_join(c1, &j1);
	double t1 = now_ms() - t0;
	recv_join(c2, &j2);
	CHECK(j1.err == 0 && j1.gen == 1 && j2.err == 0 && j2.gen == 1 && j1.leader[0] &&
		      strcmp(j1.leader, j2.leader) == 0 &&
		      (strcmp(j1.leader, j1.member) == 0 ? j1.nmembers : j2.nmembers) == 2,
	      "errors %d/%d generations %d/%d members %d/%d (want one generation of both)", j1.err,
	      j2.err, j1.gen, j2.gen, j1.nmembers, j2.nmembers);
	CHECK(t1 >= delay_ms - 50 && t1 < delay_ms + 2000,
	      "the first join was answered after %.0f ms, want about %d", t1, delay_ms);
	close(c1);
	close(c2);
	if (failures)
		return 1;
	printf("initial rebalance delay: one generation of 2 after %.0f ms\n", t1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[3], "delay") == 0) {
		g.group = argv[2];
		return initial_delay(argv[1], atoi(argv[4]));
	}
	if (argc != 3) {
		fprintf(stderr, "usage: static_raw HOST:PORT GROUP\n");
		return 2;
	}
	g.group = argv[2];
	int c1 = kwire_connect(argv[1], 5000), c2 = kwire_connect(argv[1], 5000),
	    c3 = kwire_connect(argv[1], 5000);
	struct kgroup_join j1, j2, j3;
	char a[64], m1[128], m2[128], m3[128], d[512], want[512];

	/* A static member joins directly. */
	send_join(c1, "", "inst-a");
	recv_join(c1, &j1);
	CHECK(j1.err == 0 && j1.gen == 1 && j1.member[0] && strcmp(j1.leader, j1.member) == 0 &&
		      j1.nmembers == 1,
	      "static join: error %d generation %d leader '%s' member '%s' members %d (want a direct join)",
	      j1.err, j1.gen, j1.leader, j1.member, j1.nmembers);
	if (j1.err)
		return 1;
	snprintf(m1, sizeof(m1), "%s", j1.member);
	CHECK(sync_group(c1, 1, m1, "inst-a", m1, NULL, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0,
	      "sync gen 1: '%s'", a);

	/* A dynamic member joins: generation 2 with both. */
	send_join(c2, "", NULL);
	recv_join(c2, &j2);
	CHECK(j2.err == 79, "dynamic member's first join: %d", j2.err);
	snprintf(m2, sizeof(m2), "%s", j2.member);
	send_join(c2, m2, NULL);
	CHECK(heartbeat(c1, 1, m1, "inst-a") == 27, "heartbeat during the rebalance");
	send_join(c1, m1, "inst-a");
	recv_join(c1, &j1);
	recv_join(c2, &j2);
	CHECK(j1.err == 0 && j1.gen == 2 && j1.nmembers == 2 && strcmp(j1.leader, m1) == 0,
	      "leader's rejoin: error %d generation %d members %d", j1.err, j1.gen, j1.nmembers);
	CHECK(j2.err == 0 && j2.gen == 2, "follower's join: error %d generation %d", j2.err, j2.gen);
	sync_group(c2, 2, m2, NULL, NULL, NULL, NULL, 0);
	CHECK(sync_group(c1, 2, m1, "inst-a", m1, m2, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0,
	      "leader's sync: '%s'", a);
	CHECK(recv_sync(c2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0, "follower's sync: '%s'", a);
	CHECK(heartbeat(c2, 2, m2, NULL) == 0, "follower heartbeat at generation 2");

	/* The static member restarts: same instance id, no member id. */
	send_join(c3, "", "inst-a");
	recv_join(c3, &j3);
	snprintf(m3, sizeof(m3), "%s", j3.member);
	CHECK(j3.err == 0 && j3.gen == 2 && m3[0] && strcmp(m3, m1) != 0 && j3.nmembers == 0 &&
		      strcmp(j3.leader, m1) == 0,
	      "static rejoin: error %d generation %d (want 2) member '%s' leader '%s' members %d",
	      j3.err, j3.gen, m3, j3.leader, j3.nmembers);
	CHECK(sync_group(c3, 2, m3, "inst-a", NULL, NULL, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0,
	      "the returning static member's assignment: '%s', want its old 'for-1'", a);
	CHECK(heartbeat(c2, 2, m2, NULL) == 0, "the other member was made to rebalance");
	CHECK(heartbeat(c3, 2, m3, "inst-a") == 0, "the new incarnation's heartbeat");

	/* The old incarnation is fenced everywhere. */
	CHECK(heartbeat(c1, 2, m1, "inst-a") == FENCED, "old incarnation's heartbeat: not FENCED");
	CHECK(sync_group(c1, 2, m1, "inst-a", NULL, NULL, a, sizeof(a)) == FENCED,
	      "old incarnation's sync: not FENCED");
	CHECK(commit(c1, 2, m1, "inst-a", "static-raw") == FENCED, "old incarnation's commit: not FENCED");
	CHECK(commit(c3, 2, m3, "inst-a", "static-raw") == 0, "new incarnation's commit");
	send_join(c1, m1, "inst-a");
	recv_join(c1, &j1);
	CHECK(j1.err == FENCED, "old incarnation's rejoin: %d, not FENCED", j1.err);
	CHECK(heartbeat(c1, 2, m1, NULL) == 25, "old member id without instance: not UNKNOWN_MEMBER_ID");
	CHECK(heartbeat(c2, 2, m2, NULL) == 0, "the fenced member's attempts made the group rebalance");

	/* DescribeGroups v4 names the instance ids (members newest first). */
	describe(c2, d, sizeof(d));
	char w1[300], w2[300];
	snprintf(w1, sizeof(w1), "err=0 %s=inst-a %s=-", m3, m2);
	snprintf(w2, sizeof(w2), "err=0 %s=- %s=inst-a", m2, m3);
	snprintf(want, sizeof(want), "%s", strcmp(d, w1) == 0 ? w1 : w2);
	CHECK(strcmp(d, want) == 0, "DescribeGroups v4: '%s', want '%s'", d, w1);

	/* LeaveGroup v3 by instance id. */
	CHECK(leave(c2, "", "inst-nobody") == 25, "leave of an unknown instance: not UNKNOWN_MEMBER_ID");
	CHECK(leave(c2, m1, "inst-a") == FENCED, "leave by a stale member id of the instance: not FENCED");
	CHECK(heartbeat(c2, 2, m2, NULL) == 0, "a refused leave made the group rebalance");
	CHECK(leave(c2, "", "inst-a") == 0, "leave by instance id");
	CHECK(heartbeat(c2, 2, m2, NULL) == 27, "after the static member left: not REBALANCE_IN_PROGRESS");
	CHECK(heartbeat(c3, 2, m3, "inst-a") == 25, "the member that left: not UNKNOWN_MEMBER_ID");
	send_join(c2, m2, NULL);
	recv_join(c2, &j2);
	CHECK(j2.err == 0 && j2.gen == 3 && j2.nmembers == 1 && strcmp(j2.leader, m2) == 0,
	      "survivor's rejoin: error %d generation %d members %d", j2.err, j2.gen, j2.nmembers);
	describe(c2, d, sizeof(d));
	snprintf(want, sizeof(want), "err=0 %s=-", m2);
	CHECK(strcmp(d, want) == 0, "DescribeGroups v4 after the leave: '%s'", d);
	close(c1);
	close(c2);
	close(c3);

	/* A static leader misses a rebalance (another group). */
	char g2[200];
	snprintf(g2, sizeof(g2), "%s-2", g.group);
	g.group = g2;
	g.session_ms = 8000;
	g.rebalance_ms = 2000;
	c1 = kwire_connect(argv[1], 5000);
	c2 = kwire_connect(argv[1], 5000);
	c3 = kwire_connect(argv[1], 5000);
	send_join(c1, "", "inst-s");
	recv_join(c1, &j1);
	snprintf(m1, sizeof(m1), "%s", j1.member);
	CHECK(j1.err == 0 && j1.gen == 1 && strcmp(j1.leader, m1) == 0, "static leader's join: %d", j1.err);
	CHECK(sync_group(c1, 1, m1, "inst-s", m1, NULL, a, sizeof(a)) == 0, "static leader's sync");
	send_join(c2, "", NULL);
	recv_join(c2, &j2);
	snprintf(m2, sizeof(m2), "%s", j2.member);
	send_join(c2, m2, NULL); /* the static leader never rejoins */
	CHECK(!kwire_readable(c2, 1000), "the rebalance completed without waiting for the static member");
	recv_join(c2, &j2);
	CHECK(j2.err == 0 && j2.gen == 2 && strcmp(j2.leader, m2) == 0 && j2.nmembers == 2,
	      "without the static leader: error %d generation %d leader '%s' (want '%s') members %d (want 2)",
	      j2.err, j2.gen, j2.leader, m2, j2.nmembers);
	CHECK(sync_group(c2, 2, m2, NULL, m1, m2, a, sizeof(a)) == 0 && strcmp(a, "for-2") == 0,
	      "new leader's sync: '%s'", a);
	send_join(c3, "", "inst-s");
	recv_join(c3, &j3);
	snprintf(m3, sizeof(m3), "%s", j3.member);
	CHECK(j3.err == 0 && j3.gen == 2 && j3.nmembers == 0, "static member back: error %d generation %d",
	      j3.err, j3.gen);
	CHECK(sync_group(c3, 2, m3, "inst-s", NULL, NULL, a, sizeof(a)) == 0 && strcmp(a, "for-1") == 0,
	      "static member back: assignment '%s', want 'for-1' (what the new leader gave it)", a);
	CHECK(heartbeat(c2, 2, m2, NULL) == 0, "the static member's return made the group rebalance");
	close(c1);
	close(c2);
	close(c3);
	if (failures)
		return 1;
	printf("static membership: ok\n");
	return 0;
}
