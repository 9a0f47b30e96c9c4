/* The topic lifecycle against stale views and racing brokers (issue 13,
 * defects 2, 3, 7, 10): two registries over one directory stand for two
 * brokers; a registry opened without a lease keeps the view it loaded, so
 * it is the stale broker, and a step hook stops one of them at the named
 * step where the other must act. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "broker/topics.h"
#include "contract/contract.h"
#include "contract/doc.h"
#include "faultfs/model.h"
#include "faultfs/substrate.h"
#include "util/status.h"
#include "util/step.h"

struct env {
	char *dir;
	struct kaas_substrate *data, *cluster;
};

static struct kaas_substrate *open_view(struct env *e, const char *sub)
{
	char path[600];
	snprintf(path, sizeof path, "%s%s%s", e->dir, sub ? "/" : "", sub ? sub : "");
	struct kaas_substrate *s = NULL;
	assert_int_equal(kaas_substrate_open(path, &s), 0);
	return s;
}

static void env_open(struct env *e)
{
	memset(e, 0, sizeof *e);
	e->data = unit_open_tmp(&e->dir);
	assert_int_equal(kaas_sub_mkdirs(e->data, "__cluster", 0755), 0);
	e->cluster = open_view(e, "__cluster");
}

static void env_close(struct env *e)
{
	kaas_substrate_close(e->cluster);
	kaas_substrate_close(e->data);
	kaas_testdir_remove(e->dir);
}

/* One more "broker": its own substrate views of the same volume. */
static struct kaas_topics *broker(struct env *e, struct kaas_substrate **d,
				  struct kaas_substrate **c)
{
	*d = open_view(e, NULL);
	*c = open_view(e, "__cluster");
	struct kaas_topics *t = NULL;
	assert_int_equal(kaas_topics_open(*d, *c, NULL, NULL, &t), 0);
	return t;
}

static int exists(struct kaas_substrate *s, const char *path)
{
	struct kaas_stat st;
	return kaas_sub_stat(s, path, &st) == 0;
}

/* The id the topic document names (hex), or "" when there is none. */
static void doc_id(struct env *e, const char *name, char out[40], int *deleting)
{
	char path[300];
	snprintf(path, sizeof path, "topics/%s.json", name);
	cJSON *body = NULL;
	out[0] = '\0';
	*deleting = 0;
	if (kaas_doc_read(e->cluster, path, "topic", 1, &body, NULL) < 0)
		return;
	cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "id");
	snprintf(out, 40, "%s", cJSON_IsString(id) ? id->valuestring : "?");
	*deleting = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "deleting"));
	cJSON_Delete(body);
}

static void stamp_id(struct env *e, const char *name, char out[40])
{
	char path[300];
	snprintf(path, sizeof path, "%s/.topic-id.json", name);
	cJSON *body = NULL;
	out[0] = '\0';
	if (kaas_doc_read(e->data, path, "topic-id", 1, &body, NULL) < 0)
		return;
	cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "id");
	snprintf(out, 40, "%s", cJSON_IsString(id) ? id->valuestring : "?");
	cJSON_Delete(body);
}

static void listed_id(struct kaas_topics *t, const char *name, char out[40])
{
	out[0] = '\0';
	struct kaas_topic *tp = kaas_topics_get(t, name, (int)strlen(name));
	if (!tp)
		return;
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", tp->id[i]);
	kaas_topic_put(tp);
}

/* ------------------------------------------------ defect 2: creation race */

struct pause {
	const char *step;
	int armed;
	sem_t reached, resume;
};
static struct pause g_pause;
static __thread int g_paused_thread; /* set by the thread to stop */

static void pause_hook(void *arg, const char *name)
{
	struct pause *p = arg;
	if (p->armed && g_paused_thread && strcmp(name, p->step) == 0) {
		p->armed = 0;
		sem_post(&p->reached);
		sem_wait(&p->resume);
	}
}

struct create_call {
	struct kaas_topics *t;
	const char *name;
	int rc;
};

static void *create_thread(void *arg)
{
	struct create_call *c = arg;
	g_paused_thread = 1;
	c->rc = kaas_topics_create(c->t, c->name, 2, 0, NULL);
	return NULL;
}

/* Broker A reads "no such topic" and stops before writing; broker B creates
 * the topic meanwhile (its records acknowledged into its directory).  When
 * A goes on, exactly one incarnation exists: A answers
 * TOPIC_ALREADY_EXISTS, lists B's id, and B's directory is untouched.  (On
 * the old code A wrote its own id over B's document and renamed B's live
 * directory aside.) */
