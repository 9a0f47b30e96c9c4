/*
 * mute.c — a throttled connection is muted (KIP-219): its response, with
 * the throttle time in it, is sent at once, and then nothing more is read
 * from it until the throttle time has passed, on a timer of the loop (no
 * thread waits).  A client that honours the throttle time sends nothing
 * meanwhile; one that does not finds its requests left unread in the
 * socket.  Requests already read go on being served.
 */
#include "server/internal.h"

#include <assert.h>
#include <stdlib.h>

struct kaas_conn_mute {
	uv_timer_t t;
	struct kaas_conn *c;
	uint64_t until_ms;
};

static void mute_closed(uv_handle_t *h)
{
	free(h->data);
}

/* End the mute (the timer is closed; c's reference dropped last). */
static void mute_end(struct kaas_conn *c)
{
	struct kaas_conn_mute *m = c->mute;
	assert(m && m->c == c);
	c->mute = NULL;
	uv_timer_stop(&m->t);
	uv_close((uv_handle_t *)&m->t, mute_closed);
}

static void on_unmute(uv_timer_t *t)
{
	struct kaas_conn_mute *m = t->data;
	struct kaas_conn *c = m->c;
	mute_end(c);
	if (!c->closing)
		kaas_conn_flush(c); /* and reading resumes (conn_maybe_resume) */
	kaas_conn_unref(c);
}

void kaas_conn_mute(struct kaas_conn *c, uint32_t ms)
{
	if (c->closing || ms == 0)
		return;
	uint64_t until = kaas_now_ms() + ms;
	struct kaas_conn_mute *m = c->mute;
	if (m) {
		if (until > m->until_ms) {
			m->until_ms = until;
			uv_timer_start(&m->t, on_unmute, ms, 0);
		}
		return;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return; /* not muted: the client still has the throttle time */
	uv_timer_init(c->s->loop, &m->t);
	m->t.data = m;
	m->c = c;
	m->until_ms = until;
	c->mute = m;
	c->refs++;
	kaas_conn_read_stop(c);
	uv_timer_start(&m->t, on_unmute, ms, 0);
}

void kaas_conn_mute_cancel(struct kaas_conn *c)
{
	if (!c->mute)
		return;
	mute_end(c);
	kaas_conn_unref(c);
}
