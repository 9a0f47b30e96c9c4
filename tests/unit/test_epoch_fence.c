/* epoch_fence: the one fencing primitive (issue 13).  Every case runs on the
 * POSIX substrate and on the in-process NFS-floor model (fault+, two hosts
 * over one lower directory). */
#include "tests/unit/unit.h"

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract/contract.h"
#include "contract/epoch_fence.h"
#include "util/step.h"

struct hosts {
	char *dir;
	struct kaas_substrate *a, *b;
};

static void open_hosts(struct hosts *h, int fault)
{
	h->dir = kaas_testdir_make("fence");
	assert_non_null(h->dir);
	char url[600];
	if (fault) {
		snprintf(url, sizeof url, "fault+%s?seed=3&host=1", h->dir);
		assert_int_equal(kaas_substrate_open(url, &h->a), 0);
		snprintf(url, sizeof url, "fault+%s?seed=3&host=2", h->dir);
		assert_int_equal(kaas_substrate_open(url, &h->b), 0);
	} else {
		assert_int_equal(kaas_substrate_open(h->dir, &h->a), 0);
		assert_int_equal(kaas_substrate_open(h->dir, &h->b), 0);
	}
}

static void close_hosts(struct hosts *h)
{
	kaas_substrate_close(h->a);
	kaas_substrate_close(h->b);
	kaas_testdir_remove(h->dir);
}

static void claims_strictly_above(int fault)
{
	struct hosts h;
	open_hosts(&h, fault);
	uint64_t e = 99;
	assert_int_equal(kaas_fence_highest(h.a, "f", &e), 0);
	assert_int_equal(e, 0);
	assert_int_equal(kaas_fence_claim(h.a, "f", 0, NULL, NULL), -EINVAL);
	assert_int_equal(kaas_fence_claim(h.a, "f", 3, "a", NULL), 0);
	/* Skipped names were made below it: nobody can claim 1 or 2 later. */
	assert_int_equal(kaas_fence_claim(h.b, "f", 2, "b", NULL), KAAS_FENCE_SUPERSEDED);
	assert_int_equal(kaas_claim_exact(h.b, "f", KAAS_FENCE_PREFIX, 1, NULL), -EEXIST);
	assert_int_equal(kaas_claim_exact(h.b, "f", KAAS_FENCE_PREFIX, 2, NULL), -EEXIST);
	/* Equal epoch: another host never shares it. */
	assert_int_equal(kaas_fence_claim(h.b, "f", 3, "b", NULL), KAAS_FENCE_SUPERSEDED);
	assert_int_equal(kaas_fence_check(h.a, "f", 3, NULL), 0);
	/* The holder may claim its own epoch again (a re-open)... */
	assert_true(kaas_fence_held(h.a, "f", 3));
	assert_false(kaas_fence_held(h.b, "f", 3));
	assert_int_equal(kaas_fence_claim(h.a, "f", 3, "a", NULL), 0);
	/* ...until a newer one exists. */
	assert_int_equal(kaas_fence_claim(h.b, "f", 5, "b", NULL), 0);
	assert_int_equal(kaas_fence_highest(h.a, "f", &e), 0);
	assert_int_equal(e, 5);
	assert_int_equal(kaas_fence_check(h.a, "f", 3, NULL), KAAS_FENCE_SUPERSEDED);
	assert_int_equal(kaas_fence_claim(h.a, "f", 3, "a", NULL), KAAS_FENCE_SUPERSEDED);
	assert_int_equal(kaas_fence_check(h.b, "f", 5, NULL), 0);
	/* claim_next goes above everything. */
	uint64_t won = 0;
	assert_int_equal(kaas_fence_claim_next(h.a, "f", "a", &won), 0);
	assert_int_equal(won, 6);
	assert_int_equal(kaas_fence_check(h.b, "f", 5, NULL), KAAS_FENCE_SUPERSEDED);
	/* A removed or replaced fence directory is not "still ours". */
	uint64_t ino = 0;
	assert_int_equal(kaas_fence_check(h.a, "f", 6, &ino), 0);
	assert_int_equal(kaas_remove_tree(h.b, "f", NULL), 0);
	assert_int_equal(kaas_fence_check(h.a, "f", 6, &ino), -ENOENT);
	assert_int_equal(kaas_sub_mkdir(h.b, "f", 0755), 0);
	assert_int_equal(kaas_fence_claim(h.b, "f", 1, "new incarnation", NULL), 0);
	/* (A directory made again may reuse the inode number: the inode check
	 * is best effort, names of a new incarnation are the topics' job.) */
	close_hosts(&h);
}

static void strictly_above_posix(void **state) { claims_strictly_above(0); }
static void strictly_above_fault(void **state) { claims_strictly_above(1); }