static void concurrent_create_yields_one_incarnation(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac, *bd, *bc;
	struct kaas_topics *a = broker(&e, &ad, &ac), *b = broker(&e, &bd, &bc);

	struct create_call ca = { a, "race", -100 };
	pthread_t th;
	sem_init(&g_pause.reached, 0, 0);
	sem_init(&g_pause.resume, 0, 0);
	g_pause.step = "topics.create.before-doc-write";
	g_pause.armed = 1;
	kaas_step_set_hook(pause_hook, &g_pause);
	assert_int_equal(pthread_create(&th, NULL, create_thread, &ca), 0);
	/* A reaches the step (or the race is not staged: fail, never pass
	 * vacuously). */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	assert_int_equal(sem_timedwait(&g_pause.reached, &dl), 0);

	assert_int_equal(kaas_topics_create(b, "race", 2, 0, NULL), 0);
	char bid[40];
	listed_id(b, "race", bid);
	assert_int_not_equal(strlen(bid), 0);
	/* B's "acknowledged data" in its directory. */
	unit_put(e.data, "race/0/acked-by-b", "x");

	sem_post(&g_pause.resume);
	pthread_join(th, NULL);
	kaas_step_set_hook(NULL, NULL);

	char did[40], sid[40], aid[40];
	int del;
	doc_id(&e, "race", did, &del);
	stamp_id(&e, "race", sid);
	listed_id(a, "race", aid);
	assert_true(exists(e.data, "race/0/acked-by-b"));
	assert_string_equal(did, bid);
	assert_false(del);
	assert_string_equal(sid, bid);
	assert_string_equal(aid, bid); /* A adopted the winner */
	assert_int_equal(ca.rc, KAAS_EEXISTS);

	kaas_topics_close(a);
	kaas_topics_close(b);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	kaas_substrate_close(bd), kaas_substrate_close(bc);
	env_close(&e);
}

/* -------------------------------- defect 10: stale read-modify-write */

/* A still lists incarnation 1; B deletes it and creates incarnation 2.
 * A's delete must not touch incarnation 2 (old code: it wrote "deleting"
 * with id 1 over 2's document and then removed that document). */
static void stale_delete_spares_new_incarnation(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac, *bd, *bc;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "sd", 1, 0, NULL), 0);
	struct kaas_topics *b = broker(&e, &bd, &bc);
	assert_int_equal(kaas_topics_delete(b, "sd"), 0);
	assert_int_equal(kaas_topics_create(b, "sd", 1, 0, NULL), 0);
	char bid[40];
	listed_id(b, "sd", bid);

	int rc = kaas_topics_delete(a, "sd");
	for (int i = 0; i < 5; i++)
		kaas_topics_housekeep(a);
	char did[40], sid[40];
	int del;
	doc_id(&e, "sd", did, &del);
	stamp_id(&e, "sd", sid);
	assert_string_equal(did, bid);
	assert_false(del);
	assert_string_equal(sid, bid);
	assert_int_equal(rc, KAAS_EUNKNOWN);

	kaas_topics_close(a);
	kaas_topics_close(b);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	kaas_substrate_close(bd), kaas_substrate_close(bc);
	env_close(&e);
}

/* A still lists the topic; B deletes it.  A's CreatePartitions must not
 * bring it back (old code: it rewrote the document, not deleting, and
 * re-created the directory for the new partitions). */
static void stale_grow_does_not_undo_delete(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac, *bd, *bc;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "gr", 1, 0, NULL), 0);
	struct kaas_topics *b = broker(&e, &bd, &bc);
	assert_int_equal(kaas_topics_delete(b, "gr"), 0);
	assert_false(exists(e.cluster, "topics/gr.json"));

	int rc = kaas_topics_add_partitions(a, "gr", 3, 0, NULL);
	assert_false(exists(e.cluster, "topics/gr.json"));
	assert_false(exists(e.data, "gr"));
	assert_int_equal(rc, KAAS_EUNKNOWN);

	kaas_topics_close(a);
	kaas_topics_close(b);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	kaas_substrate_close(bd), kaas_substrate_close(bc);
	env_close(&e);
}

/* ------------------------------- defect 10: rename_aside never finished */

/* .trash/<name>.<id> already exists (a removal of this incarnation was
 * interrupted, the name re-stamped): the delete still finishes (old code:
 * the rename aside failed with ENOTEMPTY at every attempt, for ever). */
static void leftover_trash_does_not_block_delete(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "lt", 1, 0, NULL), 0);
	char id[40], path[300];
	listed_id(a, "lt", id);
	snprintf(path, sizeof path, ".trash/lt.%s/0", id);
	assert_int_equal(kaas_sub_mkdirs(e.data, path, 0755), 0);
	snprintf(path, sizeof path, ".trash/lt.%s/0/old.log", id);
	unit_put(e.data, path, "leftover");

	assert_int_equal(kaas_topics_delete(a, "lt"), 0);
	for (int i = 0; i < 10 && kaas_topics_housekeep(a) > 0; i++)
		;
	assert_int_equal(kaas_topics_housekeep(a), 0);
	assert_false(exists(e.data, "lt"));
	snprintf(path, sizeof path, ".trash/lt.%s", id);
	assert_false(exists(e.data, path));
	assert_false(exists(e.cluster, "topics/lt.json"));

	kaas_topics_close(a);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	env_close(&e);
}

