/*
 * epoch_fence.h — the one fencing primitive: epochs owned by exclusive create.
 *
 * A fence directory holds one empty-or-advisory file per claimed epoch,
 *
 *   <dir>/epoch-<n:020>          n >= 1, created by exclusive create only
 *
 * and nothing in it is ever rewritten, renamed or removed while the state it
 * fences exists (the whole directory goes with that state).  The contract:
 *
 *  - An epoch is owned by whoever created its name.  Exactly one creator on
 *    any host gets 0 (guarantee 2); a claim of an existing name fails with
 *    -EEXIST: someone else owns that epoch.  Equal epochs NEVER mean "same
 *    owner" — the only owner is the holder of the successful create (this
 *    process remembers its own claims in memory, see kaas_fence_claim).
 *  - A claim is refused unless it is strictly above every epoch seen.
 *  - Readers take the highest name.
 *  - Names are contiguous: before it creates epoch-E, a claimer creates
 *    every missing name between the highest it saw and E ("skipped" epochs,
 *    owned by nobody, which nobody can claim later).  So "some epoch above E
 *    exists" is exactly "epoch-(E+1) exists", and a holder checks that it is
 *    still the newest with one lookup of one name (kaas_fence_check).
 *
 * Why the check's lookup is fresh (close-to-open): the check first opens the
 * fence directory itself.  open() is the one call the substrate promises to
 * revalidate with the server (the Linux NFS client forces a GETATTR on open
 * of a directory as of a file unless mounted nocto; libnfs has no cache).
 * If the directory changed since the client last looked, its cached entries
 * — positive and negative — are invalidated, so the following open of
 * epoch-(E+1) goes to the server; if it did not change, a cached "no such
 * name" is still true.  A plain stat by name is not enough: it is served
 * from the attribute cache.  The creator's exclusive create always reaches
 * the server before it returns.  Hence: if a newer claim returned before a
 * check started, the check sees it.
 *
 * Return values: >= 0 or -errno with detail in kaas_sub_errdetail(), plus
 * KAAS_FENCE_SUPERSEDED (a newer epoch is claimed) — KAAS_EFENCED, a kaas
 * status outside errno space (util/status.h), so a superseded claim is never
 * confused with a transient substrate error (a substrate -ESTALE is just an
 * error here).
 */
#ifndef KAAS_CONTRACT_EPOCH_FENCE_H
#define KAAS_CONTRACT_EPOCH_FENCE_H

#include <errno.h>
#include <stdint.h>

#include "substrate/substrate.h"
#include "util/status.h"

#define KAAS_FENCE_PREFIX "epoch"
/* A claim at or above ours exists: we are (or would be) a zombie. */
#define KAAS_FENCE_SUPERSEDED KAAS_EFENCED
/* The most skipped names one claim creates (a larger jump is refused with
 * -EOVERFLOW rather than creating them one by one). */
#define KAAS_FENCE_MAX_GAP 65536u

/* The highest claimed epoch in `dir`: 0 with *epoch (0 when there is none
 * or the directory does not exist), or -errno (listing failed). */
int kaas_fence_highest(struct kaas_substrate *sub, const char *dir, uint64_t *epoch);

/* Claim `epoch` (>= 1) in `dir` (created if missing):
 *  1. read the highest claimed epoch H; H >= epoch: KAAS_FENCE_SUPERSEDED;
 *  2. kaas_step(step) if step != NULL (tests stop a claimer here);
 *  3. create the missing names H+1 .. epoch-1 as skipped (-EEXIST on one of
 *     them is someone else's claim, fine);
 *  4. exclusive-create epoch-<epoch>: -EEXIST means someone else owns it
 *     (or skipped it), or nobody can tell whose it is (a lost reply: see
 *     "lost epochs" below), and is returned as is;
 *  5. check that epoch+1 is still unclaimed (KAAS_FENCE_SUPERSEDED if not).
 * A claim this process already won through this same substrate handle (a
 * re-open of one's own epoch; the handle is known by its address and URL,
 * so only a handle closed and another opened on the same URL at the same
 * address in one process counts as the same) skips 1-4, unless the fence
 * directory is gone (then it claims afresh).  `note` (may be NULL; "" is
 * written as "claimed") is advisory content for operators, written after
 * the create; it is read only to tell a claim with an owner recorded from
 * one without (kaas_fence_recorded), never to decide an owner.
 * Returns 0 when this caller owns `epoch` and no newer epoch exists.  A
 * -EEXIST, or KAAS_FENCE_SUPERSEDED with `epoch` the highest, is
 * remembered as a lost epoch (kaas_fence_lost_take). */
int kaas_fence_claim(struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     const char *note, const char *step);

/* Claim the lowest epoch above every claimed one (retrying past racers, up
 * to 1000 times): 0 with *won, or -errno. */
int kaas_fence_claim_next(struct kaas_substrate *sub, const char *dir, const char *note,
			  uint64_t *won);

/* Is `epoch` still the newest in `dir`?  0 if epoch+1 is not claimed,
 * KAAS_FENCE_SUPERSEDED if it is, -ENOENT if the fence directory is gone —
 * or was replaced: *dir_ino (in/out, may be NULL) remembers the directory's
 * inode number seen at the first check (0: not yet known) — or -errno.
 * Cost: one open+close of the directory and one lookup of one name. */
int kaas_fence_check(struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		     uint64_t *dir_ino);

/* Did this process win `epoch` in `dir` through `sub`?  1 or 0. */
int kaas_fence_held(struct kaas_substrate *sub, const char *dir, uint64_t epoch);

/* ------------------------------------------------------------ lost epochs
 *
 * An epoch this process was handed and can never claim (issue 33).  Its
 * claim of `epoch` in `dir` failed because epoch-<epoch> already exists and
 * is not known to be ours: kaas_fence_claim answered -EEXIST (its own
 * exclusive create said EEXIST) or KAAS_FENCE_SUPERSEDED with epoch itself
 * the highest claimed (a later claim of the same epoch).  Whose the name
 * is cannot be decided: an exclusive create whose reply was lost (an NFS
 * retransmit of a create that had succeeded, answered EEXIST; or a create
 * answered by a timeout, then claimed again) made it, empty, for a caller
 * that was told it failed and so never wrote its note; a file that stays
 * empty is that, or a creator that died before writing its note.  The
 * content therefore only tells "someone recorded an owner" (the note, or
 * "skipped") from "no owner recorded" (empty), never "ours": the claim is
 * refused either way, and remembered here, so that whoever hands out the
 * epoch (the controller, through the cluster agent) is asked for a new
 * one.  Without that the state the fence guards stayed unserved for good.
 *
 * The last KAAS_FENCE_LOST_MAX are remembered per process until taken. */
#define KAAS_FENCE_LOST_MAX 64

/* One remembered lost epoch: the claim's substrate handle, fence directory
 * and epoch, and whether the claim file held no owner (empty). */
typedef void (*kaas_fence_lost_cb)(void *arg, struct kaas_substrate *sub, const char *dir,
				   uint64_t epoch, int unowned);

/* Hand every remembered lost epoch to cb, oldest first, and forget them.
 * Returns how many.  Any thread; cb runs with no lock of this module held. */
size_t kaas_fence_lost_take(kaas_fence_lost_cb cb, void *arg);

/* What the claim file `dir`/epoch-<epoch> records: 1 an owner (a note or
 * "skipped"), 0 none (empty: see above), or -errno (-ENOENT: no such
 * claim).  Reads it (close-to-open: a note written and closed before this
 * open is seen). */
int kaas_fence_recorded(struct kaas_substrate *sub, const char *dir, uint64_t epoch);

#endif
