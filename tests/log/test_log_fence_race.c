/* test_log_fence_race.c — targeted interleavings of two log opens (issue 13,
 * defect 4 and the one-epoch-one-leader rule).
 *
 * Two "hosts" (substrate instances) open one partition; in-process step
 * hooks stop each opener exactly where the race lies:
 *   A (epoch 4) stops between reading the fence and claiming it
 *     ("log.open.before-fence-claim");
 *   B (epoch 5) fences, reads the manifest again and stops
 *     ("log.open.after-fence");
 *   A resumes (B is already fenced in), then B resumes.
 * A must be refused; every record acknowledged by anyone must be read back
 * by a later leader (epoch 6). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log/log.h"
#include "tests/log/logtest.h"
#include "tests/support/crashsub.h"
#include "util/step.h"

struct fx {
	struct lt_env env;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f || lt_env_init(&f->env, "fencerace") < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	kaas_step_set_hook(NULL, NULL);
	lt_env_fini(&f->env);
	free(f);
	return 0;
}

static int64_t put(struct kaas_log *log, uint32_t seed)
{
	size_t len;
	unsigned char *b = lt_batch(200, 2, 1000 + seed, -1, -1, -1, seed, &len);
	struct kaas_log_batch d = lt_desc(b, len);
	int64_t off = kaas_log_append_sync(log, &d);
	free(b);
	return off;
}

/* 1 if the batch at `off` is exactly the one made from `seed` at `epoch`. */
static int has_batch(struct kaas_log *log, int64_t off, uint32_t seed, uint32_t epoch)
{
	size_t len;
	unsigned char *b = lt_batch(200, 2, 1000 + seed, -1, -1, -1, seed, &len);
	lt_patch(b, off, epoch);
	void *got = NULL;
	size_t glen = 0;
	int64_t first = -1;
	int ok = kaas_log_read_copy(log, off, 1, &got, &glen, &first) == 0 && first == off &&
		 glen == len && memcmp(got, b, len) == 0;
	free(got);
	free(b);
	return ok;
}

/* ------------------------------------------------------------ the hook */

enum role { NONE = 0, OPENER_A, OPENER_B };
static _Thread_local enum role my_role;

struct race {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *stop_a, *stop_b; /* the step each opener stops at */
	int a_at, b_at, go_a, go_b;
	/* the openers */
	struct kaas_substrate *ha, *hb;
	const char *dir;
	const struct kaas_log_config *cfg;
	int a_rc, b_rc;
	struct kaas_log *a, *b;
};

static void hook(void *arg, const char *name)
{
	struct race *r = arg;
	pthread_mutex_lock(&r->mu);
	if (my_role == OPENER_A && r->stop_a && strcmp(name, r->stop_a) == 0 && !r->a_at) {
		r->a_at = 1;
		pthread_cond_broadcast(&r->cv);
		while (!r->go_a)
			pthread_cond_wait(&r->cv, &r->mu);
	} else if (my_role == OPENER_B && r->stop_b && strcmp(name, r->stop_b) == 0 && !r->b_at) {
		r->b_at = 1;
		pthread_cond_broadcast(&r->cv);
		while (!r->go_b)
			pthread_cond_wait(&r->cv, &r->mu);
	}
	pthread_mutex_unlock(&r->mu);
}

