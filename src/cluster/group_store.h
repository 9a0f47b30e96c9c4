/*
 * group_store.h — committed offsets of consumer groups on the cluster volume.
 *
 * Each group has one writer: its coordinator, fenced by a coordinator epoch
 * (assigned like a partition leader epoch).  On the volume:
 *
 *   <cluster>/groups/<encoded group>/fence/epoch-<E:020>    claims (contract/epoch_fence.h)
 *   <cluster>/groups/<encoded group>/offsets-<E:020>.json   documents, replace
 *   (<cluster>/groups/<encoded group>/takeover-<E:020>      older versions' claims:
 *                                                           read as a floor, pruned)
 *
 * A coordinator taking the group over at epoch E first claims fence/epoch-E
 * through the one fencing primitive (refused if a newer epoch is claimed or
 * E is another coordinator's: two coordinators never share an epoch), then
 * loads the newest offsets document, and from then on writes only
 * offsets-E.json.  Readers take the newest offsets document.  So a zombie
 * coordinator (epoch < E) can never overwrite the new coordinator's state:
 * its late writes land in an older file that readers ignore, and every
 * commit checks, after its rename, that no newer epoch is claimed — if one
 * is, the commit is reported fenced (KAAS_EFENCED) and must not be
 * acknowledged.  The claim-before-load order closes the window in which a
 * zombie's commit could land after the new coordinator loaded but before it
 * wrote.
 *
 * This refines DESIGN.md's single <group>.json: a single file rewritten by
 * rename cannot fence a paused zombie (its rename would win), the epoch in
 * the file name can.
 *
 * Group names: any Kafka group id (any bytes but NUL) maps to a safe,
 * distinct directory name (see kaas_group_dirname); the full name is stored
 * in every document and checked on load, so two names never share state.
 */
#ifndef KAAS_GROUP_STORE_H
#define KAAS_GROUP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

#define KAAS_GROUPS_DIR "groups"
#define KAAS_GROUP_FENCE_DIR "fence"

struct kaas_committed {
	char *topic;
	int32_t partition;
	int64_t offset;
	int32_t leader_epoch;   /* -1 if the client sent none */
	char *metadata;         /* may be NULL */
	int64_t commit_ms;      /* the coordinator's wall clock at commit (informational) */
	char topic_id[33];      /* the id (32 hex) of the topic incarnation committed
	                           to, "" if unknown (older documents): a commit
	                           never carries over to a re-created topic */
};

struct kaas_group_offsets {
	char *group;
	uint64_t epoch;         /* the coordinator epoch this state is written under */
	size_t n, cap;
	struct kaas_committed *items;
};

/* Encode a group id as a directory name: [A-Za-z0-9_-] and non-leading '.'
 * are kept, every other byte is %XX; "" is "%"; names whose encoding exceeds
 * 180 bytes are cut and suffixed with "~" and a 64-bit hash of the whole
 * name.  Returns 0, or -ENAMETOOLONG if size is too small (256 is enough). */
int kaas_group_dirname(const char *group, char *out, size_t size);

/* Take the group over as its coordinator at `epoch` and load its committed
 * offsets into *g (an empty state if it has none yet).  Errors: KAAS_EFENCED if a
 * newer coordinator epoch has already taken it (fenced; the detail says
 * which), -EBADMSG if the newest document is corrupt (the group goes
 * offline; never silently reset), -EEXIST if the directory belongs to a
 * different name (hash collision), or the substrate's -errno. */
int kaas_group_open(struct kaas_substrate *cluster, const char *group, uint64_t epoch,
		    struct kaas_group_offsets *g);

/* Read the newest committed offsets without taking the group over (for
 * tools and tests).  -ENOENT if the group has none. */
int kaas_group_peek(struct kaas_substrate *cluster, const char *group, struct kaas_group_offsets *g);

/* Does the group have state on the volume, without taking it over: 1 if
 * its newest offsets document holds a committed offset (*noffsets: how
 * many) or a pending transactional offsets document exists, 0 if neither
 * (no directory on the server, no document, or one emptied by DeleteGroups,
 * OffsetDelete or expiry), or -errno (-EBADMSG: the newest document is corrupt; -EEXIST:
 * it belongs to another name).  Read-only: a request that only reads or
 * erases a group (OffsetFetch, DeleteGroups, OffsetDelete) asks this before
 * kaas_group_open, so a name nobody committed to leaves nothing behind.
 * A missing directory is confirmed by a fresh lookup (contract.h, "fresh
 * lookups"), never taken from this host's cached "no such name": the
 * group may have been made by another host since this one looked. */
int kaas_group_has_state(struct kaas_substrate *cluster, const char *group, size_t *noffsets);

/* The group whose directory is groups/<enc> (an entry of a listing of
 * groups/): 0 and *name (malloc'd; the caller frees), -EINVAL if `enc` is
 * no name kaas_group_dirname gives (a temp, a stray), -ENOENT if it is a
 * cut long name with no offsets document to tell it, or -errno. */
int kaas_group_name_of_dir(struct kaas_substrate *cluster, const char *enc, char **name);

/* Set (insert or update) one committed offset in memory.  0 or -ENOMEM. */
int kaas_group_set(struct kaas_group_offsets *g, const char *topic, int32_t partition, int64_t offset,
		   int32_t leader_epoch, const char *metadata, int64_t commit_ms);

/* Record the topic incarnation id (32 hex, or "" unknown) of the commit
 * (topic, partition), which must be set.  0, or -ENOENT if it is not. */
int kaas_group_set_topic_id(struct kaas_group_offsets *g, const char *topic, int32_t partition,
			    const char *topic_id);

/* Look one up; NULL if the group has no commit for it. */
const struct kaas_committed *kaas_group_get(const struct kaas_group_offsets *g, const char *topic,
					    int32_t partition);

/* Drop every committed offset of a topic (topic deleted).  Returns how many. */
/* Forget every committed offset (the group and its epoch stay): how many
 * there were.  Memory only (commit to persist). */
size_t kaas_group_forget_all(struct kaas_group_offsets *g);

/* Forget the committed offset of one partition: 1 forgotten, 0 none was
 * there.  Memory only (commit to persist). */
int kaas_group_forget(struct kaas_group_offsets *g, const char *topic, int32_t partition);

size_t kaas_group_forget_topic(struct kaas_group_offsets *g, const char *topic);

/* Persist *g under its epoch (replace offsets-E.json), then check that no
 * newer takeover exists.  0: durable and still ours — acknowledge the
 * commit.  KAAS_EFENCED: fenced by a newer coordinator — do NOT acknowledge
 * (answer NOT_COORDINATOR).  Other -errno: not durable.  Older epochs'
 * files are pruned afterwards (idempotently; re-driven by every commit). */
int kaas_group_commit(struct kaas_substrate *cluster, const struct kaas_group_offsets *g);

void kaas_group_offsets_free(struct kaas_group_offsets *g);

#endif
