/* topics.c — the topic registry (see topics.h). */
#include "broker/topics.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/logger.h"
#include "cluster/assignment.h"
#include "cluster/membership.h"
#include "contract/contract.h"
#include "contract/epoch_fence.h"
#include "contract/doc.h"
#include "kafka/protocol.h"
#include "util/step.h"
#include "util/status.h"

#define TOPIC_DOC_KIND "topic"
#define TOPIC_ID_KIND "topic-id"
#define TRASH_DIR ".trash"
#define MAX_PARTITIONS 100000
#define EPOCH_DIR "leader-epochs"
/* <cluster>/topic-incarnations/<name>/: incarnation-<N> (exclusive create:
 * the one creator of incarnation N of the name) and deleted-<N> (exclusive
 * create: incarnation N is over, deleted or abandoned).  Never removed, so
 * incarnation numbers of a name only grow. */
#define INCARNATION_DIR "topic-incarnations"
#define INC_CLAIM "incarnation"
#define INC_OVER "deleted"
/* How long a creator that lost the claim of an incarnation waits for the
 * winner's document before it takes the winner for dead and abandons it. */
#define CREATE_WAIT_MS 10000

/* A document marked deleting, first seen by reconcile at `since` (our
 * monotonic clock); `driven` once this broker took the removal over. */
struct stuck_delete {
	char name[256];
	uint8_t id[16];
	uint64_t since;
	int driven, seen;
	int foreign;              /* 1: not a delete but a directory stamped by
	                             another incarnation than the document's */
};

/* A delete whose broker died midway is finished by whoever sees its
 * document still marked deleting this long. */
#define STUCK_DELETE_MS 30000

struct kaas_topics {
	struct kaas_substrate *data, *cluster;
	kaas_log_notify_cb notify;
	void *notify_arg;
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* signalled when a topic's refs drop */
	pthread_mutex_t admin_mu; /* serialises create/delete/grow (volume work) */
	struct kaas_topic **v;
	int n, cap;
	struct kaas_pending pending;
	uint32_t epoch;           /* leader epoch this broker incarnation writes with
	                             (without a lease function only) */
	kaas_lease_fn lease;      /* cluster mode: which partitions we lead */
	void *lease_arg;
	void (*before_remove)(void *arg, const char *name);
	void *before_remove_arg;
	struct stuck_delete *stuck; /* deleting documents seen by reconcile */
	size_t nstuck;
	unsigned reconciles;      /* reconcile rounds so far */
};

void kaas_topics_set_before_remove(struct kaas_topics *t, void (*fn)(void *arg, const char *name),
				   void *arg)
{
	t->before_remove = fn;
	t->before_remove_arg = arg;
}

