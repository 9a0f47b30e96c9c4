/*
 * idempotence.h — the idempotent producer: producer ids (InitProducerId)
 * and the per (producer id, partition) epoch and sequence checks of the
 * produce path, as Kafka's ProducerStateManager makes them.
 *
 * The checks run on the partition's produce lane (broker/lanes.h), right
 * before each append, against the log's producer state with the batches
 * still in flight folded in (kaas_log_producer_pending): the lane is the
 * partition's only appender of client batches, so the check and the
 * append are ordered.
 *
 * Test knob: with KAAS_TEST_DROP_PRODUCE_RESPONSE=N in the environment,
 * the response to every Nth produce request that appended something is
 * dropped (its connection is closed after the append), so client retries
 * of batches already in the log are exercised.  Off unless set.
 */
#ifndef KAAS_BROKER_IDEMPOTENCE_H
#define KAAS_BROKER_IDEMPOTENCE_H

#include <stdint.h>

#include "log/log.h"
#include "util/status.h"

struct kaas_broker;

/* Set up the producer-id allocator on the cluster volume and read the test
 * knob.  0 or -errno. */
int kaas_idem_start(struct kaas_broker *b);
void kaas_idem_stop(struct kaas_broker *b);

#define KAAS_IDEM_APPEND 0     /* append the batch */
#define KAAS_IDEM_DUPLICATE 1  /* a retry of a batch in the log: answer *dup_base */

/* Check one batch before its append (the partition's lane only).  Returns
 * KAAS_IDEM_APPEND, KAAS_IDEM_DUPLICATE with *dup_base (the original's
 * base offset; it may not be durable yet: the caller answers once
 * kaas_log_when_durable says it is, and "possibly persisted", KAAS_EINDOUBT,
 * if its write failed — never blocking a thread on it), or a status
 * (util/status.h; kafka/status_map.h gives the Kafka code of each):
 * KAAS_ESEQDUP (an older batch than the window remembers), KAAS_ESEQORDER
 * (a batch overlapping what the log holds, or behind it), KAAS_EPRODFENCED
 * (an older producer epoch), KAAS_EPRODUNKNOWN (a producer id the
 * partition never saw, at a sequence above 0), KAAS_EBADBATCH (a negative
 * sequence or epoch), or KAAS_ESEQGAP.
 * A gap — a batch AHEAD of the next sequence the log expects (or a new
 * epoch starting above 0) — means an earlier batch of the producer is
 * missing: it failed, or is still on its way from an old leader.  Kafka
 * answers OUT_OF_ORDER_SEQUENCE_NUMBER, which the Java client retries but
 * librdkafka (up to 2.x, its issue 4953) answers by bumping its epoch for
 * EVERY partition and renumbering every unacknowledged message — also
 * those another partition answered "possibly persisted", which are then
 * written twice.  kaas answers a gap NOT_ENOUGH_REPLICAS instead: not
 * written, retry the same batch (both clients resend the missing batch
 * first).  A gap that never closes (acknowledged data lost) then shows as
 * produce retries until the client's delivery timeout, not as renumbering.
 * A failed log (kaas_log_status < 0, before or during the check) is
 * answered with the log's status (KAAS_EFENCED when fenced, else its
 * -errno: the produce path answers KAFKA_STORAGE_ERROR) before any
 * sequence rule: nothing is written, and the batch keeps its sequence for
 * the retry (a sequence error here would make librdkafka renumber its
 * messages under a new epoch, and a batch the failure left on the volume
 * and the next open recovers would then be written twice). */
int kaas_idem_check(struct kaas_log *log, const struct kaas_log_batch *lb, int64_t *dup_base);

/* Loop thread: should the response to this produce request be dropped
 * (the test knob)?  1 or 0. */
int kaas_idem_drop_response(void);

#endif
