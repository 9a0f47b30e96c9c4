/* Membership, controller claims, the assignment document and placement. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/assignment.h"
#include "cluster/membership.h"
#include "contract/doc.h"
#include "util/step.h"
#include "util/status.h"

static void heartbeats_and_liveness(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_broker_info b = {.id = 1, .port = 9092, .incarnation = 77, .counter = 1};
	snprintf(b.host, sizeof b.host, "127.0.0.1");
	assert_int_equal(kaas_broker_publish(s, &b), 0);
	b.id = 2;
	b.incarnation = 1ull << 60; /* beyond 2^53: kept exactly */
	assert_int_equal(kaas_broker_publish(s, &b), 0);
	unit_put(s, "brokers/3.json", "torn");
	struct kaas_broker_info *list;
	size_t n, skipped;
	assert_int_equal(kaas_broker_list(s, &list, &n, &skipped), 0);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 1);
	assert_true(list[1].incarnation == 1ull << 60 || list[0].incarnation == 1ull << 60);

	struct kaas_liveness lv = {.timeout_ms = 1000};
	assert_int_equal(kaas_liveness_observe(&lv, list, n, 10000), 0);
	assert_true(kaas_liveness_alive(&lv, 1, 10500)); /* first sight: a full timeout of grace */
	assert_false(kaas_liveness_alive(&lv, 3, 10500));
	/* Broker 1 keeps beating, broker 2 stalls. */
	for (size_t i = 0; i < n; i++)
		if (list[i].id == 1)
			list[i].counter = 2;
	assert_int_equal(kaas_liveness_observe(&lv, list, n, 10900), 0);
	assert_true(kaas_liveness_alive(&lv, 1, 11500));
	assert_false(kaas_liveness_alive(&lv, 2, 11500));
	int32_t ids[8];
	assert_int_equal(kaas_liveness_alive_ids(&lv, 11500, ids, 8), 1);
	assert_int_equal(ids[0], 1);
	/* Broker 2 restarts with a new incarnation and counter 1: alive again. */
	for (size_t i = 0; i < n; i++)
		if (list[i].id == 2) {
			list[i].incarnation = 5;
			list[i].counter = 1;
		}
	assert_int_equal(kaas_liveness_observe(&lv, list, n, 12000), 0);
	assert_true(kaas_liveness_alive(&lv, 2, 12100));
	/* A broker whose document vanished is not alive. */
	assert_int_equal(kaas_liveness_observe(&lv, list, 1, 12200), 0);
	assert_false(kaas_liveness_alive(&lv, list[1].id, 12300));
	kaas_liveness_free(&lv);
	free(list);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void one_controller_per_epoch(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	enum { PROCS = 4, ROUNDS = 25 };
	int fds[PROCS][2];
	pid_t kids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		assert_int_equal(pipe(fds[p]), 0);
		kids[p] = fork();
		if (kids[p] == 0) {
			struct kaas_substrate *mine;
			if (kaas_substrate_open(dir, &mine) < 0)
				_exit(1);
			uint64_t won[ROUNDS * 4];
			unsigned k = 0;
			for (int r = 0; r < ROUNDS; r++) {
				uint64_t w;
				int rc = kaas_controller_claim_next(mine, &w);
				if (rc == 0)
					won[k++] = w;
				else if (rc != -EEXIST)
					_exit(2);
			}
			if (write(fds[p][1], &k, sizeof k) != sizeof k ||
			    write(fds[p][1], won, k * sizeof *won) != (ssize_t)(k * sizeof *won))
				_exit(3);
			_exit(0);
		}
		close(fds[p][1]);
	}
	unsigned char seen[PROCS * ROUNDS + 2] = {0};
	unsigned total = 0;
	for (int p = 0; p < PROCS; p++) {
		unsigned k;
		assert_int_equal(read(fds[p][0], &k, sizeof k), sizeof k);
		uint64_t won[ROUNDS * 4];
		size_t got = 0;
		while (got < k * sizeof *won) {
			ssize_t r = read(fds[p][0], (char *)won + got, k * sizeof *won - got);
			assert_true(r > 0);
			got += (size_t)r;
		}
		for (unsigned i = 0; i < k; i++) {
			assert_true(won[i] >= 1 && won[i] <= PROCS * ROUNDS);
			assert_int_equal(seen[won[i]]++, 0); /* never two winners */
		}
		total += k;
		int st;
		waitpid(kids[p], &st, 0);
		assert_int_equal(WEXITSTATUS(st), 0);
		close(fds[p][0]);
	}
	uint64_t latest;
	assert_int_equal(kaas_controller_latest(s, &latest), 0);
	assert_int_equal(latest, total); /* dense: every epoch 1..latest has one owner */
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void stale_assignment_is_ignored_and_fenced(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	uint64_t e1, e2;
	assert_int_equal(kaas_controller_claim_next(s, &e1), 0);
	struct kaas_assign_entry slot = {.topic = "t", .partition = 0, .leader = 1, .leader_epoch = 1};
	struct kaas_assignment a = {.controller_epoch = e1, .version = 1, .n = 1, .e = &slot};
	assert_int_equal(kaas_assignment_write(s, &a), 0);
	struct kaas_assignment r;
	int current;
	assert_int_equal(kaas_assignment_read(s, &r, &current), 0);
	assert_true(current);
	assert_int_equal(kaas_assignment_find(&r, "t", 0)->leader, 1);
	kaas_assignment_free(&r);
	/* A new controller claims epoch 2: the old assignment is stale, and the
	 * old controller can no longer write. */
	assert_int_equal(kaas_controller_claim_next(s, &e2), 0);
	assert_int_equal(kaas_assignment_read(s, &r, &current), 0);
	assert_false(current);
	kaas_assignment_free(&r);
	slot.leader = 9;
	assert_int_equal(kaas_assignment_write(s, &a), KAAS_EFENCED);
	assert_int_equal(kaas_assignment_read(s, &r, &current), 0);
	assert_int_equal(kaas_assignment_find(&r, "t", 0)->leader, 1);
	kaas_assignment_free(&r);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Issue 13, defect 1: controller A stops between its fence check and its
 * rename; controller B takes over and plans from the file A has not yet
 * replaced.  Both move t/0 to a new leader at "epoch 2": the epoch claims
 * give B a higher one, and A's late rename is reported fenced. */
struct takeover {
	struct kaas_substrate *b;
	int fired;
	uint32_t b_epoch;
	int b_rc;
};

static void b_takes_over(void *arg, const char *name)
{
	struct takeover *t = arg;
	if (strcmp(name, "controller.before-assignment-rename") != 0 || t->fired++)
		return;
	uint64_t e2;
	assert_int_equal(kaas_controller_claim_next(t->b, &e2), 0);
	struct kaas_assignment cur, next;
	assert_int_equal(kaas_assignment_read(t->b, &cur, NULL), 0);
	assert_int_equal(kaas_assignment_copy(&next, &cur), 0);
	next.controller_epoch = e2;
	next.version = cur.version + 1;
	next.e[0].leader = 3;
	next.e[0].leader_epoch++;
	t->b_rc = kaas_assignment_claim_epochs(t->b, &cur, &next, e2);
	if (t->b_rc >= 0)
		t->b_rc = kaas_assignment_write(t->b, &next);
	t->b_epoch = next.e[0].leader_epoch;
	kaas_assignment_free(&cur);
	kaas_assignment_free(&next);
}

static void paused_controller_never_shares_an_epoch(void **state)
{
	char *dir;
	struct kaas_substrate *a = unit_open_tmp(&dir), *b;
	assert_int_equal(kaas_substrate_open(dir, &b), 0);
	uint64_t e1;
	assert_int_equal(kaas_controller_claim_next(a, &e1), 0);
	struct kaas_assign_entry slot = {.topic = "t", .partition = 0, .leader = 1, .leader_epoch = 1};
	struct kaas_assignment none = { 0 };
	struct kaas_assignment v1 = {.controller_epoch = e1, .version = 1, .n = 1, .e = &slot};
	assert_int_equal(kaas_assignment_claim_epochs(a, &none, &v1, e1), 0);
	assert_int_equal(kaas_assignment_write(a, &v1), 0);
	/* A plans t/0 -> broker 2 at epoch 2, claims it, and stops. */
	struct kaas_assign_entry moved = slot;
	moved.leader = 2;
	moved.leader_epoch = 2;
	struct kaas_assignment v2 = {.controller_epoch = e1, .version = 2, .n = 1, .e = &moved};
	assert_int_equal(kaas_assignment_claim_epochs(a, &v1, &v2, e1), 0);
	struct takeover t = {.b = b};
	kaas_step_set_hook(b_takes_over, &t);
	int rc = kaas_assignment_write(a, &v2);
	kaas_step_set_hook(NULL, NULL);
	assert_true(t.fired >= 1); /* (B's own write passes the step too) */
	assert_int_equal(t.b_rc, 0);
	assert_int_equal(rc, KAAS_EFENCED); /* A's rename landed, and A knows it is fenced */
	/* B was given the next epoch above A's: never two leaders at one. */
	assert_int_equal(moved.leader_epoch, 2);
	assert_int_equal(t.b_epoch, 3);
	/* A stale plan can never hand out a claimed epoch again. */
	struct kaas_assign_entry again = moved;
	again.leader = 1;
	struct kaas_assignment v3 = {.controller_epoch = e1, .version = 3, .n = 1, .e = &again};
	assert_int_equal(kaas_assignment_claim_epochs(b, &v1, &v3, e1), 1);
	assert_int_equal(again.leader_epoch, 4);
	kaas_substrate_close(b);
	kaas_substrate_close(a);
	kaas_testdir_remove(dir);
}

/* Issue 33, defect 7a: two rare faults, made on purpose.  Controller A
 * hands t/0 to broker 3 at epoch 2 and claims it; its assignment write
 * lands, but the rename's reply is lost (faultfs lost_reply: ENOENT), so
 * A's last good plan stays t/0 -> 1 at epoch 1 (broker 3 meanwhile reads
 * the landed file and serves t/0 at 2).  A then re-plans from that (an
 * older controller's late rename, the second fault, makes it do so) and
 * picks broker 2.  Epoch 2 is held by A's process, but it was handed to
 * broker 3: handing it to broker 2 makes two leaders of one epoch.  The
 * same plan again (broker 3 at 2) keeps its epoch. */
static void lost_assignment_reply_never_rehands_an_epoch(void **state)
{
	(void)state;
	char *dir = kaas_testdir_make("assignlost");
	assert_non_null(dir);
	char cfg[600], url[1400];
	snprintf(cfg, sizeof cfg, "%s/rules.json", dir);
	FILE *f = fopen(cfg, "w");
	assert_non_null(f);
	/* The second rename of the assignment (the first is v1's). */
	fputs("{\"rules\":[{\"op\":\"rename\",\"path\":\"*assignment.json*\",\"after\":1,"
	      "\"times\":1,\"fault\":\"lost_reply\"}]}\n", f);
	fclose(f);
	struct kaas_substrate *a, *b;
	snprintf(url, sizeof url, "fault+%s?seed=5&host=1&config=%s", dir, cfg);
	assert_int_equal(kaas_substrate_open(url, &a), 0);
	snprintf(url, sizeof url, "fault+%s?seed=5&host=2", dir);
	assert_int_equal(kaas_substrate_open(url, &b), 0);
	uint64_t e1;
	assert_int_equal(kaas_controller_claim_next(a, &e1), 0);
	struct kaas_assign_entry slot = {.topic = "t", .partition = 0, .leader = 1, .leader_epoch = 1};
	struct kaas_assignment none = { 0 };
	struct kaas_assignment v1 = {.controller_epoch = e1, .version = 1, .n = 1, .e = &slot};
	assert_int_equal(kaas_assignment_claim_epochs(a, &none, &v1, e1), 0);
	assert_int_equal(kaas_assignment_write(a, &v1), 0);
	/* t/0 -> broker 3 at 2: claimed, written, the reply lost. */
	struct kaas_assign_entry to3 = slot;
	to3.leader = 3;
	to3.leader_epoch = 2;
	struct kaas_assignment v2 = {.controller_epoch = e1, .version = 2, .n = 1, .e = &to3};
	assert_int_equal(kaas_assignment_claim_epochs(a, &v1, &v2, e1), 0);
	assert_int_equal(to3.leader_epoch, 2);
	assert_true(kaas_assignment_write(a, &v2) < 0);
	/* It landed: broker 3 (another host) is told t/0 at epoch 2. */
	struct kaas_assignment seen;
	assert_int_equal(kaas_assignment_read(b, &seen, NULL), 0);
	const struct kaas_assign_entry *s3 = kaas_assignment_find(&seen, "t", 0);
	assert_non_null(s3);
	assert_int_equal(s3->leader, 3);
	assert_int_equal(s3->leader_epoch, 2);
	kaas_assignment_free(&seen);
	/* The same plan again (A retries what it thinks failed): epoch 2 kept. */
	struct kaas_assign_entry again3 = to3;
	struct kaas_assignment v2b = {.controller_epoch = e1, .version = 2, .n = 1, .e = &again3};
	assert_int_equal(kaas_assignment_claim_epochs(a, &v1, &v2b, e1), 0);
	assert_int_equal(again3.leader_epoch, 2);
	/* A re-plans from its last good plan (t/0 -> 1 at 1): broker 2 at 2.
	 * Epoch 2 is broker 3's: raised above it. */
	struct kaas_assign_entry to2 = slot;
	to2.leader = 2;
	to2.leader_epoch = 2;
	struct kaas_assignment v3 = {.controller_epoch = e1, .version = 3, .n = 1, .e = &to2};
	assert_int_equal(kaas_assignment_claim_epochs(a, &v1, &v3, e1), 1);
	assert_int_equal(to2.leader_epoch, 3);
	/* And broker 3 at 2 once more, after broker 2 was given 3: superseded. */
	struct kaas_assign_entry back3 = to3;
	struct kaas_assignment v4 = {.controller_epoch = e1, .version = 4, .n = 1, .e = &back3};
	assert_int_equal(kaas_assignment_claim_epochs(a, &v1, &v4, e1), 1);
	assert_int_equal(back3.leader_epoch, 4);
	kaas_substrate_close(b);
	kaas_substrate_close(a);
	kaas_testdir_remove(dir);
}

static size_t count_led(const struct kaas_assignment *a, int32_t id)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++)
		n += a->e[i].leader == id;
	return n;
}

