/*
 * test_lost_reply — the fault model's lost reply (issue 33): a name
 * operation is applied on the server, then its reply is lost and the
 * client gets what a re-sent request gets from the changed state (an
 * exclusive create or mkdir: EEXIST; an unlink, rename or rmdir: ENOENT; a
 * plain create: ETIMEDOUT), or the rule's "reply".  Through the in-process
 * front (`fault+`), as the broker's tests use it; the FUSE front shares the
 * model (tests/faultfs/fuse_behaviours.sh mounts it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "faultfs/model.h"
#include "substrate/substrate.h"
#include "tests/faultfs/model_fx.h"

static int exists(struct kaas_substrate *lower, const char *path)
{
	struct kaas_stat st;
	return kaas_sub_stat(lower, path, &st) == 0;
}

/* An exclusive create applied, answered EEXIST; the name exists, empty;
 * once the rule is spent the next exclusive create is refused honestly. */
static void test_excl_create(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"create\",\"path\":\"fence/epoch-*\",\"times\":1,"
		      "\"fault\":\"lost_reply\"}");
	assert_int_equal(kaas_sub_mkdir(x.a, "fence", 0755), 0);
	struct kaas_file *f = NULL;
	int rc = kaas_sub_open(x.a, "fence/epoch-1", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL,
			       0644, &f);
	assert_int_equal(rc, -EEXIST);
	assert_null(f);
	assert_non_null(strstr(kaas_sub_errdetail(), "lost reply"));
	assert_true(exists(x.lower, "fence/epoch-1"));
	char *body = get(x.b, "fence/epoch-1");
	assert_non_null(body);
	assert_string_equal(body, ""); /* created, never written */
	free(body);
	/* spent: an exclusive create of another name is a plain create */
	assert_int_equal(kaas_sub_open(x.a, "fence/epoch-2", KAAS_O_WRITE | KAAS_O_CREAT |
				       KAAS_O_EXCL, 0644, &f), 0);
	kaas_sub_close(f);
	/* the dump names the fault, the event log has it */
	char *reply = ctl(x.m, "{\"cmd\":\"dump\"}");
	assert_non_null(strstr(reply, "\"fault\":\"lost_reply\""));
	free(reply);
	fx_close(&x);
}

/* A plain create: the re-send repeats it harmlessly, so only a timeout
 * shows; "reply" picks another answer. */
static void test_plain_create_and_reply(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"create\",\"path\":\"p\",\"times\":1,\"fault\":\"lost_reply\"}");
	set_rule(x.m, "{\"op\":\"create\",\"path\":\"q\",\"times\":1,\"fault\":\"lost_reply\","
		      "\"reply\":\"EIO\"}");
	struct kaas_file *f = NULL;
	assert_int_equal(kaas_sub_open(x.a, "p", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), -ETIMEDOUT);
	assert_true(exists(x.lower, "p"));
	assert_int_equal(kaas_sub_open(x.a, "q", KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_EXCL, 0644, &f),
			 -EIO);
	assert_true(exists(x.lower, "q"));
	char *reply = ctl(x.m, "{\"cmd\":\"dump\"}");
	assert_non_null(strstr(reply, "\"reply\":\"EIO\""));
	free(reply);
	fx_close(&x);
}

/* unlink and rename: applied, answered ENOENT, on both profiles. */
static void run_unlink_rename(const char *extra)
{
	struct fx x;
	fx_open(&x, extra);
	set_rule(x.m, "{\"op\":\"unlink,rename\",\"times\":2,\"fault\":\"lost_reply\"}");
	put(x.a, "u", "1");
	put(x.a, "t.tmp", "new");
	assert_int_equal(kaas_sub_unlink(x.a, "u"), -ENOENT);
	assert_false(exists(x.lower, "u"));
	assert_int_equal(kaas_sub_rename(x.a, "t.tmp", "t"), -ENOENT);
	assert_false(exists(x.lower, "t.tmp"));
	char *body = get(x.b, "t");
	assert_non_null(body);
	assert_string_equal(body, "new"); /* the rename landed */
	free(body);
	fx_close(&x);
}

static void test_unlink_rename(void **state)
{
	(void)state;
	run_unlink_rename(NULL);
	run_unlink_rename("&profile=passthrough");
}

/* mkdir and rmdir: EEXIST and ENOENT; other ops never match (nor count). */
static void test_dirs_and_other_ops(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, NULL);
	set_rule(x.m, "{\"op\":\"*\",\"times\":2,\"fault\":\"lost_reply\"}");
	put(x.lower, "w", "w"); /* on the lower: the rule does not see it */
	assert_int_equal(kaas_sub_stat(x.a, "w", &(struct kaas_stat){ 0 }), 0); /* stat: no */
	char *body = get(x.a, "w");                                            /* open, read: no */
	assert_non_null(body);
	free(body);
	assert_int_equal(kaas_sub_mkdir(x.a, "d", 0755), -EEXIST);
	assert_true(exists(x.lower, "d"));
	assert_int_equal(kaas_sub_rmdir(x.a, "d"), -ENOENT);
	assert_false(exists(x.lower, "d"));
	fx_close(&x);
}

/* Bad rules are named. */
static void test_rule_errors(void **state)
{
	(void)state;
	struct fx x;
	fx_open(&x, NULL);
	char *reply = NULL;
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"op\":\"write\","
					"\"fault\":\"lost_reply\"}}", &reply), -EINVAL);
	assert_non_null(strstr(reply, "lost_reply"));
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"op\":\"unlink\","
					"\"fault\":\"EIO\",\"reply\":\"ENOENT\"}}", &reply), -EINVAL);
	assert_non_null(strstr(reply, "reply"));
	free(reply);
	assert_int_equal(kaas_fault_ctl(x.m, "{\"cmd\":\"set\",\"rule\":{\"op\":\"unlink\","
					"\"fault\":\"lost_reply\",\"reply\":\"EWHAT\"}}", &reply),
			 -EINVAL);
	free(reply);
	fx_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_excl_create),
		cmocka_unit_test(test_plain_create_and_reply),
		cmocka_unit_test(test_unlink_rename),
		cmocka_unit_test(test_dirs_and_other_ops),
		cmocka_unit_test(test_rule_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
