# cmocka unit tests of the foundation, one process each.
UNIT_TESTS = tests/unit/test_substrate tests/unit/test_replace tests/unit/test_claim \
	tests/unit/test_converge tests/unit/test_doc tests/unit/test_epoch_fence \
	tests/unit/test_assert_held tests/unit/test_lock_rank tests/unit/test_parallel \
	tests/unit/test_fresh
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
EXTRA_DIST += tests/unit/unit.h
tests_unit_test_substrate_SOURCES = tests/unit/test_substrate.c
tests_unit_test_replace_SOURCES = tests/unit/test_replace.c
tests_unit_test_claim_SOURCES = tests/unit/test_claim.c
tests_unit_test_converge_SOURCES = tests/unit/test_converge.c
tests_unit_test_doc_SOURCES = tests/unit/test_doc.c
tests_unit_test_epoch_fence_SOURCES = tests/unit/test_epoch_fence.c
tests_unit_test_assert_held_SOURCES = tests/unit/test_assert_held.c
tests_unit_test_lock_rank_SOURCES = tests/unit/test_lock_rank.c
tests_unit_test_parallel_SOURCES = tests/unit/test_parallel.c
tests_unit_test_fresh_SOURCES = tests/unit/test_fresh.c
