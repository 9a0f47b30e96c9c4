/*
 * topic_store.h — a topic's durable records on the volume: its document,
 * its incarnation claims and its directory's identity stamp.  Formats and
 * single primitives only; who may write what, and when, is the broker's
 * (broker/topics.h).
 *
 *   <cluster>/topics/<name>.json         the desired state (kaas_doc, kind
 *                                        "topic", version 1): name, id (32
 *                                        hex), incarnation (absent in
 *                                        documents written before they were
 *                                        numbered), partitions, config
 *                                        {key: value} (the topic's config
 *                                        overrides, strings, Kafka's keys),
 *                                        replication_factor (as asked),
 *                                        deleting, revision (absent in
 *                                        documents written before it: 0).
 *                                        Replaced whole, each replace at a
 *                                        revision claimed first (below).
 *   <cluster>/topic-incarnations/<name>/ incarnation-<N>: exclusive create,
 *                                        the one creator of incarnation N
 *                                        (content: its id, advisory);
 *                                        deleted-<N>: exclusive create, N is
 *                                        over (deleted or abandoned).  Never
 *                                        removed: a name's numbers only grow.
 *   <cluster>/topic-incarnations/<name>/revisions/
 *                                        the document's revisions, a fence
 *                                        directory (contract/epoch_fence.h)
 *                                        over every incarnation of the name:
 *                                        epoch-<r> is the one writer of the
 *                                        document's revision r.  The compare
 *                                        of the read-modify-write: two
 *                                        writers that read one revision
 *                                        cannot both write the next.
 *   <data>/<name>/.topic-id.json         the directory's stamp (kind
 *                                        "topic-id", version 1): id, name,
 *                                        incarnation (when numbered).
 *
 * Names are checked (kaas_topic_name_valid) before any path is built from
 * them.  Reads re-open on -ESTALE (another host replaced the file under a
 * cached name).  Every function blocks on the volume, keeps no state, and
 * may be called from any thread.  Returns 0 (or the count/flag said) or
 * -errno, detail via kaas_sub_fail; KAAS_EFENCED where said.
 */
#ifndef KAAS_CLUSTER_TOPIC_STORE_H
#define KAAS_CLUSTER_TOPIC_STORE_H

#include <stdint.h>

#include "substrate/substrate.h"
#include "util/kvlist.h"

#define KAAS_TOPIC_DOC_DIR "topics"       /* in the cluster substrate */
#define KAAS_TOPIC_TRASH_DIR ".trash"     /* in the data substrate: removals */
#define KAAS_TOPIC_MAX_PARTITIONS 100000

/* Is `name` a legal topic name: 1..249 chars of [a-zA-Z0-9._-], not "." or
 * "..", and not one of kaas's reserved names ("__cluster", ".trash",
 * KAAS_COORDINATOR_TOPIC: the assignment's coordinator slots)? */
int kaas_topic_name_valid(const char *name, int len);

/* The topic name of an entry of KAAS_TOPIC_DOC_DIR into name[256]: 1, or 0
 * when the entry is not a topic document (another file, a temp of a
 * replace), or -EINVAL when it is one but its name is not a legal name. */
int kaas_topic_doc_entry(const char *file, char name[256]);

/* An incarnation id as 32 lower-case hex digits (+ NUL). */
void kaas_topic_id_hex(const uint8_t id[16], char out[33]);

/* What a topic document says. */
struct kaas_topic_doc {
	uint8_t id[16];
	int64_t np;               /* partitions, 1..KAAS_TOPIC_MAX_PARTITIONS */
	int deleting;
	uint64_t inc;             /* incarnation number; 0 in unnumbered documents */
	int32_t rf;               /* the replication factor its creator asked for
	                             (informational: the volume is the one copy);
	                             1 when the document has none */
	uint64_t rev;             /* the revision it was written at (its claim in
	                             revisions/); 0 in documents before them */
};

