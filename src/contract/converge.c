/* converge.c — rule 2: re-drive an idempotent step until its end state. */
#include "contract/contract.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int kaas_converge(kaas_step_fn step, void *arg, const struct kaas_converge_opts *opts)
{
	unsigned max_attempts = opts && opts->max_attempts ? opts->max_attempts : 50;
	unsigned delay = opts && opts->first_delay_us ? opts->first_delay_us : 1000;
	unsigned max_delay = opts && opts->max_delay_us ? opts->max_delay_us : 200000;
	uint64_t deadline = opts && opts->deadline_ms ? now_ms() + opts->deadline_ms : 0;
	for (unsigned i = 0; i < max_attempts; i++) {
		int rc = step(arg);
		if (rc == KAAS_DONE)
			return 0;
		if (rc < 0)
			return rc;
		if (i + 1 == max_attempts || (deadline && now_ms() >= deadline))
			break;
		sleep_us(delay);
		delay = delay * 2 > max_delay ? max_delay : delay * 2;
	}
	return -EAGAIN;
}

int kaas_pending_add(struct kaas_pending *p, const char *what, kaas_step_fn step, void *arg,
		     void (*free_arg)(void *))
{
	struct kaas_pending_item *it = calloc(1, sizeof *it);
	char *w = strdup(what ? what : "");
	if (!it || !w) {
		free(it);
		free(w);
		return -ENOMEM;
	}
	it->what = w;
	it->step = step;
	it->arg = arg;
	it->free_arg = free_arg;
	/* Append, so work is re-driven in the order it was recorded. */
	struct kaas_pending_item **pp = &p->head;
	while (*pp)
		pp = &(*pp)->next;
	*pp = it;
	p->count++;
	return 0;
}

static void item_free(struct kaas_pending_item *it)
{
	if (it->free_arg)
		it->free_arg(it->arg);
	free(it->what);
	free(it);
}

size_t kaas_pending_drive(struct kaas_pending *p)
{
	struct kaas_pending_item **pp = &p->head;
	while (*pp) {
		struct kaas_pending_item *it = *pp;
		it->attempts++;
		if (it->step(it->arg) == KAAS_DONE) {
			*pp = it->next;
			item_free(it);
			p->count--;
		} else {
			pp = &it->next;
		}
	}
	return p->count;
}

void kaas_pending_clear(struct kaas_pending *p)
{
	while (p->head) {
		struct kaas_pending_item *it = p->head;
		p->head = it->next;
		item_free(it);
	}
	p->count = 0;
}
