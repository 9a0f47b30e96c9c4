/*
 * wakeups.c — other threads waking the loop: completions handed over by
 * the log's I/O pool and the produce lanes (kaas_broker_complete), and
 * data arrivals that wake parked fetches (kaas_broker_park).  One async
 * handle carries both.
 */
#include "server/internal.h"
#include "util/lock_rank.h"

#include <assert.h>

void kaas_broker_complete(struct kaas_broker *b, struct kaas_completion *c)
{
	struct kaas_server *s = b->server;
	kaas_lock(&s->cq_mu, KAAS_RANK_LEAF);
	kaas_fifo_push(&s->cq, &c->link);
	kaas_unlock(&s->cq_mu);
	uv_async_send(&s->async);
}

void kaas_broker_park(struct kaas_broker *b, struct kaas_fetch_waiter *w)
{
	struct kaas_server *s = b->server;
	assert(!w->next);
	w->next = &s->waiters;
	w->prev = s->waiters.prev;
	s->waiters.prev->next = w;
	s->waiters.prev = w;
}

void kaas_broker_unpark(struct kaas_fetch_waiter *w)
{
	if (!w->next)
		return;
	w->prev->next = w->next;
	w->next->prev = w->prev;
	w->next = w->prev = NULL;
}

void kaas_server_wake_all(struct kaas_server *s)
{
	/* Move the list aside first: a woken waiter may park again. */
	struct kaas_fetch_waiter list = { .prev = &list, .next = &list };
	if (s->waiters.next == &s->waiters)
		return;
	list.next = s->waiters.next;
	list.prev = s->waiters.prev;
	list.next->prev = &list;
	list.prev->next = &list;
	s->waiters.next = s->waiters.prev = &s->waiters;
	while (list.next != &list) {
		struct kaas_fetch_waiter *w = list.next;
		kaas_broker_unpark(w);
		w->wake(w);
	}
}

void kaas_server_on_async(uv_async_t *a)
{
	struct kaas_server *s = a->data;
	kaas_lock(&s->cq_mu, KAAS_RANK_LEAF);
	struct kaas_fifo_link *l = kaas_fifo_take_all(&s->cq);
	int arrived = s->data_arrived;
	s->data_arrived = 0;
	kaas_unlock(&s->cq_mu);
	while (l) {
		struct kaas_completion *c = KAAS_FIFO_ENTRY(l, struct kaas_completion, link);
		l = l->next; /* before fn: it may free or requeue c */
		c->fn(c);
	}
	if (arrived)
		kaas_server_wake_all(s);
}

void kaas_server_on_data(void *arg, int64_t hw)
{
	struct kaas_server *s = arg;
	(void)hw;
	kaas_lock(&s->cq_mu, KAAS_RANK_LEAF);
	s->data_arrived = 1;
	kaas_unlock(&s->cq_mu);
	uv_async_send(&s->async);
}

