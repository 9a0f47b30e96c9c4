/*
 * verify.h — a partition leader's check of a transactional batch against
 * its transaction coordinator's record (KIP-890 part 1; Kafka's
 * transaction.partition.verification.enable).
 *
 * A transactional batch that would open a transaction of its producer on a
 * partition (the partition's log has none open for it: the produce path
 * asks the log, kaas_log_producer_pending, so this runs once per
 * transaction and partition, never per batch) is appended only if the
 * transactional id's state document (txns/<enc>/state-<E>.json, the
 * coordinator's record, cluster/txn_store.h) names this producer id at
 * this epoch, in state Ongoing, with this partition added.  Otherwise a
 * fenced producer (an older epoch, after InitProducerId bumped it) or a
 * batch sent outside AddPartitionsToTxn would open a transaction no
 * coordinator knows, and the partition's last stable offset would hang.
 *
 * Freshness: the document is read by kaas_txn_peek (a listing of the id's
 * directory, then an open of the newest state-E.json): the coordinator
 * answers AddPartitionsToTxn and InitProducerId only once their document
 * is renamed into place, so by close-to-open an open that starts after
 * that answer sees it (or a newer one).  No cache.
 *
 * Threads: any thread but the loop (it reads the cluster volume: one
 * listing and one small document).
 */
#ifndef KAAS_BROKER_TXN_VERIFY_H
#define KAAS_BROKER_TXN_VERIFY_H

#include <stddef.h>
#include <stdint.h>

struct kaas_substrate;

/* Does txn_id[0..id_len) have an Ongoing transaction of (pid, epoch) with
 * topic[0..topic_len)/partition added?  0 yes; otherwise the status Kafka's
 * verification answers, as util/status.h names it:
 *   KAAS_ETXN_PID_MAPPING  no state for the id, or another producer id
 *   KAAS_ETXN_FENCED       another producer epoch (the produce path answers
 *                          INVALID_PRODUCER_EPOCH, as Kafka)
 *   KAAS_ETXN_CONCURRENT   the transaction is completing (PrepareCommit /
 *                          PrepareAbort): retriable
 *   KAAS_ETXN_STATE        not Ongoing, or the partition was never added
 *   -errno                 the document could not be read (retriable:
 *                          nothing was appended)
 * id_len > 0 and pid >= 0 required (asserted). */
int kaas_txn_verify_partition(struct kaas_substrate *cluster, const char *txn_id, size_t id_len,
			      int64_t pid, int16_t epoch, const char *topic, size_t topic_len,
			      int32_t partition);

#endif
