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

/* Is rc one of the statuses above (not an errno)? */
#define KAAS_IS_STATUS(rc) ((rc) <= -KAAS_STATUS_BASE)

/* A message for rc < 0: the status's name, or strerror(-rc) for an errno.
 * The string is static (never freed). */
const char *kaas_strerror(int rc);

#endif
