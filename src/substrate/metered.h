/*
 * metered.h — a substrate decorator that counts and times every op of the
 * substrate it wraps, by backend and op:
 *   kaas_substrate_ops_total{backend,op}
 *   kaas_substrate_errors_total{backend,op}       (an op that returned < 0)
 *   kaas_substrate_op_duration_seconds{backend,op}
 * `backend` is the wrapped ops table's name ("posix", "nfs", "fault").
 * The decorator adds no behaviour: every file and directory op goes to the
 * wrapped substrate's dispatch functions (its fallbacks and fsync poisoning
 * included), so it wraps any backend without a change to it.  Open and
 * close go to the wrapped backend's ops directly, on a handle carried
 * inside the metered one (the dispatch layer has already checked the path
 * and made the handle: not twice per open).
 */
#ifndef KAAS_SUBSTRATE_METERED_H
#define KAAS_SUBSTRATE_METERED_H

#include "substrate/substrate.h"

/* Wrap `inner` (taken over: closing the result closes it).  0 and *out, or
 * -ENOMEM (then `inner` is still the caller's). */
int kaas_metered_wrap(struct kaas_substrate *inner, struct kaas_substrate **out);

#endif