static void placement_fails_over_and_rebalances_gradually(void **state)
{
	struct kaas_slot_want want[7] = {
		{"orders", 0}, {"orders", 1}, {"orders", 2}, {"orders", 3}, {"orders", 4}, {"orders", 5},
		{KAAS_COORDINATOR_TOPIC, 0},
	};
	struct kaas_assignment empty = {0}, a, b, c;
	int changed;
	int32_t three[] = {1, 2, 3}, two[] = {1, 3};
	assert_int_equal(kaas_assignment_plan(&empty, want, 7, three, 3, 1, 0, &a, &changed), 0);
	assert_true(changed);
	assert_int_equal(count_led(&a, 1), 3);
	assert_int_equal(count_led(&a, 2), 2);
	assert_int_equal(count_led(&a, 3), 2);
	for (size_t i = 0; i < a.n; i++)
		assert_int_equal(a.e[i].leader_epoch, 1);
	/* Nothing changes while everyone lives: no flapping. */
	assert_int_equal(kaas_assignment_plan(&a, want, 7, three, 3, 1, 4, &b, &changed), 0);
	assert_false(changed);
	assert_int_equal(b.version, a.version);
	kaas_assignment_free(&b);
	/* Broker 2 dies: only its slots move, with epoch + 1. */
	assert_int_equal(kaas_assignment_plan(&a, want, 7, two, 2, 1, 0, &b, &changed), 0);
	assert_true(changed);
	assert_int_equal(count_led(&b, 2), 0);
	for (size_t i = 0; i < b.n; i++) {
		if (a.e[i].leader == 2)
			assert_int_equal(b.e[i].leader_epoch, 2);
		else {
			assert_int_equal(b.e[i].leader, a.e[i].leader);
			assert_int_equal(b.e[i].leader_epoch, 1);
		}
	}
	/* Broker 2 returns: one move per round until balanced, then quiet. */
	unsigned rounds = 0;
	for (;;) {
		assert_int_equal(kaas_assignment_plan(&b, want, 7, three, 3, 1, 1, &c, &changed), 0);
		kaas_assignment_free(&b);
		b = c;
		if (!changed)
			break;
		assert_true(++rounds <= 3);
	}
	assert_int_equal(rounds, 2);
	assert_true(count_led(&b, 2) >= 2);
	/* Nobody alive: offline, epochs kept; a dropped slot disappears. */
	assert_int_equal(kaas_assignment_plan(&b, want, 6, NULL, 0, 1, 1, &c, &changed), 0);
	assert_true(changed);
	assert_int_equal(c.n, 6);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.e[i].leader, KAAS_NO_LEADER);
	kaas_assignment_free(&c);
	kaas_assignment_free(&b);
	kaas_assignment_free(&a);
}

