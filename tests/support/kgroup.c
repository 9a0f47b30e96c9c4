/* kgroup.c — JoinGroup, SyncGroup, Heartbeat and LeaveGroup of hand-driven
 * group members (contracts in kgroup.h). */
#include "tests/support/kgroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/kwire.h"

#define KGROUP_WAIT_MS 15000

void kgroup_begin(struct kaas_kw *w, const struct kgroup *g, int16_t key, int16_t version)
{
	kwire_begin(w, key, version, key, g->client);
}

void kgroup_send(int fd, struct kaas_kw *w, const char *what)
{
	if (kwire_send(fd, w) < 0) {
		fprintf(stderr, "FAIL: cannot send %s\n", what);
		exit(1);
	}
}

uint8_t *kgroup_answer(int fd, struct kaas_kr *r, const char *what)
{
	uint8_t *b = kwire_answer(fd, r, KGROUP_WAIT_MS);
	if (!b) {
		fprintf(stderr, "FAIL: no %s answer\n", what);
		exit(1);
	}
	return b;
}

static void kgroup_copy(char *dst, size_t size, struct kaas_kslice s)
{
	snprintf(dst, size, "%.*s", s.len > 0 ? s.len : 0, s.len > 0 ? (const char *)s.p : "");
}

void kgroup_send_join(int fd, const struct kgroup *g, const char *member, const char *instance,
		      const char *meta)
{
	struct kaas_kw w;
	kgroup_begin(&w, g, 11, 5);
	kaas_kw_str(&w, 0, g->group);
	kaas_kw_i32(&w, g->session_ms);
	kaas_kw_i32(&w, g->rebalance_ms);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, instance);
	kaas_kw_str(&w, 0, "consumer");
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, "range");
	kaas_kw_bytes(&w, 0, meta, (int32_t)strlen(meta));
	kgroup_send(fd, &w, "JoinGroup");
}

void kgroup_recv_join(int fd, struct kgroup_join *a)
{
	struct kaas_kr r;
	uint8_t *b = kgroup_answer(fd, &r, "JoinGroup");
	(void)kaas_kr_i32(&r); /* throttle */
	a->err = kaas_kr_i16(&r);
	a->gen = kaas_kr_i32(&r);
	(void)kaas_kr_str(&r, 0); /* protocol */
	struct kaas_kslice l = kaas_kr_str(&r, 0), m = kaas_kr_str(&r, 0);
	a->nmembers = kaas_kr_array(&r, 0, 1);
	kgroup_copy(a->leader, sizeof(a->leader), l);
	kgroup_copy(a->member, sizeof(a->member), m);
	free(b);
}

/* Send a request whose body is group, an int32 n, member and instance (a
 * Heartbeat's generation; a LeaveGroup's one-member array), read its answer
 * past the throttle time and return its top-level error; *body is the answer
 * to free, r reads on after the error. */
static int16_t kgroup_member_call(int fd, const struct kgroup *g, int16_t key, int32_t n,
				  const char *member, const char *instance, const char *what,
				  struct kaas_kr *r, uint8_t **body)
{
	struct kaas_kw w;
	kgroup_begin(&w, g, key, 3);
	kaas_kw_str(&w, 0, g->group);
	kaas_kw_i32(&w, n);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, instance);
	kgroup_send(fd, &w, what);
	*body = kgroup_answer(fd, r, what);
	(void)kaas_kr_i32(r); /* throttle */
	return kaas_kr_i16(r);
}

int16_t kgroup_heartbeat(int fd, const struct kgroup *g, int32_t gen, const char *member,
			 const char *instance)
{
	struct kaas_kr r;
	uint8_t *b;
	int16_t e = kgroup_member_call(fd, g, 12, gen, member, instance, "Heartbeat", &r, &b);
	free(b);
	return e;
}

void kgroup_send_sync(int fd, const struct kgroup *g, int32_t gen, const char *member,
		      const char *instance, const char *m1, const char *m2)
{
	struct kaas_kw w;
	kgroup_begin(&w, g, 14, 3);
	kaas_kw_str(&w, 0, g->group);
	kaas_kw_i32(&w, gen);
	kaas_kw_str(&w, 0, member);
	kaas_kw_str(&w, 0, instance);
	kaas_kw_i32(&w, (m1 != NULL) + (m2 != NULL));
	if (m1) {
		kaas_kw_str(&w, 0, m1);
		kaas_kw_bytes(&w, 0, "for-1", 5);
	}
	if (m2) {
		kaas_kw_str(&w, 0, m2);
		kaas_kw_bytes(&w, 0, "for-2", 5);
	}
	kgroup_send(fd, &w, "SyncGroup");
}

int16_t kgroup_recv_sync(int fd, char *assignment, size_t size)
{
	struct kaas_kr r;
	uint8_t *b = kgroup_answer(fd, &r, "SyncGroup");
	(void)kaas_kr_i32(&r);
	int16_t e = kaas_kr_i16(&r);
	kgroup_copy(assignment, size, kaas_kr_nbytes(&r, 0));
	free(b);
	return e;
}

int16_t kgroup_leave(int fd, const struct kgroup *g, const char *member, const char *instance)
{
	struct kaas_kr r;
	uint8_t *b;
	int16_t e = kgroup_member_call(fd, g, 13, 1, member, instance, "LeaveGroup", &r, &b);
	int32_t n = kaas_kr_array(&r, 0, 1);
	if (!e) {
		(void)kaas_kr_str(&r, 0);  /* member id */
		(void)kaas_kr_nstr(&r, 0); /* instance id */
		e = n == 1 ? kaas_kr_i16(&r) : -1;
	}
	free(b);
	return e;
}
