/* Producer-id blocks: ids are never reissued, across restarts, crashes and
 * racing brokers. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/producer_ids.h"

static void ids_unique_across_restarts(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	int64_t last = -1;
	/* 20 broker "restarts", each handing out a few ids and then dying. */
	for (int restart = 0; restart < 20; restart++) {
		struct kaas_pid_alloc a;
		assert_int_equal(kaas_pid_alloc_init(&a, s), 0);
		for (int i = 0; i < 3 + restart; i++) {
			int64_t pid;
			assert_int_equal(kaas_pid_next(&a, &pid), 0);
			assert_true(pid > last);
			assert_true(pid >= (int64_t)KAAS_PID_BLOCK_SIZE);
			last = pid;
		}
		kaas_pid_alloc_destroy(&a);
	}
	/* A block is used up and the next one claimed. */
	struct kaas_pid_alloc a;
	assert_int_equal(kaas_pid_alloc_init(&a, s), 0);
	int64_t first, pid = 0;
	assert_int_equal(kaas_pid_next(&a, &first), 0);
	for (unsigned i = 0; i < KAAS_PID_BLOCK_SIZE; i++)
		assert_int_equal(kaas_pid_next(&a, &pid), 0);
	assert_true(pid >= first + (int64_t)KAAS_PID_BLOCK_SIZE);
	kaas_pid_alloc_destroy(&a);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

static void racing_brokers_get_disjoint_ids(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	enum { PROCS = 4, EACH = 30 };
	int fds[PROCS][2];
	pid_t kids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		assert_int_equal(pipe(fds[p]), 0);
		kids[p] = fork();
		if (kids[p] == 0) {
			struct kaas_substrate *mine;
			struct kaas_pid_alloc a;
			if (kaas_substrate_open(dir, &mine) < 0 || kaas_pid_alloc_init(&a, mine) < 0)
				_exit(1);
			int64_t ids[EACH];
			for (int i = 0; i < EACH; i++) {
				if (kaas_pid_next(&a, &ids[i]) < 0)
					_exit(2);
				if (i % 7 == 6) { /* restart now and then: abandon the block */
					kaas_pid_alloc_destroy(&a);
					kaas_pid_alloc_init(&a, mine);
				}
			}
			if (write(fds[p][1], ids, sizeof ids) != sizeof ids)
				_exit(3);
			_exit(0);
		}
		close(fds[p][1]);
	}
	int64_t all[PROCS * EACH];
	for (int p = 0; p < PROCS; p++) {
		size_t got = 0;
		while (got < sizeof(int64_t) * EACH) {
			ssize_t r = read(fds[p][0], (char *)(all + p * EACH) + got, sizeof(int64_t) * EACH - got);
			assert_true(r > 0);
			got += (size_t)r;
		}
		int st;
		waitpid(kids[p], &st, 0);
		assert_int_equal(WEXITSTATUS(st), 0);
		close(fds[p][0]);
	}
	for (int i = 0; i < PROCS * EACH; i++)
		for (int j = i + 1; j < PROCS * EACH; j++)
			assert_true(all[i] != all[j]);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_unique_across_restarts),
		cmocka_unit_test(racing_brokers_get_disjoint_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