static void *open_a(void *arg)
{
	struct race *r = arg;
	my_role = OPENER_A;
	r->a_rc = kaas_log_open(r->ha, r->dir, 4, r->cfg, &r->a);
	pthread_mutex_lock(&r->mu);
	r->a_at = 1; /* also when it never reached the step */
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void *open_b(void *arg)
{
	struct race *r = arg;
	my_role = OPENER_B;
	r->b_rc = kaas_log_open(r->hb, r->dir, 5, r->cfg, &r->b);
	pthread_mutex_lock(&r->mu);
	r->b_at = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void wait_flag(struct race *r, int *flag)
{
	pthread_mutex_lock(&r->mu);
	while (!*flag)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

static void release(struct race *r, int *flag)
{
	pthread_mutex_lock(&r->mu);
	*flag = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

struct acked {
	int64_t off;
	uint32_t seed, epoch;
};

/* Defect 4: the paused opener (between reading the fence and claiming it)
 * resumes after a newer leader fenced: it must be refused, and nothing any
 * leader acknowledged may be lost. */
static void test_paused_opener_refused(void **state)
{
	struct fx *f = *state;
	struct kaas_substrate *h0 = lt_sub(&f->env), *ha = lt_sub(&f->env), *hb = lt_sub(&f->env),
			      *hc = lt_sub(&f->env);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 1 << 20;
	struct acked ack[64];
	size_t nack = 0;

	/* Epoch 3 writes a little and goes away cleanly. */
	struct kaas_log *l0;
	assert_int_equal(kaas_log_open(h0, f->env.dir, 3, &c, &l0), 0);
	for (uint32_t i = 0; i < 5; i++) {
		int64_t off = put(l0, i);
		assert_true(off >= 0);
		ack[nack++] = (struct acked){ off, i, 3 };
	}
	assert_int_equal(kaas_log_close(l0), 0);

	struct race r = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			  .stop_a = "log.open.before-fence-claim", .stop_b = "log.open.after-fence",
			  .ha = ha, .hb = hb, .dir = f->env.dir, .cfg = &c };
	kaas_step_set_hook(hook, &r);
	pthread_t ta, tb;
	assert_int_equal(pthread_create(&ta, NULL, open_a, &r), 0);
	wait_flag(&r, &r.a_at); /* A has read the fence, not claimed it */
	assert_int_equal(pthread_create(&tb, NULL, open_b, &r), 0);
	wait_flag(&r, &r.b_at); /* B is fenced in and has read the manifest */
	release(&r, &r.go_a);
	pthread_join(ta, NULL);
	if (r.a_rc == 0) {
		/* The old code let A in: whatever it acknowledges must survive. */
		for (uint32_t i = 100; i < 103; i++) {
			int64_t off = put(r.a, i);
			if (off >= 0)
				ack[nack++] = (struct acked){ off, i, 4 };
		}
	}
	release(&r, &r.go_b);
	pthread_join(tb, NULL);
	kaas_step_set_hook(NULL, NULL);
	assert_int_equal(r.b_rc, 0);
	for (uint32_t i = 200; i < 203; i++) {
		int64_t off = put(r.b, i);
		assert_true(off >= 0);
		ack[nack++] = (struct acked){ off, i, 5 };
	}
	if (r.a)
		kaas_log_close(r.a);
	assert_int_equal(kaas_log_close(r.b), 0);

	/* A later leader reads back every acknowledged record. */
	struct kaas_log *l6;
	assert_int_equal(kaas_log_open(hc, f->env.dir, 6, &c, &l6), 0);
	size_t lost = 0;
	for (size_t i = 0; i < nack; i++)
		if (!has_batch(l6, ack[i].off, ack[i].seed, ack[i].epoch)) {
			fprintf(stderr, "lost: offset %lld (epoch %u, seed %u)\n",
				(long long)ack[i].off, ack[i].epoch, ack[i].seed);
			lost++;
		}
	assert_int_equal(kaas_log_close(l6), 0);
	assert_int_equal(lost, 0);
	assert_int_equal(r.a_rc, KAAS_LOG_EFENCED);
	kaas_substrate_close(h0);
	kaas_substrate_close(ha);
	kaas_substrate_close(hb);
	kaas_substrate_close(hc);
}

/* One epoch, one leader: a second opener at the epoch another host holds is
 * refused (the old fence let equal epochs share the partition). */
static void test_equal_epoch_refused(void **state)
{
	struct fx *f = *state;
	struct kaas_substrate *ha = lt_sub(&f->env), *hb = lt_sub(&f->env);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	struct kaas_log *a, *b = NULL;
	assert_int_equal(kaas_log_open(ha, f->env.dir, 7, &c, &a), 0);
	assert_true(put(a, 1) >= 0);
	int rc = kaas_log_open(hb, f->env.dir, 7, &c, &b);
	if (rc == 0) {
		/* Both would acknowledge into <base>-7.log. */
		put(b, 2);
		kaas_log_close(b);
	}
	assert_int_equal(rc, KAAS_LOG_EFENCED);
	/* The holder itself may re-open its own epoch (a reopen after a failure). */
	assert_int_equal(kaas_log_close(a), 0);
	assert_int_equal(kaas_log_open(ha, f->env.dir, 7, &c, &a), 0);
	assert_true(put(a, 3) >= 0);
	assert_int_equal(kaas_log_close(a), 0);
	kaas_substrate_close(ha);
	kaas_substrate_close(hb);
}

/* Defect 10 (manifest part): a zombie (epoch 1) passes its fence check for
 * a manifest write and stops; a new leader (epoch 2) opens, acknowledges
 * records and crashes; the zombie's rename then lands.  The next leader
 * (epoch 3) must open and read every acknowledged record (the old single
 * manifest.json lost epoch 2's segment: the partition refused to open). */
struct zombie {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int at, go;
	struct kaas_log *log;
	int rc;
};

static void zombie_hook(void *arg, const char *name)
{
	struct zombie *z = arg;
	if (my_role != OPENER_A || strcmp(name, "log.manifest.before-rename") != 0)
		return;
	pthread_mutex_lock(&z->mu);
	if (!z->at) {
		z->at = 1;
		pthread_cond_broadcast(&z->cv);
		while (!z->go)
			pthread_cond_wait(&z->cv, &z->mu);
	}
	pthread_mutex_unlock(&z->mu);
}

static void *zombie_roll(void *arg)
{
	struct zombie *z = arg;
	my_role = OPENER_A;
	z->rc = kaas_log_roll(z->log);
	pthread_mutex_lock(&z->mu);
	z->at = 1;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

static void test_zombie_manifest_lands_late(void **state)
{
	struct fx *f = *state;
	struct kaas_substrate *ha = lt_sub(&f->env), *hc = lt_sub(&f->env), *hb;
	struct kaas_crashsub_opts o = { 0 };
	assert_int_equal(kaas_crashsub_wrap(lt_sub(&f->env), &o, &hb), 0);
	struct kaas_log_config c;
	kaas_log_config_default(&c);
	c.segment_bytes = 1 << 20;
	struct acked ack[64];
	size_t nack = 0;
	struct zombie z = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	assert_int_equal(kaas_log_open(ha, f->env.dir, 1, &c, &z.log), 0);
	for (uint32_t i = 0; i < 5; i++) {
		int64_t off = put(z.log, i);
		assert_true(off >= 0);
		ack[nack++] = (struct acked){ off, i, 1 };
	}
	/* The zombie's roll passes the fence check and stops before its rename. */
	kaas_step_set_hook(zombie_hook, &z);
	pthread_t tz;
	assert_int_equal(pthread_create(&tz, NULL, zombie_roll, &z), 0);
	pthread_mutex_lock(&z.mu);
	while (!z.at)
		pthread_cond_wait(&z.cv, &z.mu);
	pthread_mutex_unlock(&z.mu);
	/* Epoch 2 takes over, acknowledges, and dies without a clean close. */
	struct kaas_log *b;
	assert_int_equal(kaas_log_open(hb, f->env.dir, 2, &c, &b), 0);
	for (uint32_t i = 200; i < 205; i++) {
		int64_t off = put(b, i);
		assert_true(off >= 0);
		ack[nack++] = (struct acked){ off, i, 2 };
	}
	kaas_crashsub_crash_now(hb);
	kaas_log_close(b);
	/* The zombie's rename lands now. */
	pthread_mutex_lock(&z.mu);
	z.go = 1;
	pthread_cond_broadcast(&z.cv);
	pthread_mutex_unlock(&z.mu);
	pthread_join(tz, NULL);
	kaas_step_set_hook(NULL, NULL);
	kaas_log_close(z.log);

	struct kaas_log *l3;
	int rc = kaas_log_open(hc, f->env.dir, 3, &c, &l3);
	if (rc < 0)
		fprintf(stderr, "open at epoch 3: %s\n", kaas_sub_errdetail());
	assert_int_equal(rc, 0);
	size_t lost = 0;
	for (size_t i = 0; i < nack; i++)
		if (!has_batch(l3, ack[i].off, ack[i].seed, ack[i].epoch))
			lost++;
	assert_int_equal(kaas_log_close(l3), 0);
	assert_int_equal(lost, 0);
	kaas_substrate_close(ha);
	kaas_substrate_close(hb);
	kaas_substrate_close(hc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paused_opener_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_equal_epoch_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie_manifest_lands_late, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
