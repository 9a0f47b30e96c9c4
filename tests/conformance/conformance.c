/*
 * conformance — the substrate conformance suite: one suite, every backend.
 *
 *   conformance [URL]                 every probe must pass on URL
 *   conformance --expect-fail KEY URL the probe KEY must FAIL on URL (to prove
 *                                     the suite has teeth against a broken
 *                                     substrate); the others are not run
 *
 * URL defaults to $KAAS_CONFORMANCE_URL, else a fresh temporary directory
 * (the POSIX backend).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/substrate_check.h"
#include "tests/support/testdir.h"

static const char *url;

static void run_probe(void **state)
{
	int id = (int)(intptr_t)*state;
	struct kaas_check_opts o = {.mask = 1ul << id};
	struct kaas_check_report rep;
	int rc = kaas_substrate_check(url, &o, &rep);
	print_message("    %s: %s\n", rep.r[id].pass ? "PASS" : "FAIL", rep.r[id].seen);
	assert_int_equal(rc, 0);
	assert_true(rep.r[id].pass);
}

int main(int argc, char **argv)
{
	const char *expect_fail = NULL;
	int i = 1;
	if (argc > 2 && !strcmp(argv[1], "--expect-fail")) {
		expect_fail = argv[2];
		i = 3;
	}
	char *tmp = NULL;
	if (i < argc)
		url = argv[i];
	else if (getenv("KAAS_CONFORMANCE_URL") && *getenv("KAAS_CONFORMANCE_URL"))
		url = getenv("KAAS_CONFORMANCE_URL");
	else {
		tmp = kaas_testdir_make("conformance");
		url = tmp;
	}
	fprintf(stderr, "conformance suite on %s\n", url);
	if (expect_fail) {
		int id = kaas_check_lookup(expect_fail);
		if (id < 0) {
			fprintf(stderr, "unknown check '%s'\n", expect_fail);
			return 2;
		}
		struct kaas_check_opts o = {.mask = 1ul << id};
		struct kaas_check_report rep;
		kaas_substrate_check(url, &o, &rep);
		printf("%s on a substrate expected to break it: %s — %s\n", expect_fail,
		       rep.r[id].pass ? "PASS (the suite missed the fault)" : "FAIL (caught)", rep.r[id].seen);
		kaas_testdir_remove(tmp);
		return rep.r[id].pass ? 1 : 0;
	}
	struct CMUnitTest tests[KAAS_CHECK_COUNT];
	static const char *names[KAAS_CHECK_COUNT] = {
		"rename_atomic", "exclusive_create", "close_to_open", "fsync_visible",
		"fsync_reopen", "readdir", "rmdir_nonempty", "error_codes",
	};
	for (int k = 0; k < KAAS_CHECK_COUNT; k++) {
		tests[k] = (struct CMUnitTest){names[k], run_probe, NULL, NULL, (void *)(intptr_t)k};
	}
	int failed = _cmocka_run_group_tests("conformance", tests, KAAS_CHECK_COUNT, NULL, NULL);
	kaas_testdir_remove(tmp);
	return failed ? 1 : 0;
}
