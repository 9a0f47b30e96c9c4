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
 *
 * The idempotent producer's answers for a batch (broker/idempotence.h),
 * none of which wrote anything:
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
#define KAAS_ESEQDUP (-(KAAS_STATUS_BASE + 20))
#define KAAS_ESEQORDER (-(KAAS_STATUS_BASE + 21))
#define KAAS_ESEQGAP (-(KAAS_STATUS_BASE + 22))
#define KAAS_EPRODFENCED (-(KAAS_STATUS_BASE + 23))
#define KAAS_EPRODUNKNOWN (-(KAAS_STATUS_BASE + 24))
#define KAAS_EBADBATCH (-(KAAS_STATUS_BASE + 25))
#define KAAS_EINDOUBT (-(KAAS_STATUS_BASE + 26))

/* Is rc one of the statuses above (not an errno)? */
#define KAAS_IS_STATUS(rc) ((rc) <= -KAAS_STATUS_BASE)

/* A message for rc < 0: the status's name, or strerror(-rc) for an errno.
 * The string is static (never freed). */
const char *kaas_strerror(int rc);

#endif
