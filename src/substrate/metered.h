/*
 * metered.h — a substrate decorator that counts and times every op of the
 * substrate it wraps, by backend and op:
 *   kaas_substrate_ops_total{backend,op}
 *   kaas_substrate_errors_total{backend,op}       (an op that returned < 0)
 *   kaas_substrate_op_duration_seconds{backend,op}
 * `backend` is the wrapped ops table's name ("posix", "nfs", "fault").
 * The decorator adds no behaviour: every call goes to the wrapped
 * substrate's dispatch functions (its fallbacks and fsync poisoning
 * included), so it wraps any backend without a change to it.
 */
#ifndef KAAS_SUBSTRATE_METERED_H
#define KAAS_SUBSTRATE_METERED_H

#include "substrate/substrate.h"

/* Wrap `inner` (taken over: closing the result closes it).  0 and *out, or
 * -ENOMEM (then `inner` is still the caller's). */
int kaas_metered_wrap(struct kaas_substrate *inner, struct kaas_substrate **out);

#endif