/* Many slots: find (through the index the plan, copy and read build)
 * gives the entry of every key and nothing for others, the same as the
 * search of an assignment assembled by hand (no index), and the plan
 * spreads new slots evenly (its load counts kept as it goes). */
static void many_slots_are_found_by_index(void **state)
{
	(void)state;
	enum { NT = 3, NP = 2000 };
	static const char *topics[NT] = { "a", "b", "orders" };
	struct kaas_slot_want *want = calloc(NT * NP, sizeof *want);
	assert_non_null(want);
	for (size_t i = 0; i < NT * NP; i++)
		want[i] = (struct kaas_slot_want){ topics[i % NT], (int32_t)(i / NT) };
	int32_t two[] = { 1, 2 };
	struct kaas_assignment empty = { 0 }, a, copy;
	int changed;
	assert_int_equal(kaas_assignment_plan(&empty, want, NT * NP, two, 2, 1, 0, &a, &changed), 0);
	assert_non_null(a.ix);
	assert_int_equal(count_led(&a, 1), NT * NP / 2);
	assert_int_equal(count_led(&a, 2), NT * NP / 2);
	assert_int_equal(kaas_assignment_copy(&copy, &a), 0);
	assert_non_null(copy.ix);
	struct kaas_assignment plain = { .n = a.n, .e = a.e };
	for (size_t i = 0; i < NT * NP; i++) {
		const struct kaas_assign_entry *e = kaas_assignment_find(&a, want[i].topic,
									 want[i].partition);
		assert_ptr_equal(e, &a.e[i]);
		assert_ptr_equal(kaas_assignment_find(&plain, want[i].topic, want[i].partition), e);
		assert_ptr_equal(kaas_assignment_find(&copy, want[i].topic, want[i].partition),
				 &copy.e[i]);
	}
	assert_null(kaas_assignment_find(&a, "a", NP));
	assert_null(kaas_assignment_find(&a, "c", 0));
	assert_null(kaas_assignment_find(&a, "orders", -1));
	/* Read back from the volume: indexed too. */
	char *dir;
	struct kaas_substrate *v = unit_open_tmp(&dir);
	uint64_t e1;
	assert_int_equal(kaas_controller_claim_next(v, &e1), 0);
	a.controller_epoch = e1;
	assert_int_equal(kaas_assignment_write(v, &a), 0);
	struct kaas_assignment r;
	assert_int_equal(kaas_assignment_read(v, &r, NULL), 0);
	assert_non_null(r.ix);
	assert_int_equal(r.n, a.n);
	for (size_t i = 0; i < NT * NP; i++)
		assert_ptr_equal(kaas_assignment_find(&r, want[i].topic, want[i].partition), &r.e[i]);
	kaas_assignment_free(&r);
	kaas_substrate_close(v);
	kaas_testdir_remove(dir);
	kaas_assignment_free(&copy);
	kaas_assignment_free(&a);
	free(want);
}