/* How long a revision claimed above the document's may stay without its
 * document before the next writer skips it (its writer died, or the reply
 * to its claim was lost): then the late writer's check before its replace
 * refuses it. */
#define KAAS_TOPIC_REV_WAIT_MS 10000

/* Read topic document `name`: 0 and *d, -ENOENT, -EBADMSG (malformed), or
 * -errno. */
int kaas_topic_doc_read(struct kaas_substrate *cluster, const char *name,
			struct kaas_topic_doc *d);

/* The same, and its config overrides into *config (replaced; NULL: not
 * wanted).  A config value that is not a string is -EBADMSG. */
int kaas_topic_doc_read_config(struct kaas_substrate *cluster, const char *name,
			       struct kaas_topic_doc *d, struct kaas_kvlist *config);

/* Does the document of `name` name incarnation `id`?  1 yes, 0 no (gone,
 * malformed, or another incarnation's), -errno when it cannot be read. */
int kaas_topic_doc_names(struct kaas_substrate *cluster, const char *name, const uint8_t id[16]);

/* Write the document of a new incarnation of `name` (its creator, after
 * winning incarnation d->inc), creating the directories: it claims the next
 * revision above every one claimed for the name (so a writer of an earlier
 * incarnation's document that read before it is refused at its claim or
 * its check, kaas_topic_doc_update; kaas_claim from the highest + 1) and
 * writes d's id, inc (0: none
 * written), np, deleting and rf, and config (NULL: none) at it (d->rev is
 * ignored).  0 or -errno. */
int kaas_topic_doc_write(struct kaas_substrate *cluster, const char *name,
			 const struct kaas_topic_doc *d, const struct kaas_kvlist *config);

/* Replace the document of `name` with d (at revision d->rev, which the
 * caller has claimed: kaas_topic_rev_claim) and config (NULL: none).  The
 * format's one writer; no check of its own.  0 or -errno. */
int kaas_topic_doc_put(struct kaas_substrate *cluster, const char *name,
		       const struct kaas_topic_doc *d, const struct kaas_kvlist *config);

/* The revision fence of `name` (topic-incarnations/<name>/revisions):
 * the highest revision claimed (0 when none) into *rev; claim revision
 * `rev` (0 this caller owns it, KAAS_EFENCED or -EEXIST another writer
 * has it or a later one; skipped revisions below it are created, as in
 * kaas_fence_claim, whose lost-epoch memory a revision does not enter); is
 * `rev` still the newest claimed (0, KAAS_EFENCED a later one is
 * claimed)?  -errno otherwise. */
int kaas_topic_rev_highest(struct kaas_substrate *cluster, const char *name, uint64_t *rev);
int kaas_topic_rev_claim(struct kaas_substrate *cluster, const char *name, uint64_t rev);
int kaas_topic_rev_check(struct kaas_substrate *cluster, const char *name, uint64_t rev);

/* A change to a topic document, made to the document as it is on the
 * volume right before it is written: called with the re-read document *d
 * and its config overrides, edits them in place (not d->id, d->inc or
 * d->rev).  Returns 0 to write them, 1 when there is nothing to write, or
 * a status that refuses the change (returned as is, nothing written).  May
 * be called more than once for one update (once per attempt), each time on
 * a fresh read: it must be a pure function of its input and arg. */
typedef int (*kaas_topic_edit_fn)(void *arg, struct kaas_topic_doc *d,
				  struct kaas_kvlist *config);

