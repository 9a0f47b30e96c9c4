/*
 * markers.c — how the coordinator has a partition's leader write a
 * transaction marker.
 *
 * This broker leads the partition: a direct call, kaas_log_append_marker_sync
 * on its open log.  Another broker leads it: a request document on the
 * cluster volume,
 *
 *   <cluster>/txn-markers/req-<h:016x>.json    written by the coordinator
 *   <cluster>/txn-markers/done-<h:016x>.json   written by the leader once
 *                                              the marker is durable
 *
 * h = FNV-1a 64 of (transactional id, transaction seq, topic, partition,
 * kind), so a re-drive names the same request.  Every broker's txn thread
 * lists txn-markers/ every tick and serves the requests of partitions it
 * leads (whoever leads the partition when it looks: no address to go
 * stale when leadership moves).  Before appending it re-reads the
 * transaction's state and serves only a request whose transaction is
 * still in that Prepare state (a request left from a finished transaction
 * is removed, never applied to a later one).  The log writes a marker only
 * once per (producer, epoch, kind), so a marker requested twice, or
 * written directly and then requested, lands once.  The coordinator
 * removes both files after it wrote Complete*; files a crash left are
 * removed by the serving side once their transaction moved on: a request
 * when a leader looks at it, a reply by the sweep (every broker, at the
 * cadence the txn thread asks for) once the state names a later
 * transaction or this one finished.  The txn thread lists txn-markers/
 * every tick while requests are there and backs off while none are
 * (driver.c).
 *
 * Why a request file and not a broker-to-broker RPC: kaas brokers only
 * talk through the volume (DESIGN.md); the file survives the crash of
 * either side, the leader needs no address book, and the contract gives
 * exactly what is needed (replace for the request and the reply).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "broker/topics.h"
#include "broker/txn/internal.h"
#include "cluster/topic_store.h"
#include "contract/doc.h"
#include "log/log.h"
#include "util/fnv.h"
#include "util/logger.h"
#include "util/status.h"
#include "util/step.h"

#define MARKERS_DIR "txn-markers"
#define REQ_KIND "txn-marker-request"
#define DONE_KIND "txn-marker-done"

static uint64_t request_hash(const struct kaas_txn_doc *d, const struct kaas_txn_part *part,
			     int commit)
{
	uint64_t h = KAAS_FNV64_INIT;
	h = kaas_fnv64(h, d->txn_id, strlen(d->txn_id) + 1);
	h = kaas_fnv64(h, &d->seq, sizeof d->seq);
	h = kaas_fnv64(h, part->topic, strlen(part->topic) + 1);
	h = kaas_fnv64(h, &part->partition, sizeof part->partition);
	return kaas_fnv64(h, &commit, sizeof commit);
}

static void file_path(char *out, size_t size, const char *kind, uint64_t h)
{
	snprintf(out, size, MARKERS_DIR "/%s-%016" PRIx64 ".json", kind, h);
}

/* The coordinator epoch a marker carries (Kafka's field is 32 bits; slot
 * epochs never come near the limit, and a clamp keeps them ordered). */
static int32_t marker_coord(uint64_t epoch)
{
	return epoch > INT32_MAX ? INT32_MAX : (int32_t)epoch;
}

/* Does this broker lead topic/partition with its log open?  1 and *out (a
 * reference: kaas_topic_put), or 0. */
static int led_here(struct kaas_txns *t, const char *topic, int32_t partition,
		    struct kaas_topic **out)
{
	struct kaas_broker *b = t->b;
	uint32_t lepoch;
	if (!b->agent || !kaas_agent_lease(b->agent, topic, partition, &lepoch))
		return 0;
	struct kaas_topic *kt = kaas_topics_get(b->topics, topic, (int)strlen(topic));
	if (!kt)
		return 0;
	if (partition < kt->npart && kt->parts[partition].log) {
		*out = kt;
		return 1;
	}
	kaas_topic_put(kt);
	return 0;
}

/* A deliberately broken broker, for the chaos checker's negative control
 * (tests/chaos/chaos_negative.sh): with KAAS_TEST_BREAK_TXN=abort-as-commit
 * in the environment, every abort marker this broker appends is written as
 * a commit, so an aborted transaction's records become visible.  Never set
 * outside that test. */
static int abort_as_commit(int64_t pid, int16_t pepoch)
{
	const char *knob = getenv("KAAS_TEST_BREAK_TXN");
	if (!knob || strcmp(knob, "abort-as-commit") != 0)
		return 0;
	kaas_warn("test knob KAAS_TEST_BREAK_TXN=abort-as-commit: producer %" PRId64 " epoch %d's "
		  "abort marker written as a commit", pid, (int)pepoch);
	return 1;
}