/* ----------------------------- defect 3: an open resurrects a directory */

/* A leads the partition; B deletes the topic.  A's housekeeping re-opens
 * its failed log: it must not re-create <topic>/<p> (old code: mkdir -p
 * made an unstamped "rz/0" that nothing reclaims). */
static void reopen_does_not_resurrect_deleted_topic(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac, *bd, *bc;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "rz", 1, 0, NULL), 0);
	struct kaas_topics *b = broker(&e, &bd, &bc);
	assert_int_equal(kaas_topics_delete(b, "rz"), 0);
	assert_false(exists(e.data, "rz"));

	struct kaas_topic *tp = kaas_topics_get(a, "rz", 2);
	assert_non_null(tp);
	kaas_partition_mark_failed(&tp->parts[0]);
	kaas_topic_put(tp);
	kaas_topics_housekeep(a);
	assert_false(exists(e.data, "rz/0"));
	assert_false(exists(e.data, "rz"));

	kaas_topics_close(a);
	kaas_topics_close(b);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	kaas_substrate_close(bd), kaas_substrate_close(bc);
	env_close(&e);
}

/* ------------------------------------- defect 7: offline is re-driven */

static int lease_all(void *arg, const char *topic, int32_t partition, uint32_t *epoch)
{
	(void)arg, (void)topic, (void)partition;
	*epoch = 1;
	return 1;
}

/* A topic whose document could not be read when the broker started (here:
 * damaged, then repaired) comes online at the next reconcile (old code:
 * offline for good, until a restart). */
static void offline_topic_is_retried(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "off", 1, 0, NULL), 0);
	kaas_topics_close(a);
	int rc;
	char *good = unit_get(e.cluster, "topics/off.json", &rc);
	assert_non_null(good);
	unit_put(e.cluster, "topics/off.json", "garbage");

	struct kaas_topics *l = NULL;
	assert_int_equal(kaas_topics_open_leased(ad, ac, lease_all, NULL, NULL, NULL, &l), 0);
	struct kaas_topic *tp = kaas_topics_get(l, "off", 3);
	assert_non_null(tp);
	assert_true(tp->offline);
	kaas_topic_put(tp);

	assert_int_equal(kaas_replace(e.cluster, "topics/off.json", good, strlen(good)), 0);
	free(good);
	assert_true(kaas_topics_reconcile(l) >= 0);
	tp = kaas_topics_get(l, "off", 3);
	assert_non_null(tp);
	assert_false(tp->offline);
	assert_int_equal(tp->npart, 1);
	assert_non_null(tp->parts[0].log);
	kaas_topic_put(tp);

	kaas_topics_close(l);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	env_close(&e);
}

/* The same with a real transient error: the one read of the document at
 * start fails with EIO (a faultfs rule on the in-process model); the next
 * reconcile lists the topic and opens its partition. */
static void transient_eio_at_start_is_retried(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "eio", 1, 0, NULL), 0);
	kaas_topics_close(a);
	kaas_substrate_close(ac);

	char url[700];
	snprintf(url, sizeof url, "fault+%s/__cluster?seed=1&host=0", e.dir);
	assert_int_equal(kaas_substrate_open(url, &ac), 0);
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(kaas_fault_substrate_model(ac),
					"{\"cmd\":\"set\",\"rule\":{\"op\":\"read\",\"path\":"
					"\"topics/eio.json\",\"times\":1,\"fault\":\"EIO\"}}",
					&reply), 0);
	free(reply);
	struct kaas_topics *l = NULL;
	assert_int_equal(kaas_topics_open_leased(ad, ac, lease_all, NULL, NULL, NULL, &l), 0);
	struct kaas_topic *tp = kaas_topics_get(l, "eio", 3);
	assert_non_null(tp);
	assert_true(tp->offline); /* the EIO was seen: the staging worked */
	kaas_topic_put(tp);

	assert_true(kaas_topics_reconcile(l) >= 0);
	tp = kaas_topics_get(l, "eio", 3);
	assert_non_null(tp);
	assert_false(tp->offline);
	assert_non_null(tp->parts[0].log);
	kaas_topic_put(tp);

	kaas_topics_close(l);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	env_close(&e);
}

/* ------------------------------------- reconcile's budget */

