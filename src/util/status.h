/*
 * status.h — kaas's domain statuses, outside errno space.
 *
 * Every layer returns >= 0 or a negative status.  A negative status is
 * either a -errno from the substrate (what the volume said: retry rules in
 * substrate/substrate.h) or one of the statuses below, which say something
 * about kaas's own state.  They are far below any -errno so they can never
 * be confused with one: a transient -ESTALE from the volume is a reason to
 * re-open a handle, never "fenced".
 *
 *   KAAS_EFENCED     a newer owner (a higher leader/controller/coordinator
 *                    epoch) was seen on the volume: this one must stop
 *                    writing for good; re-opening at the same epoch is
 *                    refused again.
 *   KAAS_ENOTLEADER  this broker does not lead the partition (no lease).
 *   KAAS_EOFFLINE    the state cannot be served now (an offline topic);
 *                    a later round retries it.
 *   KAAS_EEXISTS     what is to be created exists already (a topic).
 *   KAAS_EUNKNOWN    no such thing (a topic not known, or gone).
 *   KAAS_EINVALNAME  a name that is not legal (a topic name).
 *   KAAS_EINVALCOUNT a count out of range (partitions).
 *   KAAS_ECONTENDED  others kept winning the claims this needs: gave up
 *                    for now, the caller may retry.
 *   KAAS_EBADCONFIG  a configuration key that is not known, or a value it
 *                    cannot take (broker/topic_config.h).
 *   KAAS_ENOROOM     kaas_log_append_nowait: the log's pending bytes are at
 *                    their limit, nothing queued; not a failure (a log
 *                    that failed with -EAGAIN from the volume answers that
 *                    -EAGAIN, which must never read as "no room").
 *
 * The group coordinator's (src/broker/groups/groups.h), numbered from +20
 * so other services can add theirs below:
 *   KAAS_ENOT_COORDINATOR     another broker coordinates the group (or this
 *                             one is draining): find the coordinator again.
 *   KAAS_ENO_COORDINATOR      the group's coordinator slot has no leader, this
 *                             broker has not taken it up yet, or its committed
 *                             offsets cannot be read or written now.
 *   KAAS_EUNKNOWN_MEMBER      no such member (or it has not completed its
 *                             first join).
 *   KAAS_EILLEGAL_GENERATION  the member names another generation.
 *   KAAS_EREBALANCING         the group is rebalancing: rejoin.
 *   KAAS_EFENCED_INSTANCE     the static instance id belongs to another
 *                             member id (a newer incarnation replaced it).
 *   KAAS_EMEMBER_ID_REQUIRED  a new member was given its id: join with it.
 *   KAAS_EPROTOCOL_MISMATCH   the member shares no protocol with the group.
 *   KAAS_EUNKNOWN_PARTITION   no such topic or partition.
 *   KAAS_EGROUP_NONEMPTY      the group has members (it cannot be deleted).
 *   KAAS_EGROUP_UNKNOWN       no such group (no members, no committed offsets).
 *   KAAS_EGROUP_SUBSCRIBED    a member of the group subscribes to the topic
 *                             (its committed offsets are in use).
 *
 * The idempotent producer's answers for a batch (broker/idempotence.h),
 * numbered from +40, none of which wrote anything:
 *   KAAS_ESEQDUP       a retry of a batch older than the window the log
 *                      remembers (already in the log, offset unknown).
 *   KAAS_ESEQORDER     a batch overlapping what the log holds, or behind it.
 *   KAAS_ESEQGAP       a batch ahead of the next sequence: an earlier batch
 *                      of the producer is missing; retry after it.
 *   KAAS_EPRODFENCED   a batch of an older producer epoch.
 *   KAAS_EPRODUNKNOWN  a producer id the partition never saw, at a
 *                      sequence above 0.
 *   KAAS_EBADBATCH     producer fields that break the rules (a negative
 *                      sequence or epoch with a producer id).
 *   KAAS_EINDOUBT      the outcome of an earlier write is not known yet (not
 *                      durable, or its write or fsync failed after it was
 *                      queued): it may be on the volume.
 *
 * The transaction coordinator's (broker/txn/txn.h), numbered from +60:
 *   KAAS_ETXN_CONCURRENT  the previous transaction is still completing (or
 *                         the id is being taken over): retry.
 *   KAAS_ETXN_STATE       the request does not fit the transaction's state.
 *   KAAS_ETXN_PID_MAPPING the producer id is not the transactional id's.
 *   KAAS_ETXN_TIMEOUT     a transaction timeout above the maximum (or <= 0).
 *   KAAS_ETXN_FENCED      a newer producer epoch owns the transactional id
 *                         (PRODUCER_FENCED; INVALID_PRODUCER_EPOCH for the
 *                         versions before KIP-588).
 *   KAAS_EUNSTABLE_OFFSET a transactional offset commit is pending.
 *   KAAS_ETXN_UNKNOWN     no such transactional id.
 *   KAAS_ETXN_COORD_FENCED a marker from a coordinator epoch below the last
 *                         one the partition saw for the producer
 *                         (TRANSACTION_COORDINATOR_FENCED): not written.
 *
 * The substrate never returns these; kaas_sub_fail passes them through
 * unchanged (a negative argument is returned as is), so a fence may be
 * reported with a detail: `return kaas_sub_fail(KAAS_EFENCED, "...")`.
 */
