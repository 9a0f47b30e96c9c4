/* idempotence.c — producer ids and sequence checks.  See idempotence.h. */
#include "broker/idempotence.h"

#include <errno.h>
#include <stdlib.h>

#include "broker/broker.h"
#include "util/logger.h"
#include "cluster/producer_ids.h"

static long drop_every;      /* the test knob; 0: off */
static long produce_count;   /* loop thread */

int kaas_idem_start(struct kaas_broker *b)
{
	const char *knob = getenv("KAAS_TEST_DROP_PRODUCE_RESPONSE");
	drop_every = knob ? strtol(knob, NULL, 10) : 0;
	if (drop_every < 0)
		drop_every = 0;
	if (drop_every)
		kaas_warn("test knob: dropping the response to every %ld. produce request",
			  drop_every);
	produce_count = 0;
	struct kaas_pid_alloc *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	int rc = kaas_pid_alloc_init(a, b->cluster);
	if (rc < 0) {
		free(a);
		return rc;
	}
	b->pids = a;
	return 0;
}

void kaas_idem_stop(struct kaas_broker *b)
{
	if (!b->pids)
		return;
	kaas_pid_alloc_destroy(b->pids);
	free(b->pids);
	b->pids = NULL;
}

int kaas_idem_drop_response(void)
{
	if (!drop_every)
		return 0;
	return ++produce_count % drop_every == 0;
}

static int32_t seq_add(int32_t seq, int64_t n)
{
	return (int32_t)(((int64_t)seq + n) % ((int64_t)INT32_MAX + 1));
}

/* Is sequence a ahead of b (less than half the sequence space ahead)? */
static int seq_ahead(int32_t a, int32_t b)
{
	int64_t d = ((int64_t)a - b + ((int64_t)INT32_MAX + 1)) % ((int64_t)INT32_MAX + 1);
	return d > 0 && d < ((int64_t)1 << 30);
}

static int check_sequence(struct kaas_log *log, const struct kaas_log_batch *lb,
			  int64_t *dup_base);

int kaas_idem_check(struct kaas_log *log, const struct kaas_log_batch *lb, int64_t *dup_base)
{
	/* A failed log first: a sequence error for a batch that follows one
	 * the failure took (it left the pending list) would be answered
	 * OUT_OF_ORDER_SEQUENCE_NUMBER, and librdkafka answers that by
	 * bumping its epoch and renumbering every unacknowledged message —
	 * also those of a batch the re-opened log (or the next leader)
	 * recovers, which is then written twice. */
	int st = kaas_log_status(log);
	if (st < 0)
		return st;
	int rc = check_sequence(log, lb, dup_base);
	if (rc < 0 && (st = kaas_log_status(log)) < 0)
		return st; /* the log failed during the check */
	return rc;
}

static int check_sequence(struct kaas_log *log, const struct kaas_log_batch *lb,
			  int64_t *dup_base)
{
	if (lb->producer_id < 0)
		return KAAS_IDEM_APPEND;
	int32_t first = lb->base_sequence;
	if (first < 0 || lb->producer_epoch < 0)
		return KAAS_EBADBATCH;
	int32_t last = seq_add(first, (int64_t)lb->record_count - 1);
	int64_t base = -1;
	int found = kaas_log_producer_find(log, lb->producer_id, lb->producer_epoch, first, last,
					   &base);
	if (found == 1) {
		/* A retry: answered with the original offset once that is
		 * durable (the caller's kaas_log_when_durable). */
		kaas_info("producer %lld epoch %d: batch seq %d..%d is a retry of offset %lld",
			  (long long)lb->producer_id, lb->producer_epoch, first, last, (long long)base);
		*dup_base = base;
		return KAAS_IDEM_DUPLICATE;
	}
	struct kaas_log_producer st;
	int rc = kaas_log_producer_pending(log, lb->producer_id, &st);
	if (rc == -ENOENT)
		return first == 0 ? KAAS_IDEM_APPEND : KAAS_EPRODUNKNOWN;
	if (rc < 0)
		return rc;
	if (lb->producer_epoch < st.epoch)
		return KAAS_EPRODFENCED;
	if (lb->producer_epoch > st.epoch || st.n == 0)
		/* A new epoch starts again at sequence 0; later than 0, its
		 * first batch is missing (a gap). */
		return first == 0 ? KAAS_IDEM_APPEND : KAAS_ESEQGAP;
	int32_t last_seen = st.batches[st.n - 1].last_seq;
	int32_t next = seq_add(last_seen, 1);
	if (first == next)
		return KAAS_IDEM_APPEND;
	if (seq_ahead(first, next))
		return KAAS_ESEQGAP;
	if (first >= st.batches[0].first_seq && last <= last_seen && first <= last)
		return KAAS_ESEQDUP;
	if (first < st.batches[0].first_seq && last <= last_seen)
		return KAAS_ESEQDUP;
	return KAAS_ESEQORDER;
}