static int lease_if(void *arg, const char *topic, int32_t partition, uint32_t *epoch)
{
	(void)topic, (void)partition;
	*epoch = 1;
	return *(const int *)arg;
}

/* A broker granted many partitions at once opens them over several
 * reconcile rounds, each stopping after its budget (here 1 ms: the first
 * batch alone takes longer) and saying so, until all are open; a round
 * never opens everything at once. */
static void reconcile_opens_within_budget(void **state)
{
	(void)state;
	enum { NPART = 400 };
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad = open_view(&e, NULL), *ac = open_view(&e, "__cluster");
	int granted = 0;
	struct kaas_topics_opts o = { .data = ad, .cluster = ac, .lease = lease_if,
				      .lease_arg = &granted, .reconcile_budget_ms = 1 };
	struct kaas_topics *l = NULL;
	assert_int_equal(kaas_topics_open_opts(&o, &l), 0);
	assert_int_equal(kaas_topics_create(l, "many", NPART, 0, NULL), 0);
	assert_int_equal(kaas_topics_reconcile(l), 0);
	assert_int_equal(kaas_topics_reconcile_left(l), 0);

	granted = 1;
	assert_int_equal(kaas_topics_reconcile(l), NPART);
	assert_int_equal(kaas_topics_reconcile_left(l), 1);
	struct kaas_topic *tp = kaas_topics_get(l, "many", 4);
	assert_non_null(tp);
	int open = 0;
	for (int32_t k = 0; k < tp->npart; k++)
		open += tp->parts[k].log != NULL;
	assert_non_null(tp->parts[0].log); /* the lowest first */
	kaas_topic_put(tp);
	assert_true(open > 0 && open < NPART);

	int rounds = 1;
	while (kaas_topics_reconcile_left(l) && rounds < 1000) {
		assert_int_equal(kaas_topics_reconcile(l), NPART);
		rounds++;
	}
	assert_int_equal(kaas_topics_reconcile_left(l), 0);
	tp = kaas_topics_get(l, "many", 4);
	assert_non_null(tp);
	for (int32_t k = 0; k < tp->npart; k++) {
		assert_non_null(tp->parts[k].log);
		assert_int_equal(tp->parts[k].epoch, 1);
	}
	kaas_topic_put(tp);

	kaas_topics_close(l);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	env_close(&e);
}

/* ------------------------------------- exclusive use of a topic */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

struct grow_call {
	struct kaas_topics *t;
	int rc, done;
};

static void *grow_thread(void *arg)
{
	struct grow_call *g = arg;
	g->rc = kaas_topics_add_partitions(g->t, "gw", 3, 0, NULL);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Growing swaps the partition array only once no request holds the
 * topic (kaas_topic_wait_exclusive): a reference held here keeps the old
 * array in place, its put lets the growth finish. */
static void grow_waits_for_requests(void **state)
{
	(void)state;
	struct env e;
	env_open(&e);
	struct kaas_substrate *ad, *ac;
	struct kaas_topics *a = broker(&e, &ad, &ac);
	assert_int_equal(kaas_topics_create(a, "gw", 1, 0, NULL), 0);
	struct kaas_topic *tp = kaas_topics_get(a, "gw", 2);
	assert_non_null(tp);
	struct kaas_partition *before = tp->parts;

	struct grow_call g = { a, -1, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, grow_thread, &g), 0);
	/* The document is rewritten and the new logs opened; then it waits. */
	for (int i = 0; i < 500 && !exists(e.data, "gw/2"); i++)
		sleep_ms(10);
	assert_true(exists(e.data, "gw/2"));
	sleep_ms(200);
	assert_false(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE));
	assert_ptr_equal(tp->parts, before);
	assert_int_equal(tp->npart, 1);
	kaas_topic_put(tp);
	pthread_join(th, NULL);
	assert_int_equal(g.rc, 0);

	tp = kaas_topics_get(a, "gw", 2);
	assert_non_null(tp);
	assert_int_equal(tp->npart, 3);
	assert_non_null(tp->parts[0].log);
	assert_non_null(tp->parts[2].log);
	kaas_topic_put(tp);

	kaas_topics_close(a);
	kaas_substrate_close(ad), kaas_substrate_close(ac);
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(concurrent_create_yields_one_incarnation),
		cmocka_unit_test(stale_delete_spares_new_incarnation),
		cmocka_unit_test(stale_grow_does_not_undo_delete),
		cmocka_unit_test(leftover_trash_does_not_block_delete),
		cmocka_unit_test(reopen_does_not_resurrect_deleted_topic),
		cmocka_unit_test(offline_topic_is_retried),
		cmocka_unit_test(transient_eio_at_start_is_retried),
		cmocka_unit_test(grow_waits_for_requests),
		cmocka_unit_test(reconcile_opens_within_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
