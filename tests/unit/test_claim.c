/* claim: numbered names won by exclusive create; racers never share one. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract/contract.h"

static void claims_are_sequential_and_exclusive(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	assert_int_equal(kaas_sub_mkdir(s, "controller", 0755), 0);
	uint64_t n;
	assert_int_equal(kaas_claim_latest(s, "controller", "epoch", &n), -ENOENT);
	assert_int_equal(kaas_claim(s, "controller", "epoch", 1, 10, "broker 1", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(kaas_claim(s, "controller", "epoch", 1, 10, NULL, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(kaas_claim_exact(s, "controller", "epoch", 2, NULL), -EEXIST);
	assert_int_equal(kaas_claim_exact(s, "controller", "epoch", 42, NULL), 0);
	assert_int_equal(kaas_claim_latest(s, "controller", "epoch", &n), 0);
	assert_int_equal(n, 42);
	assert_int_equal(kaas_claim(s, "controller", "epoch", 1, 1, NULL, &n), -EEXIST);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(s, "controller/epoch-00000000000000000042", &st), 0);
	/* Foreign and malformed names are ignored by latest. */
	unit_put(s, "controller/epoch-99", "short");
	unit_put(s, "controller/epoch-0000000000000000009x", "bad digit");
	unit_put(s, "controller/other-00000000000000000100", "other prefix");
	assert_int_equal(kaas_claim_latest(s, "controller", "epoch", &n), 0);
	assert_int_equal(n, 42);
	assert_int_equal(kaas_claim_parse("epoch-99999999999999999999", "epoch", &n), -EINVAL); /* > 2^64 */
	assert_int_equal(kaas_claim_parse("epoch-18446744073709551615", "epoch", &n), 0);
	assert_true(n == UINT64_MAX);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

/* Several processes claim 50 numbers each from the same start: every number
 * 0..199 is won exactly once. */
static void racing_processes_never_share_a_number(void **state)
{
	char *dir;
	struct kaas_substrate *s = unit_open_tmp(&dir);
	enum { PROCS = 4, EACH = 50 };
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
				if (kaas_claim(mine, "", "block", 0, 1000, NULL, &won[i]) < 0)
					_exit(2);
			if (write(fds[p][1], won, sizeof won) != sizeof won)
				_exit(3);
			_exit(0);
		}
		close(fds[p][1]);
	}
	unsigned count[PROCS * EACH] = {0};
	for (int p = 0; p < PROCS; p++) {
		uint64_t won[EACH];
		size_t got = 0;
		while (got < sizeof won) {
			ssize_t r = read(fds[p][0], (char *)won + got, sizeof won - got);
			assert_true(r > 0);
			got += (size_t)r;
		}
		for (int i = 0; i < EACH; i++) {
			assert_true(won[i] < PROCS * EACH);
			count[won[i]]++;
		}
		int st;
		waitpid(pids[p], &st, 0);
		assert_int_equal(WEXITSTATUS(st), 0);
		close(fds[p][0]);
	}
	for (int i = 0; i < PROCS * EACH; i++)
		assert_int_equal(count[i], 1);
	kaas_substrate_close(s);
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(claims_are_sequential_and_exclusive),
		cmocka_unit_test(racing_processes_never_share_a_number),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