/* Append the marker on kt's log of partition (led here): 1 durable, or a
 * failure (KAAS_ETXN_COORD_FENCED: the partition saw a newer coordinator
 * of the producer). */
static int append_on(struct kaas_topic *kt, int32_t partition, int64_t pid, int16_t pepoch,
		     int commit, uint64_t coord_epoch)
{
	if (!commit && abort_as_commit(pid, pepoch))
		commit = 1;
	int64_t off = kaas_log_append_marker_sync(kt->parts[partition].log, pid, pepoch, commit,
						  marker_coord(coord_epoch));
	return off >= 0 ? 1 : (int)off;
}

/* Append the marker on this broker's log of part: 1 durable, 0 not led
 * here (or not open yet), or a failure. */
static int append_here(struct kaas_txns *t, const char *topic, int32_t partition, int64_t pid,
		       int16_t pepoch, int commit, uint64_t coord_epoch)
{
	struct kaas_topic *kt;
	if (!led_here(t, topic, partition, &kt))
		return 0;
	int rc = append_on(kt, partition, pid, pepoch, commit, coord_epoch);
	kaas_topic_put(kt);
	return rc;
}

/* Is part's topic incarnation over: no document, one marked deleting, or
 * one without that partition?  1 yes, 0 no, -errno unknown.  (A topic
 * re-created under the name meanwhile has a document again: the marker is
 * then requested of its leader, where it finds no open transaction of the
 * producer and is harmless, as in Kafka.) */
static int topic_gone(struct kaas_substrate *cl, const struct kaas_txn_part *part)
{
	struct kaas_topic_doc td;
	int rc = kaas_topic_doc_read(cl, part->topic, &td);
	if (rc == -ENOENT)
		return 1;
	if (rc < 0)
		return rc;
	return td.deleting || part->partition >= td.np;
}

/* Is there a file `name` in the listing? */
static int listed(const struct kaas_dirlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return 1;
	return 0;
}

int kaas_txn_marker(struct kaas_txns *t, const struct kaas_txn_doc *d,
		    const struct kaas_txn_part *part, int commit, int *fresh)
{
	struct kaas_substrate *cl = t->b->cluster;
	struct kaas_topic *kt;
	int rc;
	if (led_here(t, part->topic, part->partition, &kt)) {
		/* A direct append acts on the state in memory: first make sure
		 * no newer coordinator took the id over (the request path's
		 * server checks the state itself, still_wanted).  A takeover
		 * after this check is refused by the partition, which keeps
		 * the newest coordinator epoch of the producer's markers. */
		kaas_step("txn.marker.before-direct-append");
		rc = *fresh ? 0 : kaas_txn_fence_check(cl, d->txn_id, d->epoch);
		if (rc == KAAS_EFENCED)
			rc = kaas_sub_fail(KAAS_ETXN_COORD_FENCED, "transactional id %s: coordinator"
					   " epoch %" PRIu64 " superseded", d->txn_id, d->epoch);
		if (rc == 0) {
			*fresh = 1;
			rc = append_on(kt, part->partition, d->producer_id, d->producer_epoch, commit,
				       d->epoch);
		}
		kaas_topic_put(kt);
		return rc;
	}
	uint64_t h = request_hash(d, part, commit);
	char req[128], done[128];
	file_path(req, sizeof req, "req", h);
	file_path(done, sizeof done, "done", h);
	/* A listing, not a lookup by name: it is fresh (close-to-open on the
	 * directory), a lookup may be a cached "no such file". */
	struct kaas_dirlist l;
	rc = kaas_sub_mkdirs(cl, MARKERS_DIR, 0755);
	if (rc == 0)
		rc = kaas_sub_list(cl, MARKERS_DIR, &l);
	if (rc < 0)
		return rc;
	int is_done = listed(&l, strchr(done, '/') + 1);
	int requested = listed(&l, strchr(req, '/') + 1);
	kaas_dirlist_free(&l);
	if (is_done)
		return 1;
	/* Nobody will ever serve a partition whose topic is gone (Kafka skips
	 * those markers too): done; a request left is removed with the
	 * others at Complete* (kaas_txn_markers_forget). */
	rc = topic_gone(cl, part);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		/* debug: re-driven every tick while another marker is out */
		kaas_debug("transactional id %s: no %s marker for %s/%d: the topic is gone", d->txn_id,
			  commit ? "commit" : "abort", part->topic, part->partition);
		return 1;
	}
	if (requested)
		return 0;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	cJSON_AddStringToObject(o, "txn_id", d->txn_id);
	kaas_json_add_u64(o, "seq", d->seq);
	kaas_json_add_u64(o, "coordinator_epoch", d->epoch);
	kaas_json_add_i64(o, "producer_id", d->producer_id);
	kaas_json_add_i64(o, "producer_epoch", d->producer_epoch);
	cJSON_AddBoolToObject(o, "commit", commit);
	cJSON_AddStringToObject(o, "topic", part->topic);
	kaas_json_add_i64(o, "partition", part->partition);
	rc = kaas_doc_write(cl, req, REQ_KIND, 1, o);
	cJSON_Delete(o);
	return rc < 0 ? rc : 0;
}

