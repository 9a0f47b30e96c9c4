/* topic_doc_update.c — the topic document's read-modify-write across
 * brokers: a change is applied to the document as re-read under a claim of
 * its next revision (see topic_store.h, kaas_topic_doc_update).
 *
 * Why it holds: revision r+1 is written only by the one winner of its
 * claim, and a writer claims only the revision after the one it read, so a
 * writer that read r while another wrote r+1 loses the claim and starts
 * again from the new document (never overwrites it).  A claim whose
 * document does not follow (its writer died, or the reply to the claim was
 * lost) would stop every later writer: after KAAS_TOPIC_REV_WAIT_MS the
 * next writer claims past it, and the late writer's check right before its
 * replace (is my revision still the newest?) refuses it.  A creator of a
 * new incarnation claims a revision too (kaas_topic_doc_write), so an
 * earlier incarnation's late writer is refused the same way. */
#include "cluster/topic_store.h"

#include <assert.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cluster/membership.h"
#include "util/logger.h"
#include "util/status.h"
#include "util/step.h"

#define UPDATE_ATTEMPTS 8 /* claims lost to other writers before ECONTENDED */
#define POLL_MS 20        /* while a claimed revision's document is awaited */

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Read the document of incarnation `id` of `name` and its overrides into
 * *d and *config: 0, KAAS_EFENCED (gone, another incarnation's, marked
 * deleting, or the incarnation over), or -errno. */
static int read_live(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
		     struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	int rc = kaas_topic_doc_read_config(cluster, name, d, config);
	if (rc == -ENOENT || (rc == 0 && (memcmp(d->id, id, 16) != 0 || d->deleting)))
		return kaas_sub_fail(KAAS_EFENCED, "topic %s: deleted or re-created elsewhere", name);
	if (rc < 0)
		return rc;
	rc = d->inc ? kaas_topic_inc_over(cluster, name, d->inc) : 0;
	return rc <= 0 ? rc : kaas_sub_fail(KAAS_EFENCED, "topic %s: deleted elsewhere", name);
}

/* Waiting for a claimed revision's document. */
struct await {
	uint64_t seen;  /* the highest claim seen above the document (0: none) */
	uint64_t since; /* when it was first seen (monotonic ms) */
};

/* The revision to claim after reading revision `read`: 0 and *target; 1
 * while a claim above `read` awaits its document (read again); or
 * -errno. */
static int pick_target(struct kaas_substrate *cluster, const char *name, uint64_t read,
		       struct await *w, uint64_t *target)
{
	uint64_t high;
	int rc = kaas_topic_rev_highest(cluster, name, &high);
	if (rc < 0)
		return rc;
	if (high <= read) {
		*target = read + 1;
		return 0;
	}
	uint64_t now = kaas_mono_ms();
	if (high != w->seen) {
		w->seen = high;
		w->since = now;
	}
	if (now - w->since < KAAS_TOPIC_REV_WAIT_MS)
		return 1;
	kaas_warn("topic %s: revision %llu of its document was claimed %d ms ago and not written; "
		  "writing past it", name, (unsigned long long)high, KAAS_TOPIC_REV_WAIT_MS);
	*target = high + 1;
	return 0;
}

/* kaas_topic_doc_rewrite's change. */
struct rewrite {
	int32_t np;
	int deleting;
	const struct kaas_kvlist *config;
};

static int rewrite_edit(void *arg, struct kaas_topic_doc *d, struct kaas_kvlist *config)
{
	const struct rewrite *r = arg;
	if (r->np > d->np)
		d->np = r->np; /* never fewer partitions than the document says */
	d->deleting = r->deleting;
	if (r->config) {
		kaas_kvlist_clear(config);
		if (kaas_kvlist_copy(config, r->config) < 0)
			return -ENOMEM;
	}
	return 0;
}

#define LOST 2 /* write_claimed: the claim was skipped before the replace */

/* Write revision `target`, claimed by this caller: the document re-read
 * and edited under the claim (a refusal or "nothing to change" still
 * writes the document as it is, so no claim is left without its
 * document), the claim and the incarnation checked, the replace.  0
 * written (*status: the edit's answer under the claim: 0, 1 or a
 * refusal); 1 written, but the incarnation's end was found right after;
 * LOST (start again); KAAS_EFENCED; or -errno. */