/* Claims of many slots (made several at a time): each epoch claimed once;
 * a stale plan handing all of them out again has every one raised, each
 * exactly once, above the claimed one. */
static void many_claims_each_once(void **state)
{
	(void)state;
	enum { N = 300 };
	struct kaas_slot_want want[N];
	for (int i = 0; i < N; i++)
		want[i] = (struct kaas_slot_want){ "t", i };
	int32_t one[] = { 1 };
	struct kaas_assignment empty = { 0 }, a, stale;
	int changed;
	assert_int_equal(kaas_assignment_plan(&empty, want, N, one, 1, 1, 0, &a, &changed), 0);
	char *dir;
	struct kaas_substrate *v = unit_open_tmp(&dir);
	assert_int_equal(kaas_assignment_claim_epochs(v, &empty, &a, 1), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(a.e[i].leader_epoch, 1);
	assert_int_equal(kaas_assignment_copy(&stale, &a), 0);
	for (int i = 0; i < N; i++)
		stale.e[i].leader = 2;
	struct kaas_substrate *w; /* another controller's view of the volume */
	assert_int_equal(kaas_substrate_open(dir, &w), 0);
	assert_int_equal(kaas_assignment_claim_epochs(w, &a, &stale, 2), N);
	kaas_substrate_close(w);
	for (int i = 0; i < N; i++)
		assert_int_equal(stale.e[i].leader_epoch, 2);
	kaas_assignment_free(&stale);
	kaas_assignment_free(&a);
	kaas_substrate_close(v);
	kaas_testdir_remove(dir);
}

/* A broker's lost epochs (issue 33) round-trip through its document; a
 * malformed list makes the document unreadable, as a malformed listener
 * does. */
static void lost_epochs_in_broker_document(void **state)
{
	(void)state;
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	struct kaas_broker_info b = {.id = 4, .port = 9092, .incarnation = 9, .counter = 3};
	snprintf(b.host, sizeof b.host, "127.0.0.1");
	b.nlost = 2;
	snprintf(b.lost[0].topic, sizeof b.lost[0].topic, "t");
	b.lost[0].partition = 3;
	b.lost[0].epoch = 7;
	snprintf(b.lost[1].topic, sizeof b.lost[1].topic, "__coordinator");
	b.lost[1].partition = 11;
	b.lost[1].epoch = 4000000000u;
	assert_int_equal(kaas_broker_publish(s, &b), 0);
	struct kaas_broker_info got;
	assert_int_equal(kaas_broker_read(s, 4, &got), 0);
	assert_int_equal(got.nlost, 2);
	assert_string_equal(got.lost[0].topic, "t");
	assert_int_equal(got.lost[0].partition, 3);
	assert_int_equal(got.lost[0].epoch, 7);
	assert_string_equal(got.lost[1].topic, "__coordinator");
	assert_int_equal(got.lost[1].partition, 11);
	assert_true(got.lost[1].epoch == 4000000000u);
	/* none: no field, read as none */
	b.nlost = 0;
	assert_int_equal(kaas_broker_publish(s, &b), 0);
	assert_int_equal(kaas_broker_read(s, 4, &got), 0);
	assert_int_equal(got.nlost, 0);
	/* malformed */
	cJSON *o = cJSON_Parse("{\"id\":5,\"host\":\"h\",\"port\":1,\"incarnation\":\"1\","
			       "\"counter\":1,\"lost_epochs\":[{\"topic\":\"t\",\"partition\":-1,"
			       "\"epoch\":1}]}");
	assert_non_null(o);
	assert_int_equal(kaas_doc_write(s, "brokers/5.json", "broker", 1, o), 0);
	cJSON_Delete(o);
	assert_int_equal(kaas_broker_read(s, 5, &got), -EBADMSG);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(heartbeats_and_liveness),
		cmocka_unit_test(one_controller_per_epoch),
		cmocka_unit_test(stale_assignment_is_ignored_and_fenced),
		cmocka_unit_test(paused_controller_never_shares_an_epoch),
		cmocka_unit_test(lost_assignment_reply_never_rehands_an_epoch),
		cmocka_unit_test(placement_fails_over_and_rebalances_gradually),
		cmocka_unit_test(many_slots_are_found_by_index),
		cmocka_unit_test(many_claims_each_once),
		cmocka_unit_test(lost_epochs_in_broker_document),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
