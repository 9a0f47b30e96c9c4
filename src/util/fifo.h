/*
 * fifo.h — an intrusive first-in first-out list: the element embeds a
 * struct kaas_fifo_link and the list chains those links.  Not locked: the
 * owner of a list holds whatever lock guards it while calling these.
 */
#ifndef KAAS_UTIL_FIFO_H
#define KAAS_UTIL_FIFO_H

#include <stddef.h>

struct kaas_fifo_link {
	struct kaas_fifo_link *next;
};

struct kaas_fifo {
	struct kaas_fifo_link *head, *tail; /* both NULL when empty */
};

/* The element of type `type` whose member `member` is the link l. */
#define KAAS_FIFO_ENTRY(l, type, member) ((type *)(void *)((char *)(l) - offsetof(type, member)))

/* Append l (its next is reset). */
static inline void kaas_fifo_push(struct kaas_fifo *q, struct kaas_fifo_link *l)
{
	l->next = NULL;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
}

/* Remove and return the oldest link, or NULL when the list is empty. */
static inline struct kaas_fifo_link *kaas_fifo_pop(struct kaas_fifo *q)
{
	struct kaas_fifo_link *l = q->head;
	if (l) {
		q->head = l->next;
		if (!q->head)
			q->tail = NULL;
	}
	return l;
}

/* Empty the list: returns its links, oldest first, still chained by next
 * (NULL when it was empty). */
static inline struct kaas_fifo_link *kaas_fifo_take_all(struct kaas_fifo *q)
{
	struct kaas_fifo_link *l = q->head;
	q->head = q->tail = NULL;
	return l;
}

#endif