/* The document's read-modify-write (topic_doc_update.c), for incarnation
 * `id` of `name`: read the document (it must name `id`, not be marked
 * deleting, and its incarnation must not be over: else KAAS_EFENCED,
 * nothing written), edit it, claim the revision after the one read
 * (KAAS_TOPIC_REV_WAIT_MS past a claim left without its document), re-read
 * and edit the document again under the claim, check the claim is still
 * the newest and the incarnation not over, replace; a writer that lost the
 * claim or was skipped starts again from the read (a few times, then
 * KAAS_ECONTENDED).  Step "topics.doc.before-rewrite" comes between the
 * first read and the claim.  A replace reported failed but applied (a lost
 * reply) is recognised by the document's revision.  On success *out (may be
 * NULL) and *out_config (may be NULL; replaced) hold what was written (or
 * what is there, when edit had nothing to write).  0 written (or nothing
 * to write); 1 written, but the incarnation's end was found right after
 * the replace (a newer incarnation's document may have been overwritten,
 * after a pause between the last check and the rename longer than
 * KAAS_TOPIC_REV_WAIT_MS; or a delete came right after: the caller reports
 * it loudly); KAAS_EFENCED; the edit's status; KAAS_ECONTENDED; or
 * -errno. */
int kaas_topic_doc_update(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
			  kaas_topic_edit_fn edit, void *arg, struct kaas_topic_doc *out,
			  struct kaas_kvlist *out_config);

/* kaas_topic_doc_update with a fixed change: partitions at least np (np <
 * 0: the document's own), deleting, config overrides `config` (NULL: the
 * document's own).  The same returns, but never the edit's. */
int kaas_topic_doc_rewrite(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
			   int32_t np, int deleting, const struct kaas_kvlist *config);

/* Remove the document of `name` (already gone is fine) and sync its
 * directory.  0 or -errno. */
int kaas_topic_doc_remove(struct kaas_substrate *cluster, const char *name);

/* Wait, polling, up to wait_ms for the document of incarnation `inc` (or a
 * later one) of `name`: 0 and *d, -ETIMEDOUT when it did not appear, or
 * -errno (-EBADMSG: a damaged document). */
int kaas_topic_doc_await(struct kaas_substrate *cluster, const char *name, uint64_t inc,
			 unsigned wait_ms, struct kaas_topic_doc *d);

/* The highest incarnation ever claimed for `name`: 0 and *n (0 when none),
 * or -errno. */
int kaas_topic_inc_latest(struct kaas_substrate *cluster, const char *name, uint64_t *n);

/* Is incarnation n of `name` over (deleted-<n> exists)?  1, 0, or -errno.
 * Incarnation 0 (unnumbered documents, or none at all) always counts as
 * over. */
int kaas_topic_inc_over(struct kaas_substrate *cluster, const char *name, uint64_t n);

/* Mark incarnation n of `name` over (exclusive create of deleted-<n>;
 * already marked, and n == 0, are fine).  0 or -errno. */
int kaas_topic_inc_mark_over(struct kaas_substrate *cluster, const char *name, uint64_t n);

/* Claim incarnation n of `name` for `id`: 0 when this caller is its one
 * creator, -EEXIST when another creator has it, or -errno. */
int kaas_topic_inc_claim(struct kaas_substrate *cluster, const char *name, uint64_t n,
			 const uint8_t id[16]);

/* A directory's stamp. */
struct kaas_topic_stamp {
	uint8_t id[16];
	uint64_t inc;             /* 0 when the stamp carries none */
};

/* Read the stamp of <data>/<name>: 0 and *s, -ENOENT (unstamped or no
 * directory), -EBADMSG (no valid id), or -errno. */
int kaas_topic_stamp_read(struct kaas_substrate *data, const char *name,
			  struct kaas_topic_stamp *s);

/* The stamp of <data>/<name> against `id`: 1 it names `id`, 0 unstamped,
 * 2 another id, -EBADMSG or -errno. */
int kaas_topic_stamp_state(struct kaas_substrate *data, const char *name, const uint8_t id[16]);

/* Stamp <data>/<name> (created if missing) as incarnation (id, inc),
 * replacing any stamp there.  0 or -errno. */
int kaas_topic_stamp_write(struct kaas_substrate *data, const char *name, const uint8_t id[16],
			   uint64_t inc);

#endif
