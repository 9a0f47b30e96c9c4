/* topics/removal.c — convergent removal of a topic's directory and
 * document (renamed aside to <data>/.trash/<name>.<id>, then removed), and
 * claiming a directory for an incarnation, which reclaims an older
 * incarnation's the same way (see internal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/logger.h"
#include "broker/topics/internal.h"
#include "util/status.h"

/* One removal, re-driven by kaas_converge and then kaas_pending. */
struct removal {
	struct kaas_topics *t;
	char *name;               /* the topic name; NULL for a bare trash entry */
	int dir_todo;             /* <data>/<name> still to rename aside */
	int remove_doc;           /* then remove the document (and mark over) */
	char *trash_path;         /* <data>/.trash/<name>.<id> */
	uint8_t id[16];           /* the incarnation the doc must still name */
	uint64_t inc;             /* its number (0: unnumbered): marked over
	                             before the document goes */
};

static void removal_free(void *arg)
{
	struct removal *r = arg;
	free(r->name);
	free(r->trash_path);
	free(r);
}

/* Rename <data>/<name> aside to the trash path, if it is still there and
 * stamped by the incarnation being removed (an unstamped directory holds
 * no data of any incarnation: it is left to be adopted; another stamp is
 * a newer incarnation's).  When the document is to be removed too, only
 * while it still names that incarnation: once it does not, the delete was
 * finished elsewhere and the name may already be a new incarnation's.
 * KAAS_DONE, or KAAS_NOT_YET on a volume error (retried). */
static int rename_aside(struct removal *r)
{
	struct kaas_topics *t = r->t;
	int rc = r->remove_doc ? kaas_topic_doc_names(t->cluster, r->name, r->id) : 1;
	if (rc < 0)
		return KAAS_NOT_YET;
	int st = rc ? kaas_topic_stamp_state(t->data, r->name, r->id) : 0;
	if (st < 0 && st != -EBADMSG)
		return KAAS_NOT_YET;
	if (st == 1) {
		rc = kaas_sub_mkdirs(t->data, KAAS_TOPIC_TRASH_DIR, 0755);
		if (rc >= 0)
			rc = kaas_sub_rename(t->data, r->name, r->trash_path);
		if (rc == -EEXIST || rc == -ENOTEMPTY) {
			/* A leftover of this very incarnation is in the way (an
			 * earlier removal renamed part of it aside, or a directory
			 * re-created under the name and stamped again): the trash
			 * name carries the id, so it is this incarnation's and is
			 * removed first; the rename is retried next step. */
			kaas_warn("topic %s: %s is in the way; removing it first", r->name,
				  r->trash_path);
			(void)kaas_remove_tree_step(t->data, r->trash_path);
			return KAAS_NOT_YET;
		}
		if (rc < 0 && rc != -ENOENT) {
			kaas_warn("topic %s: renaming its directory aside failed: %s (%s); retrying",
				  r->name, kaas_strerror(rc), kaas_sub_errdetail());
			return KAAS_NOT_YET;
		}
		(void)kaas_sub_fsync_dir(t->data, "");
		(void)kaas_sub_fsync_dir(t->data, KAAS_TOPIC_TRASH_DIR);
	}
	r->dir_todo = 0;
	return KAAS_DONE;
}

/* Step: rename the directory aside (once), remove the renamed-aside tree,
 * then the topic document if it still describes the same incarnation.
 * Idempotent. */
static int removal_step(void *arg)
{
	struct removal *r = arg;
	if (r->dir_todo && rename_aside(r) != KAAS_DONE)
		return KAAS_NOT_YET;
	int rc = kaas_remove_tree_step(r->t->data, r->trash_path);
	if (rc != KAAS_DONE)
		return rc;
	if (r->remove_doc) {
		rc = kaas_topic_doc_names(r->t->cluster, r->name, r->id);
		if (rc < 0)
			return KAAS_NOT_YET;
		if (!rc)
			return KAAS_DONE; /* gone, or a new incarnation owns the document now */
		/* The marker first: once the document is gone, a creator must
		 * find this incarnation over, or it would wait for it. */
		if (kaas_topic_inc_mark_over(r->t->cluster, r->name, r->inc) < 0)
			return KAAS_NOT_YET;
		if (kaas_topic_doc_remove(r->t->cluster, r->name) < 0)
			return KAAS_NOT_YET;
	}
	return KAAS_DONE;
}