void kaas_txn_markers_forget(struct kaas_txns *t, const struct kaas_txn_doc *d)
{
	int commit = d->state == KAAS_TXN_COMPLETE_COMMIT;
	/* One listing (fresh), then only the files it shows: markers written
	 * directly leave none, and an unlink of a missing file is a round trip
	 * on NFS.  A file written after the listing is a stale request (its
	 * server removes it) or a late reply (the sweep removes it). */
	struct kaas_dirlist l;
	int rc = kaas_sub_list(t->b->cluster, MARKERS_DIR, &l);
	if (rc == -ENOENT)
		return; /* never requested anything of anyone */
	for (size_t i = 0; i < d->nparts; i++) {
		uint64_t h = request_hash(d, &d->parts[i], commit);
		char path[128];
		file_path(path, sizeof path, "req", h);
		if (rc < 0 || listed(&l, strchr(path, '/') + 1))
			(void)kaas_sub_unlink(t->b->cluster, path);
		file_path(path, sizeof path, "done", h);
		if (rc < 0 || listed(&l, strchr(path, '/') + 1))
			(void)kaas_sub_unlink(t->b->cluster, path);
	}
	if (rc == 0)
		kaas_dirlist_free(&l);
}

/* ------------------------------------------------------- the leader's side */

struct request {
	char *txn_id, *topic;
	uint64_t seq, coord_epoch;
	int64_t pid, pepoch;
	int32_t partition;
	int commit;
};

/* A string member's value, or NULL. */
static const char *str_member(const cJSON *o, const char *name)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static int read_request(struct kaas_substrate *cl, const char *path, struct request *q)
{
	cJSON *o;
	memset(q, 0, sizeof *q);
	int rc = kaas_doc_read(cl, path, REQ_KIND, 1, &o, NULL);
	if (rc < 0)
		return rc;
	const char *id = str_member(o, "txn_id"), *topic = str_member(o, "topic");
	const cJSON *commit = cJSON_GetObjectItemCaseSensitive(o, "commit");
	int64_t p;
	if (!id || !topic || !cJSON_IsBool(commit) ||
	    kaas_json_get_u64(o, "seq", &q->seq) || kaas_json_get_u64(o, "coordinator_epoch",
								    &q->coord_epoch) ||
	    kaas_json_get_i64(o, "producer_id", &q->pid) ||
	    kaas_json_get_i64(o, "producer_epoch", &q->pepoch) ||
	    kaas_json_get_i64(o, "partition", &p) || p < 0 || p > INT32_MAX) {
		cJSON_Delete(o);
		return kaas_sub_fail(EBADMSG, "%s: malformed marker request", path);
	}
	q->partition = (int32_t)p;
	q->commit = cJSON_IsTrue(commit);
	q->txn_id = strdup(id);
	q->topic = strdup(topic);
	cJSON_Delete(o);
	if (!q->txn_id || !q->topic) {
		free(q->txn_id);
		free(q->topic);
		return -ENOMEM;
	}
	return 0;
}

/* Is the request's transaction still waiting for this marker?  1 yes, 0 it
 * moved on (the request is stale), -errno unknown. */
static int still_wanted(struct kaas_substrate *cl, const struct request *q)
{
	struct kaas_txn_doc d;
	int rc = kaas_txn_peek(cl, q->txn_id, &d);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	enum kaas_txn_state want = q->commit ? KAAS_TXN_PREPARE_COMMIT : KAAS_TXN_PREPARE_ABORT;
	rc = d.seq == q->seq && d.producer_id == q->pid && d.state == want;
	kaas_txn_doc_free(&d);
	return rc;
}