static int write_claimed(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
			 uint64_t target, kaas_topic_edit_fn edit, void *arg,
			 struct kaas_topic_doc *d, struct kaas_kvlist *config, int *status)
{
	int rc = read_live(cluster, name, id, d, config);
	if (rc < 0)
		return rc;
	if (d->rev >= target)
		return LOST; /* written past us: we were skipped */
	*status = edit(arg, d, config);
	if (*status < 0) {
		/* Refused now (the document moved since the first read): put the
		 * document back as it is, so the claim has its document. */
		kaas_kvlist_clear(config);
		rc = read_live(cluster, name, id, d, config);
		if (rc < 0 || d->rev >= target)
			return rc < 0 ? rc : LOST;
	}
	kaas_step("topics.doc.before-replace");
	rc = kaas_topic_rev_check(cluster, name, target);
	if (rc == KAAS_EFENCED)
		return LOST;
	if (rc == 0)
		rc = d->inc ? kaas_topic_inc_over(cluster, name, d->inc) : 0;
	if (rc != 0)
		return rc < 0 ? rc : kaas_sub_fail(KAAS_EFENCED, "topic %s: deleted elsewhere", name);
	d->rev = target;
	rc = kaas_topic_doc_put(cluster, name, d, config);
	if (rc < 0) {
		/* Applied all the same (a lost reply)?  The revision says. */
		struct kaas_topic_doc now;
		if (kaas_topic_doc_read(cluster, name, &now) != 0 || now.rev != target ||
		    memcmp(now.id, id, 16) != 0)
			return rc;
	}
	/* A later revision claimed by now proves nothing: its writer may well
	 * have read ours.  The incarnation's end may mean a newer one's
	 * document was replaced (a stop of KAAS_TOPIC_REV_WAIT_MS between the
	 * checks above and the rename): the caller says so loudly. */
	return d->inc && kaas_topic_inc_over(cluster, name, d->inc) == 1 ? 1 : 0;
}

int kaas_topic_doc_update(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
			  kaas_topic_edit_fn edit, void *arg, struct kaas_topic_doc *out,
			  struct kaas_kvlist *out_config)
{
	struct kaas_topic_doc d;
	struct kaas_kvlist config = { 0 };
	struct await w = { 0, 0 };
	int rc, status = 0, lost = 0;
	for (;;) {
		kaas_kvlist_clear(&config);
		status = 0;
		uint64_t target = 0;
		rc = read_live(cluster, name, id, &d, &config);
		if (rc == 0)
			rc = pick_target(cluster, name, d.rev, &w, &target);
		if (rc == 1) {
			pause_ms(POLL_MS);
			continue;
		}
		if (rc == 0)
			rc = status = edit(arg, &d, &config);
		if (rc != 0) {
			rc = rc == 1 ? 0 : rc; /* 1: nothing to write */
			break;
		}
		kaas_step("topics.doc.before-rewrite");
		rc = kaas_topic_rev_claim(cluster, name, target);
		if (rc == 0)
			rc = write_claimed(cluster, name, id, target, edit, arg, &d, &config,
					   &status);
		else if (rc == KAAS_EFENCED || rc == -EEXIST)
			rc = LOST; /* another writer has this revision or a later one */
		if (rc != LOST)
			break;
		if (++lost >= UPDATE_ATTEMPTS) {
			rc = kaas_sub_fail(KAAS_ECONTENDED, "topic %s: other writers kept winning "
					   "its document's revisions", name);
			break;
		}
	}
	assert(rc != LOST);
	if (rc >= 0 && status < 0)
		rc = status; /* refused under the claim (the document written back as it was) */
	if (rc >= 0) {
		if (out)
			*out = d;
		if (out_config) {
			kaas_kvlist_clear(out_config);
			*out_config = config;
			config = (struct kaas_kvlist){ 0 };
		}
	}
	kaas_kvlist_clear(&config);
	return rc;
}

int kaas_topic_doc_rewrite(struct kaas_substrate *cluster, const char *name, const uint8_t id[16],
			   int32_t np, int deleting, const struct kaas_kvlist *config)
{
	struct rewrite r = { np, deleting, config };
	return kaas_topic_doc_update(cluster, name, id, rewrite_edit, &r, NULL, NULL);
}