/* Drive r to its end (a few attempts), else record it for housekeeping.
 * Takes r.  0, -EAGAIN when the directory of a reclaim without
 * `remove_doc` could not be renamed aside (r dropped: the caller retries),
 * or -ENOMEM. */
static int drive(struct kaas_topics *t, struct removal *r)
{
	struct kaas_converge_opts o = { .max_attempts = 5 };
	int rc = kaas_converge(removal_step, r, &o);
	if (rc == 0) {
		removal_free(r);
		return 0;
	}
	if (r->name && r->dir_todo && !r->remove_doc) {
		/* Reclaiming before a new stamp: the caller must not stamp the
		 * old directory; it retries later. */
		kaas_error("topic %s: renaming its directory aside failed", r->name);
		removal_free(r);
		return -EAGAIN;
	}
	if (r->name)
		kaas_warn("topic %s: removal of %s not finished (%s); re-driving later", r->name,
			  r->trash_path, kaas_strerror(rc));
	char what[300];
	snprintf(what, sizeof(what), "remove %s", r->trash_path);
	if (kaas_pending_add(&t->pending, what, removal_step, r, removal_free) < 0) {
		removal_free(r);
		return -ENOMEM;
	}
	return 0;
}

int kaas_topics_reclaim_dir(struct kaas_topics *t, const char *name, const uint8_t id[16],
			    uint64_t inc, int remove_doc)
{
	assert(kaas_topics_holds_admin(t));
	char hex[33];
	kaas_topic_id_hex(id, hex);
	struct removal *r = calloc(1, sizeof(*r));
	size_t n = strlen(name) + 64;
	if (!r || !(r->name = strdup(name)) || !(r->trash_path = malloc(n))) {
		if (r)
			removal_free(r);
		return -ENOMEM;
	}
	r->t = t;
	memcpy(r->id, id, 16);
	r->inc = inc;
	r->remove_doc = remove_doc;
	r->dir_todo = 1;
	snprintf(r->trash_path, n, KAAS_TOPIC_TRASH_DIR "/%s.%s", name, hex);
	return drive(t, r);
}

int kaas_topics_redrive_trash(struct kaas_topics *t)
{
	struct kaas_dirlist l = { 0 };
	int rc = kaas_sub_list(t->data, KAAS_TOPIC_TRASH_DIR, &l);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < l.n && rc >= 0; i++) {
		struct removal *r = calloc(1, sizeof(*r));
		if (!r || !(r->trash_path = kaas_path_join(KAAS_TOPIC_TRASH_DIR, l.names[i]))) {
			free(r);
			rc = -ENOMEM;
			break;
		}
		r->t = t;
		kaas_info("re-driving the removal of %s", r->trash_path);
		rc = drive(t, r);
	}
	kaas_dirlist_free(&l);
	return rc;
}

int kaas_topics_stamp_dir(struct kaas_topics *t, const char *name, const uint8_t id[16],
			  uint64_t inc, int may_reclaim)
{
	struct kaas_topic_stamp old;
	int rc = kaas_topic_stamp_read(t->data, name, &old);
	if (rc == 0) {
		if (memcmp(old.id, id, 16) == 0)
			return 0;
		if (!may_reclaim)
			return kaas_sub_fail(KAAS_EFENCED, "%s/.topic-id.json: stamped by another "
					     "incarnation", name);
		if (old.inc && inc && old.inc >= inc)
			return kaas_sub_fail(KAAS_EFENCED, "%s/.topic-id.json: stamped by incarnation "
					     "%llu, not older than %llu", name,
					     (unsigned long long)old.inc, (unsigned long long)inc);
		struct kaas_topic_doc d;
		rc = kaas_topic_doc_read(t->cluster, name, &d);
		if (rc < 0 && rc != -ENOENT)
			return rc;
		if (rc == -ENOENT || d.deleting || memcmp(d.id, id, 16) != 0)
			return kaas_sub_fail(KAAS_EFENCED, "topic %s: its document no longer names the "
					     "incarnation being stamped", name);
		kaas_info("topic %s: directory belongs to an earlier incarnation; reclaiming", name);
		rc = kaas_topics_reclaim_dir(t, name, old.id, old.inc, 0);
		if (rc < 0)
			return rc;
	} else if (rc != -ENOENT) {
		return rc;
	}
	return kaas_topic_stamp_write(t->data, name, id, inc);
}