int kaas_topic_name_valid(const char *name, int len)
{
	if (!name || len < 1 || len > 249)
		return 0;
	for (int i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if ((len == 9 && memcmp(name, "__cluster", 9) == 0) ||
	    (len == 6 && memcmp(name, TRASH_DIR, 6) == 0) ||
	    (len == (int)strlen(KAAS_COORDINATOR_TOPIC) &&
	     memcmp(name, KAAS_COORDINATOR_TOPIC, (size_t)len) == 0))
		return 0;
	return 1;
}

static void id_hex(const uint8_t id[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

static int id_parse(const char *s, uint8_t id[16])
{
	if (!s || strlen(s) != 32)
		return -EINVAL;
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		id[i] = (uint8_t)v;
	}
	return 0;
}

/* What a topic document says. */
struct topic_doc {
	uint8_t id[16];
	int64_t np;               /* partitions */
	int deleting;
	uint64_t inc;             /* incarnation number; 0 in unnumbered documents */
};

static int read_topic_doc(struct kaas_topics *t, const char *name, struct topic_doc *d);

/* kaas_doc_read, re-opened on -ESTALE (another host replaced or removed
 * the file under a cached name: a new open sees the current one). */
static int read_doc(struct kaas_substrate *sub, const char *path, const char *kind, int version,
		    cJSON **body, int *ver)
{
	int rc = -ESTALE;
	for (int i = 0; i < 3 && rc == -ESTALE; i++)
		rc = kaas_doc_read(sub, path, kind, version, body, ver);
	return rc;
}

static char *doc_path(const char *name)
{
	size_t n = strlen(name) + 16;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "topics/%s.json", name);
	return p;
}

static int write_topic_doc(struct kaas_topics *t, const char *name, const uint8_t id[16],
			   uint64_t inc, int32_t npart, int deleting)
{
	char hex[33];
	id_hex(id, hex);
	cJSON *b = cJSON_CreateObject();
	char *path = doc_path(name);
	int rc = -ENOMEM;
	if (b && path && cJSON_AddStringToObject(b, "name", name) &&
	    cJSON_AddStringToObject(b, "id", hex) && cJSON_AddObjectToObject(b, "config") &&
	    cJSON_AddBoolToObject(b, "deleting", deleting) &&
	    kaas_json_add_i64(b, "partitions", npart) == 0 &&
	    (!inc || kaas_json_add_u64(b, "incarnation", inc) == 0)) {
		rc = kaas_sub_mkdirs(t->cluster, "topics", 0755);
		if (rc >= 0)
			rc = kaas_doc_write(t->cluster, path, TOPIC_DOC_KIND, 1, b);
	}
	if (rc < 0)
		kaas_error("topic %s: writing its document failed: %s (%s)", name, kaas_strerror(rc),
			   kaas_sub_errdetail());
	cJSON_Delete(b);
	free(path);
	return rc;
}

/* ------------------------------------------------------------ incarnations */

static void inc_dir(const char *name, char *out, size_t size)
{
	snprintf(out, size, INCARNATION_DIR "/%s", name);
}

/* The highest incarnation ever claimed for `name`: 0 and *n (0 when none),
 * or -errno. */
static int inc_latest(struct kaas_topics *t, const char *name, uint64_t *n)
{
	char dir[300];
	inc_dir(name, dir, sizeof(dir));
	*n = 0;
	int rc = kaas_claim_latest(t->cluster, dir, INC_CLAIM, n);
	if (rc == -ENOENT) {
		*n = 0;
		return 0;
	}
	return rc;
}

/* Is incarnation n of `name` over (its deleted-<n> marker exists)?  1, 0, or
 * -errno.  Incarnation 0 (documents written before incarnations were
 * numbered, or none at all) counts as over once its document is gone. */
static int inc_over(struct kaas_topics *t, const char *name, uint64_t n)
{
	if (n == 0)
		return 1;
	char dir[300], claim[64];
	inc_dir(name, dir, sizeof(dir));
	kaas_claim_name(claim, sizeof(claim), INC_OVER, n);
	char *path = kaas_path_join(dir, claim);
	if (!path)
		return -ENOMEM;
	struct kaas_stat st;
	int rc = kaas_sub_stat(t->cluster, path, &st);
	free(path);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : 1;
}

/* Mark incarnation n of `name` over (exclusive create of deleted-<n>;
 * already marked is fine).  0 or -errno. */
static int inc_mark_over(struct kaas_topics *t, const char *name, uint64_t n)
{
	if (n == 0)
		return 0;
	char dir[300];
	inc_dir(name, dir, sizeof(dir));
	int rc = kaas_sub_mkdirs(t->cluster, dir, 0755);
	if (rc >= 0)
		rc = kaas_claim_exact(t->cluster, dir, INC_OVER, n, NULL);
	return rc == -EEXIST ? 0 : rc;
}

/* Claim incarnation n of `name`: 0 when this caller is its one creator,
 * -EEXIST when another creator has it, or -errno. */
static int inc_claim(struct kaas_topics *t, const char *name, uint64_t n, const uint8_t id[16])
{
	char dir[300], hex[33];
	inc_dir(name, dir, sizeof(dir));
	id_hex(id, hex);
	int rc = kaas_sub_mkdirs(t->cluster, dir, 0755);
	if (rc >= 0)
		rc = kaas_claim_exact(t->cluster, dir, INC_CLAIM, n, hex);
	return rc;
}

/* ------------------------------------------------------------ removal */

struct removal {
	struct kaas_topics *t;
	char *dir;                /* <data>/<name> still to rename aside, or NULL */
	char *trash_path;         /* <data>/.trash/<name>.<id> */
	char *doc;                /* cluster doc to remove afterwards, or NULL */
	uint8_t id[16];           /* the incarnation the doc must still name */
	uint64_t inc;             /* its number (0: unnumbered): marked over
	                             before the document goes */
	char *name;               /* the topic name (for the marker) */
};

static void removal_free(void *arg)
{
	struct removal *r = arg;
	free(r->dir);
	free(r->trash_path);
	free(r->doc);
	free(r->name);
	free(r);
}

static int stamp_state(struct kaas_topics *t, const char *name, const uint8_t id[16]);

/* Does the topic document still name incarnation `id`?  1 yes, 0 no (gone
 * or another incarnation's), -errno when it cannot be read. */
static int doc_names(struct kaas_topics *t, const char *doc, const uint8_t id[16])
{
	cJSON *body = NULL;
	int ver;
	int rc = read_doc(t->cluster, doc, TOPIC_DOC_KIND, 1, &body, &ver);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc == -EBADMSG ? 0 : rc;
	uint8_t cur[16];
	cJSON *idj = cJSON_GetObjectItemCaseSensitive(body, "id");
	int same = cJSON_IsString(idj) && id_parse(idj->valuestring, cur) == 0 &&
		   memcmp(cur, id, 16) == 0;
	cJSON_Delete(body);
	return same;
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
	int rc = r->doc ? doc_names(t, r->doc, r->id) : 1;
	if (rc < 0)
		return KAAS_NOT_YET;
	int st = rc ? stamp_state(t, r->dir, r->id) : 0;
	if (st < 0 && st != -EBADMSG)
		return KAAS_NOT_YET;
	if (st == 1) {
		rc = kaas_sub_mkdirs(t->data, TRASH_DIR, 0755);
		if (rc >= 0)
			rc = kaas_sub_rename(t->data, r->dir, r->trash_path);
		if (rc == -EEXIST || rc == -ENOTEMPTY) {
			/* A leftover of this very incarnation is in the way (an
			 * earlier removal renamed part of it aside, or a directory
			 * re-created under the name and stamped again): the trash
			 * name carries the id, so it is this incarnation's and is
			 * removed first; the rename is retried next step. */
			kaas_warn("topic %s: %s is in the way; removing it first", r->dir,
				  r->trash_path);
			(void)kaas_remove_tree_step(t->data, r->trash_path);
			return KAAS_NOT_YET;
		}
		if (rc < 0 && rc != -ENOENT) {
			kaas_warn("topic %s: renaming its directory aside failed: %s (%s); retrying",
				  r->dir, kaas_strerror(rc), kaas_sub_errdetail());
			return KAAS_NOT_YET;
		}
		(void)kaas_sub_fsync_dir(t->data, "");
		(void)kaas_sub_fsync_dir(t->data, TRASH_DIR);
	}
	free(r->dir);
	r->dir = NULL;
	return KAAS_DONE;
}

/* Step: rename the directory aside (once), remove the renamed-aside tree,
 * then the topic document if it still describes the same incarnation.
 * Idempotent. */
static int removal_step(void *arg)
{
	struct removal *r = arg;
	if (r->dir && rename_aside(r) != KAAS_DONE)
		return KAAS_NOT_YET;
	int rc = kaas_remove_tree_step(r->t->data, r->trash_path);
	if (rc != KAAS_DONE)
		return rc;
	if (r->doc) {
		rc = doc_names(r->t, r->doc, r->id);
		if (rc < 0)
			return KAAS_NOT_YET;
		if (!rc)
			return KAAS_DONE; /* gone, or a new incarnation owns the document now */
		/* The marker first: once the document is gone, a creator must
		 * find this incarnation over, or it would wait for it. */
		if (r->name && inc_mark_over(r->t, r->name, r->inc) < 0)
			return KAAS_NOT_YET;
		rc = kaas_sub_unlink(r->t->cluster, r->doc);
		if (rc < 0 && rc != -ENOENT)
			return KAAS_NOT_YET;
		(void)kaas_sub_fsync_dir(r->t->cluster, "topics");
	}
	return KAAS_DONE;
}

/* Rename <data>/<name> aside (if present and stamped with `id`) and remove
 * it convergently; with remove_doc, then remove the topic document of
 * incarnation `id`.  Unfinished work, the rename aside included, is
 * recorded in t->pending and re-driven by housekeeping; 0, or -errno
 * (-EAGAIN: without remove_doc, the directory could not be renamed aside,
 * nothing recorded).  Caller holds admin_mu. */
static int reclaim_dir(struct kaas_topics *t, const char *name, const uint8_t id[16],
		       uint64_t inc, int remove_doc)
{
	char hex[33];
	id_hex(id, hex);
	struct removal *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->t = t;
	memcpy(r->id, id, 16);
	r->inc = inc;
	size_t n = strlen(name) + 64;
	r->trash_path = malloc(n);
	if (!r->trash_path) {
		removal_free(r);
		return -ENOMEM;
	}
	snprintf(r->trash_path, n, TRASH_DIR "/%s.%s", name, hex);
	if (remove_doc && (!(r->doc = doc_path(name)) || !(r->name = strdup(name)))) {
		removal_free(r);
		return -ENOMEM;
	}
	if (!(r->dir = strdup(name))) {
		removal_free(r);
		return -ENOMEM;
	}
	struct kaas_converge_opts o = { .max_attempts = 5 };
	int rc = kaas_converge(removal_step, r, &o);
	if (rc == 0) {
		removal_free(r);
		return 0;
	}
	if (r->dir && !remove_doc) {
		/* Reclaiming before a new stamp: the caller must not stamp the
		 * old directory; it retries later. */
		kaas_error("topic %s: renaming its directory aside failed", name);
		removal_free(r);
		return -EAGAIN;
	}
	kaas_warn("topic %s: removal of %s not finished (%s); re-driving later", name,
		  r->trash_path, kaas_strerror(rc));
	char what[300];
	snprintf(what, sizeof(what), "remove %s", r->trash_path);
	if (kaas_pending_add(&t->pending, what, removal_step, r, removal_free) < 0) {
		removal_free(r);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ opening */

static void topic_free(struct kaas_topic *tp)
{
	if (!tp)
		return;
	for (int32_t i = 0; tp->parts && i < tp->npart; i++) {
		if (tp->parts[i].log) {
			int rc = kaas_log_close(tp->parts[i].log);
			if (rc < 0)
				kaas_error("topic %s partition %d: close failed: %s", tp->name, i,
					   kaas_strerror(rc));
		}
		kaas_hw_token_put(tp->parts[i].token);
	}
	free(tp->parts);
	free(tp->name);
	free(tp);
}

struct kaas_hw_token *kaas_hw_token_get(struct kaas_hw_token *tok)
{
	if (tok)
		__atomic_add_fetch(&tok->refs, 1, __ATOMIC_RELAXED);
	return tok;
}

void kaas_hw_token_put(struct kaas_hw_token *tok)
{
	if (tok && __atomic_sub_fetch(&tok->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(tok);
}

/* The log's notify callback (its sync thread): record, then pass on. */
static void token_notify(void *arg, int64_t hw)
{
	struct kaas_hw_token *tok = arg;
	__atomic_store_n(&tok->hw, hw, __ATOMIC_RELEASE);
	if (tok->fn)
		tok->fn(tok->arg, hw);
}

/* Open the log of partition `idx` of topic `tp` into *p, with `token`
 * (ownership passes to *p) or a new one.  Only under the topic's own
 * directory: it must exist and carry this incarnation's stamp (the open
 * creates the partition directory, never the topic's), so a slow opener
 * never resurrects a deleted topic's directory nor writes into another
 * incarnation's. */
static void open_one(struct kaas_topics *t, const struct kaas_topic *tp, int32_t idx,
		     struct kaas_partition *p, struct kaas_hw_token *token)
{
	const char *name = tp->name;
	memset(p, 0, sizeof(*p));
	p->index = idx;
	if (!token && (token = calloc(1, sizeof(*token)))) {
		token->refs = 1;
		token->fn = t->notify;
		token->arg = t->notify_arg;
	}
	p->token = token;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/%d", name, idx);
	uint32_t epoch = t->epoch;
	if (t->lease && !t->lease(t->lease_arg, name, idx, &epoch)) {
		p->log = NULL;
		p->open_err = KAAS_PART_NOT_LEADER;
		return;
	}
	p->epoch = epoch;
	int rc = token ? stamp_state(t, name, tp->id) : -ENOMEM;
	if (rc >= 0 && rc != 1) {
		kaas_warn("topic %s partition %d: the topic directory is %s; not opening", name,
			  idx, rc == 0 ? "missing or unstamped" : "another incarnation's");
		rc = -ENOENT;
	}
	struct kaas_log_config cfg;
	kaas_log_config_default(&cfg);
	cfg.parent_must_exist = 1;
	if (rc >= 0)
		rc = kaas_log_open(t->data, dir, epoch, &cfg, &p->log);
	if (rc < 0) {
		p->log = NULL;
		p->open_err = rc;
		kaas_error("topic %s partition %d: open failed: %s (%s)", name, idx, kaas_strerror(rc),
			   kaas_sub_errdetail());
	} else {
		__atomic_store_n(&token->hw, kaas_log_high_watermark(p->log), __ATOMIC_RELEASE);
		kaas_log_set_notify(p->log, token_notify, token);
	}
}

/* Open logs for partitions [from, to) of topic `tp` into arr[from..to). */
static void open_range(struct kaas_topics *t, const struct kaas_topic *tp,
		       struct kaas_partition *arr, int32_t from, int32_t to)
{
	for (int32_t i = from; i < to; i++)
		open_one(t, tp, i, &arr[i], NULL);
}

void kaas_partition_mark_failed(struct kaas_partition *p)
{
	__atomic_store_n(&p->failed, 1, __ATOMIC_RELEASE);
}

/* Open errors a retry cannot fix: a damaged or inconsistent directory (an
 * operator must look), or a newer leader. */
static int open_err_final(int err)
{
	return err == -EBADMSG || err == -EUCLEAN || err == KAAS_LOG_EFENCED || err == -EPROTO ||
	       err == KAAS_PART_NOT_LEADER;
}

static int needs_reopen(struct kaas_partition *p)
{
	if (!p->log)
		return !open_err_final(p->open_err);
	if (__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE))
		return 1;
	/* Only a real fence (a newer epoch on the volume) is final; any other
	 * failure, a transient -ESTALE included, is re-driven by a re-open. */
	int st = kaas_log_status(p->log);
	return st != 0 && st != KAAS_LOG_EFENCED;
}

/* Close and re-open every failed partition.  Caller holds admin_mu (so no
 * delete or growth runs meanwhile) and no topic reference. */
static size_t reopen_failed_locked(struct kaas_topics *t)
{
	pthread_mutex_lock(&t->mu);
	int n = 0;
	struct kaas_topic **v = malloc(sizeof(*v) * (size_t)(t->n + 1));
	for (int i = 0; v && i < t->n; i++) {
		struct kaas_topic *tp = t->v[i];
		if (tp->offline || tp->deleting)
			continue;
		for (int32_t k = 0; k < tp->npart; k++)
			if (needs_reopen(&tp->parts[k])) {
				tp->refs++;
				v[n++] = tp;
				break;
			}
	}
	pthread_mutex_unlock(&t->mu);
	size_t still = 0;
	for (int i = 0; i < n; i++) {
		struct kaas_topic *tp = v[i];
		for (int32_t k = 0; k < tp->npart; k++) {
			if (!needs_reopen(&tp->parts[k]))
				continue;
			/* Take the log away once no request uses the topic. */
			pthread_mutex_lock(&t->mu);
			while (tp->refs > 2)
				pthread_cond_wait(&t->cv, &t->mu);
			struct kaas_log *old = tp->parts[k].log;
			tp->parts[k].log = NULL;
			__atomic_store_n(&tp->parts[k].failed, 0, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&t->mu);
			if (old) {
				kaas_warn("topic %s partition %d: log failed; re-opening it", tp->name, k);
				int rc = kaas_log_close(old);
				if (rc < 0)
					kaas_warn("topic %s partition %d: close of the failed log: %s",
						  tp->name, k, kaas_strerror(rc));
			}
			struct kaas_partition fresh;
			open_one(t, tp, k, &fresh, tp->parts[k].token);
			if (fresh.log)
				kaas_info("topic %s partition %d: re-opened", tp->name, k);
			else
				still++;
			pthread_mutex_lock(&t->mu);
			tp->parts[k] = fresh;
			pthread_mutex_unlock(&t->mu);
		}
		kaas_topic_put(tp);
	}
	free(v);
	return still;
}

/* Open partitions [0, to) of a topic no one else can see yet. */
static int open_partitions(struct kaas_topics *t, struct kaas_topic *tp, int32_t to)
{
	tp->parts = calloc((size_t)to, sizeof(*tp->parts));
	if (!tp->parts)
		return -ENOMEM;
	open_range(t, tp, tp->parts, 0, to);
	return 0;
}

/* Make sure <data>/<name>/ is incarnation (id, inc)'s: adopt an unstamped
 * directory, write our stamp.  A directory stamped by another incarnation
 * is reclaimed (renamed aside) only with may_reclaim, only when that
 * incarnation is older (by number, where both are numbered) and only while
 * the topic document still names ours, re-read here (it is our view that
 * may be the stale one); otherwise KAAS_EFENCED and nothing is touched.  The
 * one creator of an incarnation reclaims; others only after the foreign
 * stamp has stayed for STUCK_DELETE_MS (its creator died), see adopt_new. */
static int stamp_dir(struct kaas_topics *t, const char *name, const uint8_t id[16], uint64_t inc,
		     int may_reclaim)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/.topic-id.json", name);
	cJSON *body = NULL;
	int ver;
	int rc = read_doc(t->data, path, TOPIC_ID_KIND, 1, &body, &ver);
	if (rc == 0) {
		uint8_t old[16];
		uint64_t oinc = 0;
		cJSON *idj = cJSON_GetObjectItemCaseSensitive(body, "id");
		int ok = cJSON_IsString(idj) && id_parse(idj->valuestring, old) == 0;
		int irc = kaas_json_get_u64(body, "incarnation", &oinc);
		cJSON_Delete(body);
		if (irc < 0)
			oinc = 0;
		if (ok && memcmp(old, id, 16) == 0)
			return 0;
		if (!ok)
			return -EBADMSG;
		if (!may_reclaim)
			return kaas_sub_fail(KAAS_EFENCED, "%s: stamped by another incarnation", path);
		if (oinc && inc && oinc >= inc)
			return kaas_sub_fail(KAAS_EFENCED, "%s: stamped by incarnation %llu, not older than %llu",
					     path, (unsigned long long)oinc, (unsigned long long)inc);
		struct topic_doc d;
		rc = read_topic_doc(t, name, &d);
		if (rc < 0 && rc != -ENOENT)
			return rc;
		if (rc == -ENOENT || d.deleting || memcmp(d.id, id, 16) != 0)
			return kaas_sub_fail(KAAS_EFENCED, "topic %s: its document no longer names the "
					     "incarnation being stamped", name);
		kaas_info("topic %s: directory belongs to an earlier incarnation; reclaiming", name);
		rc = reclaim_dir(t, name, old, oinc, 0);
		if (rc < 0)
			return rc;
	} else if (rc != -ENOENT) {
		return rc;
	}
	rc = kaas_sub_mkdirs(t->data, name, 0755);
	if (rc < 0)
		return rc;
	char hex[33];
	id_hex(id, hex);
	body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "id", hex) ||
	    !cJSON_AddStringToObject(body, "name", name) ||
	    (inc && kaas_json_add_u64(body, "incarnation", inc) < 0)) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	rc = kaas_doc_write(t->data, path, TOPIC_ID_KIND, 1, body);
	cJSON_Delete(body);
	return rc;
}

static int registry_add(struct kaas_topics *t, struct kaas_topic *tp)
{
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		struct kaas_topic **v = realloc(t->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	tp->reg = t;
	tp->refs = 1; /* the registry's own */
	t->v[t->n++] = tp;
	return 0;
}

static struct kaas_topic *find_locked(struct kaas_topics *t, const char *name, int len)
{
	for (int i = 0; i < t->n; i++)
		if ((int)strlen(t->v[i]->name) == len && memcmp(t->v[i]->name, name, (size_t)len) == 0)
			return t->v[i];
	return NULL;
}

/* A topic whose document or directory cannot be trusted stays listed as
 * offline (no partitions): its name cannot be re-created or deleted through
 * the API, so a damaged document is never silently replaced by a new
 * incarnation that would reclaim the old data.  An operator repairs it. */
static int add_offline(struct kaas_topics *t, const char *name)
{
	struct kaas_topic *tp = calloc(1, sizeof(*tp));
	if (!tp || !(tp->name = strdup(name))) {
		free(tp);
		return -ENOMEM;
	}
	tp->offline = 1;
	int rc = registry_add(t, tp);
	if (rc < 0)
		topic_free(tp);
	return rc;
}

static int load_one(struct kaas_topics *t, const char *file)
{
	size_t fl = strlen(file);
	if (fl < 6 || strcmp(file + fl - 5, ".json") != 0 || kaas_is_temp_name(file))
		return 0;
	char name[256];
	if (fl - 5 >= sizeof(name))
		return 0;
	memcpy(name, file, fl - 5);
	name[fl - 5] = '\0';
	if (!kaas_topic_name_valid(name, (int)strlen(name))) {
		kaas_warn("ignoring topic document %s: not a valid topic name", file);
		return 0;
	}
	struct topic_doc d;
	int rc = read_topic_doc(t, name, &d);
	if (rc == -ENOENT)
		return 0; /* deleted since the listing */
	if (rc < 0) {
		/* Offline until a later reconcile reads it (sync_docs retries
		 * every round): nothing transient is permanent. */
		kaas_error("topic %s: document unreadable or malformed: %s (%s); topic offline "
			   "until it reads", name, kaas_strerror(rc), kaas_sub_errdetail());
		return add_offline(t, name);
	}
	if (d.deleting) {
		kaas_info("topic %s: finishing its deletion", name);
		return reclaim_dir(t, name, d.id, d.inc, 1);
	}
	/* Without a lease (tools, tests) this registry is alone and may
	 * reclaim; a cluster broker leaves a foreign stamp to the creator
	 * (adopt_new re-drives it). */
	rc = stamp_dir(t, name, d.id, d.inc, !t->lease);
	if (rc < 0) {
		kaas_error("topic %s: stamping its directory failed: %s (%s); topic offline "
			   "until it succeeds", name, kaas_strerror(rc), kaas_sub_errdetail());
		return add_offline(t, name);
	}
	struct kaas_topic *tp = calloc(1, sizeof(*tp));
	if (!tp || !(tp->name = strdup(name))) {
		free(tp);
		return -ENOMEM;
	}
	memcpy(tp->id, d.id, 16);
	tp->incarnation = d.inc;
	tp->npart = (int32_t)d.np;
	if ((rc = open_partitions(t, tp, tp->npart)) < 0 || (rc = registry_add(t, tp)) < 0) {
		topic_free(tp);
		return rc;
	}
	kaas_info("topic %s: opened %d partition(s)", name, tp->npart);
	return 0;
}

/* Entries left in <data>/.trash by an interrupted removal (a crash between
 * the rename aside and the end of the delete): remove them again.  Each
 * name carries the incarnation id, so no live topic is ever in there. */
static int redrive_trash(struct kaas_topics *t)
{
	struct kaas_dirlist l = { 0 };
	int rc = kaas_sub_list(t->data, TRASH_DIR, &l);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < l.n && rc >= 0; i++) {
		struct removal *r = calloc(1, sizeof(*r));
		if (!r || !(r->trash_path = kaas_path_join(TRASH_DIR, l.names[i]))) {
			free(r);
			rc = -ENOMEM;
			break;
		}
		r->t = t;
		kaas_info("re-driving the removal of %s", r->trash_path);
		struct kaas_converge_opts o = { .max_attempts = 5 };
		if (kaas_converge(removal_step, r, &o) == 0) {
			removal_free(r);
			continue;
		}
		char what[300];
		snprintf(what, sizeof(what), "remove %s", r->trash_path);
		if (kaas_pending_add(&t->pending, what, removal_step, r, removal_free) < 0) {
			removal_free(r);
			rc = -ENOMEM;
		}
	}
	kaas_dirlist_free(&l);
	return rc;
}

/* Claim this incarnation's leader epoch: the next one above every claimed
 * <cluster>/leader-epochs/epoch-<n>, through the one fencing primitive
 * (contract/epoch_fence.h), so every start of any broker writes with an
 * epoch above every earlier one and an older incarnation still running is
 * fenced by the logs. */
static int claim_epoch(struct kaas_topics *t)
{
	uint64_t won = 0;
	int rc = kaas_fence_claim_next(t->cluster, EPOCH_DIR, "kaasd", &won);
	if (rc < 0)
		return rc;
	if (won > UINT32_MAX)
		return -EOVERFLOW;
	t->epoch = (uint32_t)won;
	kaas_info("leader epoch %u claimed", t->epoch);
	return 0;
}

int kaas_topics_open(struct kaas_substrate *data, struct kaas_substrate *cluster,
		     kaas_log_notify_cb notify, void *arg, struct kaas_topics **out)
{
	return kaas_topics_open_leased(data, cluster, NULL, NULL, notify, arg, out);
}

int kaas_topics_open_leased(struct kaas_substrate *data, struct kaas_substrate *cluster,
			    kaas_lease_fn lease, void *lease_arg, kaas_log_notify_cb notify,
			    void *arg, struct kaas_topics **out)
{
	struct kaas_topics *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->data = data;
	t->cluster = cluster;
	t->notify = notify;
	t->notify_arg = arg;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	pthread_mutex_init(&t->admin_mu, NULL);
	t->lease = lease;
	t->lease_arg = lease_arg;
	int rc = lease ? 0 : claim_epoch(t);
	if (rc >= 0)
		rc = kaas_sub_mkdirs(cluster, "topics", 0755);
	struct kaas_dirlist l = { 0 };
	if (rc >= 0)
		rc = kaas_sub_list(cluster, "topics", &l);
	if (rc >= 0)
		(void)kaas_sweep_temps(cluster, "topics", KAAS_SWEEP_DEAD_LOCAL);
	for (size_t i = 0; rc >= 0 && i < l.n; i++)
		rc = load_one(t, l.names[i]);
	kaas_dirlist_free(&l);
	if (rc >= 0)
		rc = redrive_trash(t);
	if (rc < 0) {
		kaas_error("loading topics failed: %s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
		kaas_topics_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

void kaas_topics_close(struct kaas_topics *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		topic_free(t->v[i]);
	free(t->v);
	if (t->pending.count)
		kaas_warn("%zu removal(s) unfinished at shutdown; the next start re-drives them",
			  t->pending.count);
	kaas_pending_clear(&t->pending);
	free(t->stuck);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->admin_mu);
	free(t);
}

struct kaas_topic *kaas_topics_get(struct kaas_topics *t, const char *name, int len)
{
	pthread_mutex_lock(&t->mu);
	struct kaas_topic *tp = find_locked(t, name, len);
	if (tp && !tp->deleting)
		tp->refs++;
	else
		tp = NULL;
	pthread_mutex_unlock(&t->mu);
	return tp;
}

int kaas_topics_on_volume(struct kaas_topics *t, const char *name)
{
	struct topic_doc d;
	int rc = read_topic_doc(t, name, &d);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : !d.deleting;
}

void kaas_topic_put(struct kaas_topic *tp)
{
	if (!tp)
		return;
	struct kaas_topics *t = tp->reg;
	pthread_mutex_lock(&t->mu);
	tp->refs--;
	/* Deletes wait for 1 reference, growth and re-opens for 2. */
	if (tp->refs <= 2)
		pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

struct kaas_topic **kaas_topics_list(struct kaas_topics *t, int *n)
{
	pthread_mutex_lock(&t->mu);
	struct kaas_topic **v = malloc(sizeof(*v) * (size_t)(t->n + 1));
	int k = 0;
	for (int i = 0; v && i < t->n; i++)
		if (!t->v[i]->deleting) {
			t->v[i]->refs++;
			v[k++] = t->v[i];
		}
	pthread_mutex_unlock(&t->mu);
	*n = k;
	return v;
}

/* Wait (bounded by CREATE_WAIT_MS) for the document of incarnation `inc`
 * (or a later one) of `name`, which the creator that won its claim writes
 * next: 0 and *d, -ETIMEDOUT when it did not appear, or -errno (-EBADMSG:
 * a damaged document, never abandoned nor created over). */
static int await_doc(struct kaas_topics *t, const char *name, uint64_t inc, struct topic_doc *d)
{
	uint64_t end = kaas_mono_ms() + CREATE_WAIT_MS;
	for (;;) {
		int rc = read_topic_doc(t, name, d);
		if (rc == 0 && d->inc >= inc)
			return 0;
		if (rc < 0 && rc != -ENOENT)
			return rc; /* -EBADMSG too: a damaged document is never created over */
		if (kaas_mono_ms() >= end)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void adopt_new(struct kaas_topics *t, const char *name, const struct topic_doc *d);
static void unlist_topic(struct kaas_topics *t, struct kaas_topic *tp);

/* Create incarnation `inc` of `tp->name` as its claimed creator: document
 * (desired state), directory stamp, logs.  0 or -errno. */
static int create_claimed(struct kaas_topics *t, struct kaas_topic *tp, uint64_t inc)
{
	/* A creator that waited for us in vain may have abandoned our claim
	 * (marked it over): then we must not write. */
	int rc = inc_over(t, tp->name, inc);
	if (rc != 0)
		return rc < 0 ? rc : kaas_sub_fail(KAAS_EFENCED, "topic %s: incarnation %llu was "
						   "abandoned by another creator", tp->name,
						   (unsigned long long)inc);
	rc = write_topic_doc(t, tp->name, tp->id, inc, tp->npart, 0);
	if (rc >= 0 && inc_over(t, tp->name, inc) == 1) {
		/* Abandoned while we wrote (a pause of CREATE_WAIT_MS between the
		 * check above and the rename): our document may stand over the
		 * next incarnation's.  Not listed here; its directory is never
		 * reclaimed for us (a newer stamp), an operator looks. */
		kaas_error("topic %s: incarnation %llu was abandoned while its document was "
			   "written; the next incarnation's document may be overwritten", tp->name,
			   (unsigned long long)inc);
		return kaas_sub_fail(KAAS_EFENCED, "topic %s: incarnation abandoned", tp->name);
	}
	if (rc >= 0) {
		rc = stamp_dir(t, tp->name, tp->id, inc, 1);
		if (rc < 0)
			kaas_error("topic %s: stamping its directory failed: %s (%s)", tp->name,
				   kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (rc >= 0)
		rc = open_partitions(t, tp, tp->npart);
	return rc;
}

int kaas_topics_create(struct kaas_topics *t, const char *name, int32_t npart, int validate_only,
		       const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	int len = (int)strlen(name);
	if (!kaas_topic_name_valid(name, len)) {
		*why = "topic names are 1-249 characters of [a-zA-Z0-9._-], not '.' or '..'";
		return KAAS_KERR_INVALID_TOPIC_EXCEPTION;
	}
	if (npart < 1 || npart > MAX_PARTITIONS) {
		*why = "number of partitions must be between 1 and 100000";
		return KAAS_KERR_INVALID_PARTITIONS;
	}
	pthread_mutex_lock(&t->admin_mu);
	pthread_mutex_lock(&t->mu);
	int exists = find_locked(t, name, len) != NULL;
	pthread_mutex_unlock(&t->mu);
	if (exists) {
		pthread_mutex_unlock(&t->admin_mu);
		*why = "topic already exists";
		return KAAS_KERR_TOPIC_ALREADY_EXISTS;
	}
	struct kaas_topic *tp = NULL;
	int kerr = 0;
	/* At most three rounds: a lost claim whose winner never wrote its
	 * document is abandoned, then the next incarnation is claimed. */
	for (int round = 0; round < 3 && !kerr; round++) {
		/* The latest incarnation claimed, read BEFORE the document: a
		 * creator that wins between the two reads then shows up as a lost
		 * claim below, never as a free name. */
		uint64_t latest = 0;
		int rc = inc_latest(t, name, &latest);
		struct topic_doc d;
		int drc = rc < 0 ? rc : read_topic_doc(t, name, &d);
		if (drc != -ENOENT) {
			/* Another broker may have created it (or be deleting it)
			 * before our reconcile listed it: the document is the truth,
			 * never replaced. */
			*why = drc < 0 ? "the topic document is unreadable"
			       : d.deleting ? "the topic is being deleted"
					    : "topic already exists";
			kerr = drc < 0 && drc != -EBADMSG ? KAAS_KERR_KAFKA_STORAGE_ERROR
							  : KAAS_KERR_TOPIC_ALREADY_EXISTS;
			break;
		}
		if (validate_only)
			break;
		kaas_step("topics.create.before-doc-write");
		if (!tp && (!(tp = calloc(1, sizeof(*tp))) || !(tp->name = strdup(name)) ||
			    getrandom(tp->id, sizeof(tp->id), 0) != (ssize_t)sizeof(tp->id))) {
			kerr = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			break;
		}
		tp->npart = npart;
		/* Incarnation latest+1 is free to claim once `latest` is over
		 * (deleted, abandoned, or none); exactly one creator wins it. */
		int over = inc_over(t, name, latest);
		uint64_t theirs = over == 1 ? latest + 1 : latest;
		rc = over < 0 ? over : over ? inc_claim(t, name, latest + 1, tp->id) : -EEXIST;
		if (rc == 0) {
			tp->incarnation = latest + 1;
			rc = create_claimed(t, tp, tp->incarnation);
			if (rc < 0) {
				*why = "storage error creating the topic";
				kerr = KAAS_KERR_KAFKA_STORAGE_ERROR;
			}
			break;
		}
		if (rc != -EEXIST) {
			*why = "storage error creating the topic";
			kerr = KAAS_KERR_KAFKA_STORAGE_ERROR;
			break;
		}
		/* Another creator owns incarnation `theirs`: its id is the topic's.
		 * List it now (an auto-create then simply uses it). */
		rc = await_doc(t, name, theirs, &d);
		if (rc == 0) {
			if (!d.deleting)
				adopt_new(t, name, &d);
			*why = d.deleting ? "the topic is being deleted"
					  : "topic already exists (created concurrently elsewhere)";
			kerr = KAAS_KERR_TOPIC_ALREADY_EXISTS;
			break;
		}
		if (rc != -ETIMEDOUT) {
			*why = "the topic document is unreadable";
			kerr = KAAS_KERR_KAFKA_STORAGE_ERROR;
			break;
		}
		kaas_warn("topic %s: incarnation %llu was claimed but its document did not appear "
			  "within %d ms; abandoning it", name, (unsigned long long)theirs,
			  CREATE_WAIT_MS);
		if (inc_mark_over(t, name, theirs) < 0) {
			*why = "storage error creating the topic";
			kerr = KAAS_KERR_KAFKA_STORAGE_ERROR;
		}
	}
	if (kerr || validate_only || !tp || !tp->parts) {
		if (!kerr && !validate_only) {
			*why = "another broker keeps claiming the topic's incarnations";
			kerr = KAAS_KERR_REQUEST_TIMED_OUT;
		}
		topic_free(tp);
		pthread_mutex_unlock(&t->admin_mu);
		return kerr;
	}
	pthread_mutex_lock(&t->mu);
	int rc = registry_add(t, tp);
	pthread_mutex_unlock(&t->mu);
	pthread_mutex_unlock(&t->admin_mu);
	if (rc < 0) {
		topic_free(tp);
		return KAAS_KERR_UNKNOWN_SERVER_ERROR;
	}
	kaas_info("topic %s: created with %d partition(s), incarnation %llu", name, npart,
		  (unsigned long long)tp->incarnation);
	return 0;
}

/* Rewrite the document of listed incarnation `tp` (grow, or mark it
 * deleting) only while the document still names it and is not marked
 * deleting: re-read right before the replace, since the registry's view
 * may be stale (another broker deleted it, or deleted and re-created the
 * name).  The replace is a rename and cannot itself be conditional; the
 * only way a newer incarnation's document can appear under the name is
 * after this incarnation was marked over (removal_step), so that marker is
 * checked just before the rename and again after it (a hit after it means
 * a pause of the whole delete-and-create length inside this function;
 * reported loudly).  0, KAAS_EFENCED (nothing written: another incarnation owns the name), or -errno. */
static int rewrite_topic_doc(struct kaas_topics *t, const struct kaas_topic *tp, int32_t np,
			     int deleting)
{
	struct topic_doc d;
	int rc = read_topic_doc(t, tp->name, &d);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == -ENOENT || memcmp(d.id, tp->id, 16) != 0 || d.deleting)
		return kaas_sub_fail(KAAS_EFENCED, "topic %s: deleted or re-created elsewhere", tp->name);
	kaas_step("topics.doc.before-rewrite");
	rc = d.inc ? inc_over(t, tp->name, d.inc) : 0;
	if (rc != 0)
		return rc < 0 ? rc : kaas_sub_fail(KAAS_EFENCED, "topic %s: deleted elsewhere", tp->name);
	rc = write_topic_doc(t, tp->name, tp->id, d.inc, np, deleting);
	if (rc == 0 && d.inc && inc_over(t, tp->name, d.inc) == 1)
		kaas_error("topic %s: incarnation %llu was deleted elsewhere while this broker "
			   "rewrote its document; a newer incarnation's document may be overwritten",
			   tp->name, (unsigned long long)d.inc);
	return rc;
}

/* Mark a listed topic deleting (no new references), wait until only the
 * registry's own reference is left, and take it off the list; the caller
 * frees it.  Caller holds admin_mu and no reference. */
static void detach_topic(struct kaas_topics *t, struct kaas_topic *tp)
{
	pthread_mutex_lock(&t->mu);
	tp->deleting = 1;
	while (tp->refs > 1)
		pthread_cond_wait(&t->cv, &t->mu);
	for (int i = 0; i < t->n; i++)
		if (t->v[i] == tp) {
			t->v[i] = t->v[--t->n];
			break;
		}
	pthread_mutex_unlock(&t->mu);
}

int kaas_topics_delete(struct kaas_topics *t, const char *name)
{
	int len = (int)strlen(name);
	if (!kaas_topic_name_valid(name, len))
		return KAAS_KERR_INVALID_TOPIC_EXCEPTION;
	pthread_mutex_lock(&t->admin_mu);
	pthread_mutex_lock(&t->mu);
	struct kaas_topic *tp = find_locked(t, name, len);
	if (!tp || tp->deleting) {
		pthread_mutex_unlock(&t->mu);
		pthread_mutex_unlock(&t->admin_mu);
		return KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	}
	if (tp->offline) {
		pthread_mutex_unlock(&t->mu);
		pthread_mutex_unlock(&t->admin_mu);
		kaas_warn("topic %s: offline (damaged document); not deleting through the API", name);
		return KAAS_KERR_KAFKA_STORAGE_ERROR;
	}
	pthread_mutex_unlock(&t->mu);
	int rc = rewrite_topic_doc(t, tp, tp->npart, 1);
	if (rc == KAAS_EFENCED) {
		/* Our view was stale: that incarnation is gone (or going)
		 * elsewhere.  Unlist it here; never touch the name's new owner. */
		kaas_warn("topic %s: not deleting: %s", name, kaas_sub_errdetail());
		unlist_topic(t, tp);
		pthread_mutex_unlock(&t->admin_mu);
		return KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	}
	if (rc < 0) {
		pthread_mutex_unlock(&t->admin_mu);
		return KAAS_KERR_KAFKA_STORAGE_ERROR;
	}
	/* Unlist it, wait for in-flight users, close its logs. */
	detach_topic(t, tp);
	uint8_t id[16];
	memcpy(id, tp->id, 16);
	uint64_t inc = tp->incarnation;
	topic_free(tp);
	/* Other brokers leading its partitions close them first. */
	if (t->before_remove)
		t->before_remove(t->before_remove_arg, name);
	rc = reclaim_dir(t, name, id, inc, 1);
	pthread_mutex_unlock(&t->admin_mu);
	if (rc < 0)
		kaas_error("topic %s: deletion incomplete (%s); it resumes at the next start", name,
			   kaas_strerror(rc));
	else
		kaas_info("topic %s: deleted", name);
	return 0;
}

int kaas_topics_add_partitions(struct kaas_topics *t, const char *name, int32_t count,
			       int validate_only, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	int len = (int)strlen(name);
	if (!kaas_topic_name_valid(name, len))
		return KAAS_KERR_INVALID_TOPIC_EXCEPTION;
	pthread_mutex_lock(&t->admin_mu);
	struct kaas_topic *tp = kaas_topics_get(t, name, len);
	int rc = 0;
	if (!tp) {
		rc = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
	} else if (tp->offline) {
		*why = "the topic is offline (damaged document)";
		rc = KAAS_KERR_KAFKA_STORAGE_ERROR;
	} else if (count <= tp->npart || count > MAX_PARTITIONS) {
		*why = "the new partition count must be above the current one";
		rc = KAAS_KERR_INVALID_PARTITIONS;
	} else if (!validate_only) {
		/* The document first (desired state), then the new logs. */
		int wrc = rewrite_topic_doc(t, tp, count, 0);
		if (wrc == KAAS_EFENCED) {
			*why = "the topic was deleted or re-created elsewhere";
			rc = KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION;
		} else if (wrc < 0) {
			rc = KAAS_KERR_KAFKA_STORAGE_ERROR;
		} else {
			/* Open the new logs outside the registry lock, then swap the
			 * array in once no one else is using the topic. */
			int32_t old = tp->npart;
			struct kaas_partition *np = calloc((size_t)count, sizeof(*np));
			if (!np) {
				rc = KAAS_KERR_UNKNOWN_SERVER_ERROR;
			} else {
				memcpy(np, tp->parts, sizeof(*np) * (size_t)old);
				open_range(t, tp, np, old, count);
				pthread_mutex_lock(&t->mu);
				while (tp->refs > 2)
					pthread_cond_wait(&t->cv, &t->mu);
				struct kaas_partition *prev = tp->parts;
				tp->parts = np;
				tp->npart = count;
				pthread_mutex_unlock(&t->mu);
				free(prev);
			}
			if (rc == 0)
				kaas_info("topic %s: grown to %d partitions", name, count);
		}
	}
	kaas_topic_put(tp);
	pthread_mutex_unlock(&t->admin_mu);
	return rc;
}

size_t kaas_topics_housekeep(struct kaas_topics *t)
{
	pthread_mutex_lock(&t->admin_mu);
	size_t n = t->pending.count ? kaas_pending_drive(&t->pending) : 0;
	n += reopen_failed_locked(t);
	pthread_mutex_unlock(&t->admin_mu);
	return n;
}

/* ------------------------------------------------------------ reconcile */

/* Read topic document `name`: 0 and *d, -ENOENT, -EBADMSG (malformed) or
 * -errno. */
static int read_topic_doc(struct kaas_topics *t, const char *name, struct topic_doc *d)
{
	memset(d, 0, sizeof(*d));
	char *path = doc_path(name);
	if (!path)
		return -ENOMEM;
	cJSON *body = NULL;
	int ver;
	int rc = read_doc(t->cluster, path, TOPIC_DOC_KIND, 1, &body, &ver);
	free(path);
	if (rc < 0)
		return rc;
	cJSON *idj = cJSON_GetObjectItemCaseSensitive(body, "id");
	int irc = kaas_json_get_u64(body, "incarnation", &d->inc);
	int bad = !cJSON_IsString(idj) || id_parse(idj->valuestring, d->id) < 0 ||
		  kaas_json_get_i64(body, "partitions", &d->np) < 0 || d->np < 1 ||
		  d->np > MAX_PARTITIONS || (irc < 0 && irc != -ENOENT);
	if (irc == -ENOENT)
		d->inc = 0;
	d->deleting = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "deleting"));
	cJSON_Delete(body);
	return bad ? -EBADMSG : 0;
}

/* The directory's stamp: 1 it names `id`, 0 unstamped, 2 another id,
 * -errno. */
static int stamp_state(struct kaas_topics *t, const char *name, const uint8_t id[16])
{
	char path[300];
	snprintf(path, sizeof(path), "%s/.topic-id.json", name);
	cJSON *body = NULL;
	int ver;
	int rc = read_doc(t->data, path, TOPIC_ID_KIND, 1, &body, &ver);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	uint8_t old[16];
	cJSON *idj = cJSON_GetObjectItemCaseSensitive(body, "id");
	int ok = cJSON_IsString(idj) && id_parse(idj->valuestring, old) == 0;
	cJSON_Delete(body);
	if (!ok)
		return -EBADMSG;
	return memcmp(old, id, 16) == 0 ? 1 : 2;
}

/* Close and unlist a topic another broker deleted or replaced.  Caller
 * holds admin_mu and no reference. */
static void unlist_topic(struct kaas_topics *t, struct kaas_topic *tp)
{
	detach_topic(t, tp);
	kaas_info("topic %s: deleted or replaced elsewhere; closed here", tp->name);
	topic_free(tp);
}

/* Grow a listed topic to `count` partitions (another broker grew it). */
static void grow_listed(struct kaas_topics *t, struct kaas_topic *tp, int32_t count)
{
	struct kaas_partition *np = calloc((size_t)count, sizeof(*np));
	if (!np)
		return;
	pthread_mutex_lock(&t->mu);
	tp->refs++;
	while (tp->refs > 2)
		pthread_cond_wait(&t->cv, &t->mu);
	int32_t old = tp->npart;
	memcpy(np, tp->parts, sizeof(*np) * (size_t)old);
	pthread_mutex_unlock(&t->mu);
	open_range(t, tp, np, old, count);
	pthread_mutex_lock(&t->mu);
	while (tp->refs > 2)
		pthread_cond_wait(&t->cv, &t->mu);
	struct kaas_partition *prev = tp->parts;
	tp->parts = np;
	tp->npart = count;
	pthread_mutex_unlock(&t->mu);
	free(prev);
	kaas_topic_put(tp);
	kaas_info("topic %s: grown to %d partitions elsewhere", tp->name, count);
}

/* The entry for (name, id, kind) in t->stuck, created (since now) if new,
 * and marked seen this round; NULL when out of memory. */
static struct stuck_delete *stuck_note(struct kaas_topics *t, const char *name,
				       const uint8_t id[16], int foreign)
{
	struct stuck_delete *s = NULL;
	for (size_t i = 0; i < t->nstuck && !s; i++)
		if (strcmp(t->stuck[i].name, name) == 0 && memcmp(t->stuck[i].id, id, 16) == 0 &&
		    t->stuck[i].foreign == foreign)
			s = &t->stuck[i];
	if (!s) {
		struct stuck_delete *v = realloc(t->stuck, sizeof(*v) * (t->nstuck + 1));
		if (!v)
			return NULL;
		t->stuck = v;
		s = &t->stuck[t->nstuck++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", name);
		memcpy(s->id, id, 16);
		s->foreign = foreign;
		s->since = kaas_mono_ms();
	}
	s->seen = 1;
	return s;
}

/* List a topic another broker created (incarnation *d). */
static void adopt_new(struct kaas_topics *t, const char *name, const struct topic_doc *d)
{
	int st = stamp_state(t, name, d->id);
	if (st < 0)
		return; /* retried at the next reconcile */
	if (st != 1) {
		/* Unstamped, or stamped by another incarnation: an earlier one,
		 * unless our reading of the document is the old one.  Re-read it:
		 * a newer incarnation writes its document before its stamp. */
		struct topic_doc again;
		if (read_topic_doc(t, name, &again) < 0 || again.deleting ||
		    memcmp(again.id, d->id, 16) != 0)
			return;
	}
	/* Another incarnation's stamp is its creator's to reclaim (two
	 * reclaimers would race: one could rename aside the directory the
	 * other just stamped).  Only when it stays that way for
	 * STUCK_DELETE_MS (the creator died before stamping) is it taken over
	 * here. */
	int may_reclaim = 0;
	if (st == 2) {
		struct stuck_delete *s = stuck_note(t, name, d->id, 1);
		if (!s || kaas_mono_ms() - s->since < STUCK_DELETE_MS)
			return;
		kaas_warn("topic %s: its directory is still stamped by another incarnation after "
			  "%d s; reclaiming it here", name, STUCK_DELETE_MS / 1000);
		may_reclaim = 1;
	}
	int rc = st == 1 ? 0 : stamp_dir(t, name, d->id, d->inc, may_reclaim);
	if (rc < 0) {
		kaas_warn("topic %s: stamping its directory failed: %s (%s); retrying", name,
			  kaas_strerror(rc), kaas_sub_errdetail());
		return;
	}
	struct kaas_topic *tp = calloc(1, sizeof(*tp));
	if (!tp || !(tp->name = strdup(name))) {
		free(tp);
		return;
	}
	memcpy(tp->id, d->id, 16);
	tp->incarnation = d->inc;
	tp->npart = (int32_t)d->np;
	if (open_partitions(t, tp, tp->npart) < 0) {
		topic_free(tp);
		return;
	}
	pthread_mutex_lock(&t->mu);
	rc = registry_add(t, tp);
	pthread_mutex_unlock(&t->mu);
	if (rc < 0)
		topic_free(tp);
	else
		kaas_info("topic %s: listed (created elsewhere, %d partition(s))", name, tp->npart);
}

/* Re-drive a delete left half done by a broker that died: a document
 * marked deleting for STUCK_DELETE_MS is removed here (reclaim_dir is
 * idempotent, and removes the document only if it still names that
 * incarnation).  Caller holds admin_mu. */
static void note_deleting(struct kaas_topics *t, const char *name, const struct topic_doc *d)
{
	struct stuck_delete *s = stuck_note(t, name, d->id, 0);
	if (!s || s->driven || kaas_mono_ms() - s->since < STUCK_DELETE_MS)
		return;
	s->driven = 1;
	kaas_warn("topic %s: its delete has not finished for %d s; finishing it here", name,
		  STUCK_DELETE_MS / 1000);
	(void)reclaim_dir(t, name, d->id, d->inc, 1);
}

/* Forget entries whose document is no longer marked deleting. */
static void sweep_deleting(struct kaas_topics *t)
{
	size_t k = 0;
	for (size_t i = 0; i < t->nstuck; i++)
		if (t->stuck[i].seen) {
			t->stuck[i].seen = 0;
			t->stuck[k++] = t->stuck[i];
		}
	t->nstuck = k;
}

static int sync_docs(struct kaas_topics *t)
{
	struct kaas_dirlist l = { 0 };
	int rc = kaas_sub_list(t->cluster, "topics", &l);
	if (rc < 0)
		return rc;
	char **seen = calloc(l.n + 1, sizeof(*seen));
	size_t nseen = 0;
	for (size_t i = 0; seen && i < l.n; i++) {
		const char *file = l.names[i];
		size_t fl = strlen(file);
		if (fl < 6 || fl - 5 >= 256 || strcmp(file + fl - 5, ".json") != 0 ||
		    kaas_is_temp_name(file))
			continue;
		char name[256];
		memcpy(name, file, fl - 5);
		name[fl - 5] = '\0';
		if (!kaas_topic_name_valid(name, (int)strlen(name)))
			continue;
		struct topic_doc d;
		pthread_mutex_lock(&t->mu);
		struct kaas_topic *tp = find_locked(t, name, (int)strlen(name));
		pthread_mutex_unlock(&t->mu);
		int drc = read_topic_doc(t, name, &d);
		if (drc < 0) {
			if (tp)
				seen[nseen++] = tp->name; /* keep as it is; read again next round */
			continue;
		}
		if (tp && tp->offline) {
			/* Offline because its document or stamp could not be read or
			 * written earlier: it reads now, so it is listed afresh. */
			kaas_info("topic %s: its document reads again; bringing it online", name);
			detach_topic(t, tp);
			topic_free(tp);
			tp = NULL;
		}
		if (tp && (d.deleting || memcmp(tp->id, d.id, 16) != 0)) {
			unlist_topic(t, tp);
			tp = NULL;
		}
		if (d.deleting) {
			note_deleting(t, name, &d);
			continue;
		}
		if (tp) {
			if (d.np > tp->npart)
				grow_listed(t, tp, (int32_t)d.np);
			seen[nseen++] = tp->name;
			continue;
		}
		adopt_new(t, name, &d);
		pthread_mutex_lock(&t->mu);
		tp = find_locked(t, name, (int)strlen(name));
		pthread_mutex_unlock(&t->mu);
		if (tp)
			seen[nseen++] = tp->name;
	}
	/* Listed here but without a document any more: deleted elsewhere. */
	for (;;) {
		struct kaas_topic *gone = NULL;
		pthread_mutex_lock(&t->mu);
		for (int i = 0; seen && i < t->n && !gone; i++) {
			int found = 0;
			for (size_t k = 0; k < nseen && !found; k++)
				found = seen[k] == t->v[i]->name;
			if (!found)
				gone = t->v[i]; /* offline ones too: their document is gone */
		}
		pthread_mutex_unlock(&t->mu);
		if (!gone)
			break;
		unlist_topic(t, gone);
	}
	free(seen);
	kaas_dirlist_free(&l);
	sweep_deleting(t);
	return 0;
}

/* Bring one topic's open logs in line with the lease; returns how many
 * partitions of it this broker leads. */
static int lease_topic(struct kaas_topics *t, struct kaas_topic *tp)
{
	int led = 0;
	for (int32_t k = 0; k < tp->npart; k++) {
		uint32_t ep = 0;
		int want = t->lease(t->lease_arg, tp->name, k, &ep);
		struct kaas_partition *p = &tp->parts[k];
		int ok;
		if (want)
			/* A failed open is retried by housekeeping if the error
			 * is transient, else every 20th round here (a stale
			 * view of a newer leader's manifest, say). */
			ok = p->epoch == ep && p->open_err != KAAS_PART_NOT_LEADER &&
			     (p->log || (p->open_err && t->reconciles % 20 != 0));
		else
			ok = !p->log && p->open_err == KAAS_PART_NOT_LEADER;
		led += want;
		if (ok)
			continue;
		pthread_mutex_lock(&t->mu);
		while (tp->refs > 2)
			pthread_cond_wait(&t->cv, &t->mu);
		struct kaas_log *old = p->log;
		struct kaas_hw_token *tok = p->token;
		p->log = NULL;
		p->open_err = KAAS_PART_NOT_LEADER;
		pthread_mutex_unlock(&t->mu);
		if (old) {
			int rc = kaas_log_close(old);
			kaas_info("topic %s partition %d: closed (epoch %u)%s%s", tp->name, k,
				  p->epoch, rc < 0 ? ": " : "", rc < 0 ? kaas_strerror(rc) : "");
		}
		struct kaas_partition fresh;
		open_one(t, tp, k, &fresh, tok);
		if (fresh.log)
			kaas_info("topic %s partition %d: leading with epoch %u", tp->name, k,
				  fresh.epoch);
		pthread_mutex_lock(&t->mu);
		*p = fresh;
		pthread_mutex_unlock(&t->mu);
	}
	return led;
}

int kaas_topics_reconcile(struct kaas_topics *t)
{
	if (!t->lease)
		return -EINVAL;
	pthread_mutex_lock(&t->admin_mu);
	t->reconciles++;
	int rc = sync_docs(t);
	int n = 0;
	struct kaas_topic **v = kaas_topics_list(t, &n);
	int led = 0;
	for (int i = 0; v && i < n; i++) {
		if (!v[i]->offline)
			led += lease_topic(t, v[i]);
		kaas_topic_put(v[i]);
	}
	free(v);
	pthread_mutex_unlock(&t->admin_mu);
	return rc < 0 ? rc : led;
}