/* The race the primitive exists for: a claimer stopped between reading the
 * highest epoch and creating its name resumes after a newer claim: it is
 * refused (its name was skipped by the newer claimer). */
struct pause {
	struct hosts *h;
	int fired;
	int newer_rc;
};

static void newer_claims_meanwhile(void *arg, const char *name)
{
	struct pause *p = arg;
	if (strcmp(name, "test.before-create") != 0 || p->fired++)
		return;
	p->newer_rc = kaas_fence_claim(p->h->b, "f", 5, "newer", NULL);
}

static void paused_claimer_refused(int fault)
{
	struct hosts h;
	open_hosts(&h, fault);
	assert_int_equal(kaas_fence_claim(h.a, "f", 3, "old", NULL), 0);
	struct pause p = { .h = &h };
	kaas_step_set_hook(newer_claims_meanwhile, &p);
	int rc = kaas_fence_claim(h.a, "f", 4, "paused", "test.before-create");
	kaas_step_set_hook(NULL, NULL);
	assert_int_equal(p.fired, 1);
	assert_int_equal(p.newer_rc, 0);
	assert_int_equal(rc, -EEXIST);
	assert_int_equal(kaas_fence_check(h.b, "f", 5, NULL), 0);
	close_hosts(&h);
}

static void paused_posix(void **state) { paused_claimer_refused(0); }
static void paused_fault(void **state) { paused_claimer_refused(1); }

/* The check goes by open, not by a cached stat: on the NFS-floor model a
 * newer claim by another host is seen by the very next check, although
 * `stat` by name is served from a one-second attribute cache there. */
static void check_sees_other_host_at_once(void **state)
{
	struct hosts h;
	open_hosts(&h, 1);
	assert_int_equal(kaas_fence_claim(h.a, "f", 1, NULL, NULL), 0);
	for (uint64_t e = 1; e < 20; e++) {
		assert_int_equal(kaas_fence_check(h.a, "f", e, NULL), 0);
		assert_int_equal(kaas_fence_claim(h.b, "f", e + 1, NULL, NULL), 0);
		assert_int_equal(kaas_fence_check(h.a, "f", e, NULL), KAAS_FENCE_SUPERSEDED);
		struct hosts t = { .a = h.b, .b = h.a };
		h = (struct hosts){ .dir = h.dir, .a = t.a, .b = t.b };
	}
	close_hosts(&h);
}

/* Processes racing claim_next never share an epoch.  (A claim superseded
 * the moment it was made is retried higher, so the numbers may exceed
 * PROCS * EACH.) */
static void racing_claimers(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	enum { PROCS = 4, EACH = 25 };
	int fds[PROCS][2];
	pid_t pids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		assert_int_equal(pipe(fds[p]), 0);
		pids[p] = fork();
		if (pids[p] == 0) {
			struct kaas_substrate *mine;
			if (kaas_substrate_open(dir, &mine) < 0)
				_exit(1);
			uint64_t won[EACH];
			for (int i = 0; i < EACH; i++)
				if (kaas_fence_claim_next(mine, "f", NULL, &won[i]) < 0)
					_exit(2);
			if (write(fds[p][1], won, sizeof won) != (ssize_t)sizeof won)
				_exit(3);
			_exit(0);
		}
		close(fds[p][1]);
	}
	enum { MAXE = 64 * PROCS * EACH };
	static unsigned char seen[MAXE + 1];
	for (int p = 0; p < PROCS; p++) {
		uint64_t won[EACH];
		assert_int_equal(read(fds[p][0], won, sizeof won), (ssize_t)sizeof won);
		close(fds[p][0]);
		int st;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		for (int i = 0; i < EACH; i++) {
			assert_true(won[i] >= 1 && won[i] <= MAXE);
			assert_int_equal(seen[won[i]]++, 0);
		}
	}
	uint64_t high;
	assert_int_equal(kaas_fence_highest(s, "f", &high), 0);
	assert_true(high >= PROCS * EACH);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* ---- lost epochs (issue 33, defect 6) ---- */

struct lost_seen {
	size_t n;
	struct kaas_substrate *sub[8];
	char dir[8][32];
	uint64_t epoch[8];
	int unowned[8];
};

static void on_lost(void *arg, struct kaas_substrate *sub, const char *dir, uint64_t epoch,
		    int unowned)
{
	struct lost_seen *l = arg;
	assert_true(l->n < 8);
	l->sub[l->n] = sub;
	snprintf(l->dir[l->n], sizeof l->dir[0], "%s", dir);
	l->epoch[l->n] = epoch;
	l->unowned[l->n++] = unowned;
}

static struct lost_seen take_lost(void)
{
	struct lost_seen l = { 0 };
	size_t n = kaas_fence_lost_take(on_lost, &l);
	assert_int_equal(n, l.n);
	return l;
}

