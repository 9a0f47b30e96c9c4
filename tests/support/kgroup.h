/*
 * kgroup.h — hand-driven consumer-group members for the raw group test
 * clients (tests/groups/group_raw, static_raw): JoinGroup v5, SyncGroup v3,
 * Heartbeat v3 and LeaveGroup v3 requests on the kwire framing.
 *
 * These are test helpers for one scripted scenario: a request that cannot be
 * sent, or an answer that does not come within 15 s, ends the process with
 * exit status 1 and a "FAIL: no ... answer" line.
 */
#ifndef KAAS_TEST_KGROUP_H
#define KAAS_TEST_KGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "kafka/codec.h"

/* The group the requests are for, and how they are sent. */
struct kgroup {
	const char *group;
	const char *client;     /* client id of every request */
	int32_t session_ms;     /* of the next JoinGroup */
	int32_t rebalance_ms;
};

/* Initialise w as a request of api `key` at `version` (correlation id =
 * key, g's client id); the body is the caller's. */
void kgroup_begin(struct kaas_kw *w, const struct kgroup *g, int16_t key, int16_t version);
/* Send w (freed); on failure print "FAIL: cannot send WHAT" and exit(1). */
void kgroup_send(int fd, struct kaas_kw *w, const char *what);
/* One answer, r set on its body after the correlation id: the body, to
 * free; none within 15 s: print "FAIL: no WHAT answer" and exit(1). */
uint8_t *kgroup_answer(int fd, struct kaas_kr *r, const char *what);

/* What a JoinGroup answered. */
struct kgroup_join {
	int16_t err;
	int32_t gen;
	char leader[128], member[128];
	int32_t nmembers;       /* members listed (the leader's answer only) */
};

/* Send a JoinGroup v5 ("consumer", one protocol "range" with metadata
 * `meta`) as `member` ("" for a new one) and `instance` (NULL: dynamic);
 * the answer is read by kgroup_recv_join (it may park until a rebalance). */
void kgroup_send_join(int fd, const struct kgroup *g, const char *member, const char *instance,
		      const char *meta);
void kgroup_recv_join(int fd, struct kgroup_join *a);

/* Heartbeat v3: the error answered. */
int16_t kgroup_heartbeat(int fd, const struct kgroup *g, int32_t gen, const char *member,
			 const char *instance);

/* Send a SyncGroup v3; a leader passes the members to assign: "for-1" to m1
 * and "for-2" to m2 (either may be NULL).  kgroup_recv_sync reads the answer:
 * its error, and the assignment as a string into assignment[size]. */
void kgroup_send_sync(int fd, const struct kgroup *g, int32_t gen, const char *member,
		      const char *instance, const char *m1, const char *m2);
int16_t kgroup_recv_sync(int fd, char *assignment, size_t size);

/* LeaveGroup v3 of one member identity: the top-level error when set, else
 * the member's; -1 when the answer lists other than one member. */
int16_t kgroup_leave(int fd, const struct kgroup *g, const char *member, const char *instance);

#endif
