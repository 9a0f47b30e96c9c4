/* assert_held: the owner check answers right for every mutex type and across
 * cond waits, and a failed assert_held / assert_not_held aborts (death tests
 * in forked children; with NDEBUG the same children run to the end). */
#include "tests/unit/unit.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/assert_held.h"
#include "tests/support/inchild.h"

static void check_type(int type)
{
	pthread_mutexattr_t a;
	pthread_mutex_t mu;
	assert_int_equal(pthread_mutexattr_init(&a), 0);
	assert_int_equal(pthread_mutexattr_settype(&a, type), 0);
	assert_int_equal(pthread_mutex_init(&mu, &a), 0);
	assert_true(kaas_mutex_not_held(&mu));
	assert_false(kaas_mutex_held(&mu));
	pthread_mutex_lock(&mu);
	assert_true(kaas_mutex_held(&mu));
	assert_false(kaas_mutex_not_held(&mu));
	assert_held(&mu);
	pthread_mutex_unlock(&mu);
	assert_false(kaas_mutex_held(&mu));
	assert_not_held(&mu);
	pthread_mutex_destroy(&mu);
	pthread_mutexattr_destroy(&a);
}

static void owner_is_tracked_for_every_type(void **state)
{
	if (!kaas_mutex_owner_known())
		skip();
	check_type(PTHREAD_MUTEX_DEFAULT);
	check_type(PTHREAD_MUTEX_NORMAL);
	check_type(PTHREAD_MUTEX_ERRORCHECK);
	check_type(PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_t st = PTHREAD_MUTEX_INITIALIZER;
	assert_false(kaas_mutex_held(&st));
	pthread_mutex_lock(&st);
	assert_true(kaas_mutex_held(&st));
	pthread_mutex_unlock(&st);
}

struct other {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int phase; /* 0 start, 1 other holds mu, 2 main has checked */
	bool other_saw_held;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;
	pthread_mutex_lock(&o->mu);
	o->other_saw_held = kaas_mutex_held(&o->mu);
	o->phase = 1;
	pthread_cond_broadcast(&o->cv);
	/* Wait on the cond: the wait releases mu, and relocks it on return. */
	while (o->phase != 2)
		pthread_cond_wait(&o->cv, &o->mu);
	o->other_saw_held = o->other_saw_held && kaas_mutex_held(&o->mu);
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

static void another_threads_lock_is_not_ours(void **state)
{
	if (!kaas_mutex_owner_known())
		skip();
	struct other o = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, other_thread, &o), 0);
	pthread_mutex_lock(&o.mu);
	while (o.phase != 1)
		pthread_cond_wait(&o.cv, &o.mu);
	/* Back from our own cond wait: we hold it again, the other thread waits. */
	assert_true(kaas_mutex_held(&o.mu));
	o.phase = 2;
	pthread_cond_broadcast(&o.cv);
	pthread_mutex_unlock(&o.mu);
	assert_false(kaas_mutex_held(&o.mu));
	pthread_join(t, NULL);
	assert_true(o.other_saw_held);
}

/* Locks busy_mu, says so on ready[1], and keeps it (blocks reading a pipe
 * nobody writes; the forked child that runs this exits without joining). */
static pthread_mutex_t busy_mu = PTHREAD_MUTEX_INITIALIZER;
static int ready[2], never[2];

static void *hold_forever(void *arg)
{
	pthread_mutex_lock(&busy_mu);
	char c = 1;
	if (write(ready[1], &c, 1) != 1)
		_exit(3);
	if (read(never[0], &c, 1) < 0)
		_exit(3);
	return arg;
}

static int in_child(void (*fn)(void), char *err, size_t errlen)
{
	int status = ts_in_child(fn, err, errlen);
	assert_int_not_equal(status, -1);
	return status;
}

static pthread_mutex_t death_mu = PTHREAD_MUTEX_INITIALIZER;

static void need_held_without_lock(void)
{
	assert_held(&death_mu);
}

static void need_not_held_with_lock(void)
{
	pthread_mutex_lock(&death_mu);
	assert_not_held(&death_mu);
	pthread_mutex_unlock(&death_mu);
}

static void need_held_while_another_holds(void)
{
	pthread_t t;
	char c;
	if (pipe(ready) != 0 || pipe(never) != 0 || pthread_create(&t, NULL, hold_forever, NULL) != 0 ||
	    read(ready[0], &c, 1) != 1)
		_exit(3);
	assert_not_held(&busy_mu); /* held, but not by us: passes */
	assert_held(&busy_mu);     /* aborts */
}

static void need_held_correctly(void)
{
	pthread_mutex_lock(&death_mu);
	assert_held(&death_mu);
	pthread_mutex_unlock(&death_mu);
	assert_not_held(&death_mu);
}

static void failed_checks_abort(void **state)
{
	if (!kaas_mutex_owner_known())
		skip();
	char err[1024];
	void (*const wrong[])(void) = {need_held_without_lock, need_not_held_with_lock,
				       need_held_while_another_holds};
	const char *said[] = {"kaas_mutex_held(&death_mu)", "kaas_mutex_not_held(&death_mu)",
			      "kaas_mutex_held(&busy_mu)"};
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		int st = in_child(wrong[i], err, sizeof err);
#ifdef NDEBUG
		/* Compiled out: the wrong use goes unnoticed. */
		(void)said;
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
#else
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGABRT);
		assert_non_null(strstr(err, said[i]));
#endif
	}
	/* The same checks pass when the lock is used as they say. */
	int st = in_child(need_held_correctly, err, sizeof err);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owner_is_tracked_for_every_type),
		cmocka_unit_test(another_threads_lock_is_not_ours),
		cmocka_unit_test(failed_checks_abort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
