/*
 * assignment.h — who leads what: controller claims, the assignment
 * document, and the placement policy.
 *
 *   <cluster>/controller/epoch-<N:020>   controller claims (exclusive create)
 *   <cluster>/assignment.json            written by the controller (replace)
 *   <cluster>/slot-epochs/<topic>/<partition>/epoch-<E:020>
 *                                        every leader epoch ever handed out
 *                                        for the slot, claimed by the
 *                                        controller that handed it out
 *                                        (contract/epoch_fence.h) before the
 *                                        assignment naming it is written: no
 *                                        two controllers (a paused one's
 *                                        stale plan included) ever give out
 *                                        one slot epoch twice, and epochs
 *                                        never go down, whatever becomes of
 *                                        assignment.json.
 *
 * The controller is the broker that won the newest claim; it says so in its
 * broker document (membership.h), never through the claim file's content.
 * The assignment carries the controller epoch it was written under; a
 * reader ignores an assignment older than the newest claim it can see (the
 * new controller has not re-asserted yet), and a controller that sees a
 * claim newer than its own stops writing at once.
 *
 * Slots are (topic, partition) pairs.  Group-coordinator slots use the topic
 * KAAS_COORDINATOR_TOPIC, so partitions and coordinators fail over through
 * one mechanism, each with its own leader epoch.
 */
#ifndef KAAS_ASSIGNMENT_H
#define KAAS_ASSIGNMENT_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

#define KAAS_CONTROLLER_DIR "controller"
#define KAAS_ASSIGNMENT_PATH "assignment.json"
#define KAAS_SLOT_EPOCHS_DIR "slot-epochs"
#define KAAS_COORDINATOR_TOPIC "__coordinator"
#define KAAS_NO_LEADER (-1)

struct kaas_assign_entry {
	char topic[256];
	int32_t partition;
	int32_t leader;         /* broker id, or KAAS_NO_LEADER */
	uint32_t leader_epoch;  /* bumped at every change of leader */
};

struct kaas_assignment {
	uint64_t controller_epoch;
	uint64_t version;       /* bumped by every write */
	size_t n;
	struct kaas_assign_entry *e;
	/* A hash index of e[] by (topic, partition), so kaas_assignment_find
	 * is O(1) with 10,000 slots: built by read, plan and copy (and
	 * kaas_assignment_index), owned and freed with the assignment.  It
	 * covers the first ixn entries; an assignment assembled by hand has
	 * none, and find then searches e[] in order.  Only leaders and epochs
	 * may change in place once it is built, never a slot's key. */
	uint32_t *ix;           /* ixcap buckets: entry index + 1, 0 empty */
	size_t ixcap, ixn;
};

/* The newest controller claim: 0 and *epoch, -ENOENT if none, -errno. */
int kaas_controller_latest(struct kaas_substrate *cluster, uint64_t *epoch);

/* Claim the next controller epoch (newest + 1).  0 and *won, -EEXIST if a
 * racer took it (the caller then reads who the controller is and stands
 * down), or -errno. */
int kaas_controller_claim_next(struct kaas_substrate *cluster, uint64_t *won);

/* Claim exactly epoch seen + 1, where `seen` is the newest claim the caller
 * based its decision on (0: none): 0 and *won, -EEXIST if any broker
 * claimed it meanwhile (so two brokers that both saw the controller die do
 * not claim one after the other), or -errno. */
int kaas_controller_claim_after(struct kaas_substrate *cluster, uint64_t seen, uint64_t *won);

/* Write the assignment (replace), unless a claim newer than
 * a->controller_epoch exists: then KAAS_EFENCED (fenced; stop acting as
 * controller).  The check after the rename makes a paused controller's late
 * write harmless: readers compare epochs. */
int kaas_assignment_write(struct kaas_substrate *cluster, const struct kaas_assignment *a);

/* Read the assignment.  0, -ENOENT (none yet), -EBADMSG (corrupt), -errno.
 * If `current` is not NULL it is set to 1 when no claim newer than the
 * assignment's controller epoch exists, else 0 (stale: wait for the new
 * controller to re-assert). */
int kaas_assignment_read(struct kaas_substrate *cluster, struct kaas_assignment *a, int *current);

/* (Re)build a's index over all its entries.  0, or -ENOMEM (a then has
 * no index; find still works, in linear time). */
int kaas_assignment_index(struct kaas_assignment *a);

/* Find a slot; NULL if unassigned.  O(1) with the index. */
const struct kaas_assign_entry *kaas_assignment_find(const struct kaas_assignment *a,
						     const char *topic, int32_t partition);

void kaas_assignment_free(struct kaas_assignment *a);

/* A deep copy: 0 or -ENOMEM (dst zeroed). */
int kaas_assignment_copy(struct kaas_assignment *dst, const struct kaas_assignment *src);

/* "slot-epochs/<topic>/<partition>" into out: 0, or -EINVAL (no safe
 * directory name for the topic, or out too small). */
int kaas_slot_epoch_dir(const char *topic, int32_t partition, char *out, size_t size);

/* Claim, in slot-epochs/, every leader epoch of `next` that `prev` did not
 * already hand to the same leader.  An epoch someone already claimed (an
 * older controller, a stale plan) is replaced in `next` by the lowest one
 * above every claimed epoch of the slot.  So is an epoch this process
 * claimed (kaas_fence_claim's held shortcut) for another leader than the
 * one `next` names: each claimed epoch goes to one leader only, whatever
 * base `prev` the plan was made from (a write reported failed that landed,
 * issue 33).  Call before writing `next`.
 * Returns the number of epochs raised (>= 0), or -errno. */
int kaas_assignment_claim_epochs(struct kaas_substrate *cluster, const struct kaas_assignment *prev,
				 struct kaas_assignment *next, uint64_t controller_epoch);

/* A slot the cluster wants served. */
struct kaas_slot_want {
	const char *topic;
	int32_t partition;
};

/* Placement.  From the current assignment, the wanted slots and the live
 * brokers, compute the next assignment:
 *   - a slot whose leader is alive keeps it (same epoch): no flapping;
 *   - a slot whose leader is dead, or a new slot, goes to the least-loaded
 *     live broker (ties: lowest id) with leader epoch + 1;
 *   - then at most max_moves slots move from the most- to the least-loaded
 *     live broker while their loads differ by more than one (a returning
 *     broker gets work back gradually), each with epoch + 1;
 *   - with no live broker a slot has KAAS_NO_LEADER, epoch unchanged;
 *   - slots no longer wanted are dropped.
 * `next` receives a new assignment (free with kaas_assignment_free) stamped
 * with controller_epoch and version cur->version + 1 if anything changed
 * (*changed set), else identical content.  0 or -ENOMEM. */
int kaas_assignment_plan(const struct kaas_assignment *cur, const struct kaas_slot_want *want,
			 size_t nwant, const int32_t *alive, size_t nalive, uint64_t controller_epoch,
			 unsigned max_moves, struct kaas_assignment *next, int *changed);

#endif