static void ignore_lost(void *arg, struct kaas_substrate *sub, const char *dir, uint64_t epoch,
			int unowned)
{
	(void)arg, (void)sub, (void)dir, (void)epoch, (void)unowned;
}

/* The create of our own claim succeeds on the server and answers EEXIST
 * (a lost reply): the claim is refused, its file records no owner, and the
 * epoch is remembered as lost, also when a later claim of it finds it the
 * highest; a new epoch above it is claimed.  A claim another owner holds is
 * lost too, with an owner recorded; the next-free claims of
 * kaas_fence_claim_next are not handed out and are never remembered. */
static void lost_reply_on_claim(void **state)
{
	(void)state;
	char *dir = kaas_testdir_make("fencelost");
	assert_non_null(dir);
	char cfg[600], url[1400];
	snprintf(cfg, sizeof cfg, "%s/rules.json", dir);
	FILE *f = fopen(cfg, "w");
	assert_non_null(f);
	fputs("{\"rules\":[{\"op\":\"create\",\"path\":\"f/epoch-00000000000000000002\","
	      "\"times\":1,\"fault\":\"lost_reply\"}]}\n", f);
	fclose(f);
	struct kaas_substrate *a, *b;
	snprintf(url, sizeof url, "fault+%s?seed=3&host=1&config=%s", dir, cfg);
	assert_int_equal(kaas_substrate_open(url, &a), 0);
	snprintf(url, sizeof url, "fault+%s?seed=3&host=2", dir);
	assert_int_equal(kaas_substrate_open(url, &b), 0);
	(void)kaas_fence_lost_take(ignore_lost, NULL); /* the other cases' */
	assert_int_equal(kaas_fence_claim(a, "f", 1, "a1", NULL), 0);
	assert_int_equal(take_lost().n, 0);
	/* Epoch 2: created on the server, answered EEXIST. */
	assert_int_equal(kaas_fence_claim(a, "f", 2, "a2", NULL), -EEXIST);
	assert_non_null(strstr(kaas_sub_errdetail(), "records no owner"));
	assert_false(kaas_fence_held(a, "f", 2));
	assert_int_equal(kaas_fence_recorded(b, "f", 2), 0);
	assert_int_equal(kaas_fence_recorded(b, "f", 1), 1);
	assert_int_equal(kaas_fence_recorded(b, "f", 9), -ENOENT);
	struct lost_seen l = take_lost();
	assert_int_equal(l.n, 1);
	assert_ptr_equal(l.sub[0], a);
	assert_string_equal(l.dir[0], "f");
	assert_int_equal(l.epoch[0], 2);
	assert_int_equal(l.unowned[0], 1);
	/* Claimed again (a re-open): still lost, and said so again. */
	assert_int_equal(kaas_fence_claim(a, "f", 2, "a2", NULL), KAAS_FENCE_SUPERSEDED);
	l = take_lost();
	assert_int_equal(l.n, 1);
	assert_int_equal(l.epoch[0], 2);
	/* Epoch 1's holder is superseded by the orphan (nobody writes at 2). */
	assert_int_equal(kaas_fence_check(a, "f", 1, NULL), KAAS_FENCE_SUPERSEDED);
	/* A new epoch is claimed above it. */
	assert_int_equal(kaas_fence_claim(a, "f", 3, "a3", NULL), 0);
	assert_int_equal(take_lost().n, 0);
	/* Another owner's epoch: lost too, an owner recorded. */
	assert_int_equal(kaas_fence_claim(b, "f", 4, "b4", NULL), 0);
	assert_int_equal(kaas_fence_claim(a, "f", 4, "a4", NULL), KAAS_FENCE_SUPERSEDED);
	l = take_lost();
	assert_int_equal(l.n, 1);
	assert_int_equal(l.epoch[0], 4);
	assert_int_equal(l.unowned[0], 0);
	/* Superseded by a higher epoch: not lost, just old. */
	assert_int_equal(kaas_fence_claim(a, "f", 3, "a3", NULL), KAAS_FENCE_SUPERSEDED);
	assert_int_equal(take_lost().n, 0);
	/* The next free epoch is never a lost one, whatever the racers do. */
	uint64_t won = 0;
	assert_int_equal(kaas_fence_claim_next(a, "f", "next", &won), 0);
	assert_int_equal(won, 5);
	assert_int_equal(take_lost().n, 0);
	kaas_substrate_close(a);
	kaas_substrate_close(b);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strictly_above_posix),
		cmocka_unit_test(strictly_above_fault),
		cmocka_unit_test(paused_posix),
		cmocka_unit_test(paused_fault),
		cmocka_unit_test(check_sees_other_host_at_once),
		cmocka_unit_test(racing_claimers),
		cmocka_unit_test(lost_reply_on_claim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