#ifndef KAAS_STATUS_H
#define KAAS_STATUS_H

#define KAAS_STATUS_BASE 100000
#define KAAS_EFENCED (-(KAAS_STATUS_BASE + 1))
#define KAAS_ENOTLEADER (-(KAAS_STATUS_BASE + 2))
#define KAAS_EOFFLINE (-(KAAS_STATUS_BASE + 3))
#define KAAS_EEXISTS (-(KAAS_STATUS_BASE + 4))
#define KAAS_EUNKNOWN (-(KAAS_STATUS_BASE + 5))
#define KAAS_EINVALNAME (-(KAAS_STATUS_BASE + 6))
#define KAAS_EINVALCOUNT (-(KAAS_STATUS_BASE + 7))
#define KAAS_ECONTENDED (-(KAAS_STATUS_BASE + 8))
#define KAAS_EBADCONFIG (-(KAAS_STATUS_BASE + 9))
#define KAAS_ENOROOM (-(KAAS_STATUS_BASE + 10))
#define KAAS_ENOT_COORDINATOR (-(KAAS_STATUS_BASE + 20))
#define KAAS_ENO_COORDINATOR (-(KAAS_STATUS_BASE + 21))
#define KAAS_EUNKNOWN_MEMBER (-(KAAS_STATUS_BASE + 22))
#define KAAS_EILLEGAL_GENERATION (-(KAAS_STATUS_BASE + 23))
#define KAAS_EREBALANCING (-(KAAS_STATUS_BASE + 24))
#define KAAS_EFENCED_INSTANCE (-(KAAS_STATUS_BASE + 25))
#define KAAS_EMEMBER_ID_REQUIRED (-(KAAS_STATUS_BASE + 26))
#define KAAS_EPROTOCOL_MISMATCH (-(KAAS_STATUS_BASE + 27))
#define KAAS_EUNKNOWN_PARTITION (-(KAAS_STATUS_BASE + 28))
#define KAAS_EGROUP_NONEMPTY (-(KAAS_STATUS_BASE + 29))
#define KAAS_EGROUP_UNKNOWN (-(KAAS_STATUS_BASE + 30))
#define KAAS_EGROUP_SUBSCRIBED (-(KAAS_STATUS_BASE + 31))
#define KAAS_ESEQDUP (-(KAAS_STATUS_BASE + 40))
#define KAAS_ESEQORDER (-(KAAS_STATUS_BASE + 41))
#define KAAS_ESEQGAP (-(KAAS_STATUS_BASE + 42))
#define KAAS_EPRODFENCED (-(KAAS_STATUS_BASE + 43))
#define KAAS_EPRODUNKNOWN (-(KAAS_STATUS_BASE + 44))
#define KAAS_EBADBATCH (-(KAAS_STATUS_BASE + 45))
#define KAAS_EINDOUBT (-(KAAS_STATUS_BASE + 46))
#define KAAS_ETXN_CONCURRENT (-(KAAS_STATUS_BASE + 60))
#define KAAS_ETXN_STATE (-(KAAS_STATUS_BASE + 61))
#define KAAS_ETXN_PID_MAPPING (-(KAAS_STATUS_BASE + 62))
#define KAAS_ETXN_TIMEOUT (-(KAAS_STATUS_BASE + 63))
#define KAAS_ETXN_FENCED (-(KAAS_STATUS_BASE + 64))
#define KAAS_EUNSTABLE_OFFSET (-(KAAS_STATUS_BASE + 65))
#define KAAS_ETXN_UNKNOWN (-(KAAS_STATUS_BASE + 66))
#define KAAS_ETXN_COORD_FENCED (-(KAAS_STATUS_BASE + 67))

/* Is rc one of the statuses above (not an errno)? */
#define KAAS_IS_STATUS(rc) ((rc) <= -KAAS_STATUS_BASE)

/* A message for rc < 0: the status's name, or strerror(-rc) for an errno.
 * The string is static (never freed). */
const char *kaas_strerror(int rc);

#endif