/* Serve one request file: append, reply, remove; or remove it stale. */
static void serve_one(struct kaas_txns *t, const char *name)
{
	struct kaas_substrate *cl = t->b->cluster;
	char path[512], done[512];
	snprintf(path, sizeof path, MARKERS_DIR "/%s", name);
	snprintf(done, sizeof done, MARKERS_DIR "/done-%s", name + 4);
	struct request q;
	if (read_request(cl, path, &q) < 0)
		return;
	uint32_t lepoch;
	if (!kaas_agent_lease(t->b->agent, q.topic, q.partition, &lepoch))
		goto out; /* another broker's to serve */
	int wanted = still_wanted(cl, &q);
	if (wanted == 0) {
		(void)kaas_sub_unlink(cl, path);
		goto out;
	}
	if (wanted < 0)
		goto out;
	kaas_step("txn.marker.before-append");
	int rc = append_here(t, q.topic, q.partition, q.pid, (int16_t)q.pepoch, q.commit,
			     q.coord_epoch);
	if (rc == 1) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "txn_id", q.txn_id);
		kaas_json_add_u64(o, "seq", q.seq);
		rc = o ? kaas_doc_write(cl, done, DONE_KIND, 1, o) : -ENOMEM;
		cJSON_Delete(o);
		if (rc == 0)
			(void)kaas_sub_unlink(cl, path);
	} else if (rc == KAAS_ETXN_COORD_FENCED) {
		/* From a coordinator that lost the id since still_wanted read
		 * its state: stale, as a request of a finished transaction. */
		kaas_info("marker request %s for %s/%d (transactional id %s): %s: removed", name,
			  q.topic, q.partition, q.txn_id, kaas_sub_errdetail());
		(void)kaas_sub_unlink(cl, path);
		goto out;
	}
	if (rc < 0)
		kaas_warn("marker for %s/%d (transactional id %s) not written yet: %s (%s)", q.topic,
			  q.partition, q.txn_id, kaas_strerror(rc), kaas_sub_errdetail());
out:
	free(q.txn_id);
	free(q.topic);
}

/* Has the transaction a reply names moved on (a later transaction, or
 * this one past its Prepare state)?  1 yes, 0 no (or a state read older
 * than the reply: a stale view keeps it), -errno unknown. */
static int reply_consumed(struct kaas_substrate *cl, const char *txn_id, uint64_t seq)
{
	struct kaas_txn_doc d;
	int rc = kaas_txn_peek(cl, txn_id, &d);
	if (rc == -ENOENT)
		return 1; /* no state for the id: nobody will ever read the reply */
	if (rc < 0)
		return rc;
	int open = d.state == KAAS_TXN_ONGOING || d.state == KAAS_TXN_PREPARE_COMMIT ||
		   d.state == KAAS_TXN_PREPARE_ABORT;
	rc = d.seq > seq || (d.seq == seq && !open);
	kaas_txn_doc_free(&d);
	return rc;
}

/* Sweep one reply file: removed once its transaction moved on. */
static void sweep_one(struct kaas_txns *t, const char *name)
{
	struct kaas_substrate *cl = t->b->cluster;
	char path[512];
	snprintf(path, sizeof path, MARKERS_DIR "/%s", name);
	cJSON *o;
	uint64_t seq;
	if (kaas_doc_read(cl, path, DONE_KIND, 1, &o, NULL) < 0)
		return; /* gone meanwhile, or unreadable: left for an operator */
	const char *id = str_member(o, "txn_id");
	if (id && kaas_json_get_u64(o, "seq", &seq) == 0 && reply_consumed(cl, id, seq) == 1) {
		kaas_info("transaction marker reply %s (transactional id %s, transaction %" PRIu64
			  ") outlived its transaction: removed", name, id, seq);
		(void)kaas_sub_unlink(cl, path);
	}
	cJSON_Delete(o);
}

/* A name of the form <prefix><16 hex>.json? */
static int marker_name(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(name, prefix, n) && strlen(name) == n + 16 + 5 &&
	       !strcmp(name + n + 16, ".json");
}

int kaas_txn_markers_serve(struct kaas_txns *t, int sweep)
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(t->b->cluster, MARKERS_DIR, &l);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	int requests = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (marker_name(l.names[i], "req-")) {
			requests++;
			serve_one(t, l.names[i]);
		} else if (sweep && marker_name(l.names[i], "done-")) {
			sweep_one(t, l.names[i]);
		}
	}
	kaas_dirlist_free(&l);
	return requests;
}
