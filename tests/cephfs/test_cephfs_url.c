/*
 * test_cephfs_url — cephfs:// URLs (backends/cephfs_url.c): what is taken
 * from where, and what is refused with a detail naming the URL.  No
 * cluster needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cephfs_url.h"
#include "substrate/substrate.h"

static void parses_every_part(void **state)
{
	struct kaas_cephfs_url u;
	assert_int_equal(kaas_cephfs_url_parse("cephfs://broker-1@127.0.0.1:6789,10.0.0.2:6789/kaas/data/"
					       "?fs=cephfs&keyring=/etc/k/client.broker-1.keyring&timeout=5&conf=/c/ceph.conf",
					       &u), 0);
	assert_string_equal(u.name, "broker-1");
	assert_string_equal(u.mon, "127.0.0.1:6789,10.0.0.2:6789");
	assert_string_equal(u.root, "/kaas/data");
	assert_string_equal(u.fs, "cephfs");
	assert_string_equal(u.keyring, "/etc/k/client.broker-1.keyring");
	assert_string_equal(u.conf, "/c/ceph.conf");
	assert_int_equal(u.timeout_s, 5);
	/* the keyring stays out of messages */
	assert_string_equal(u.display, "cephfs://broker-1@127.0.0.1:6789,10.0.0.2:6789/kaas/data?fs=cephfs");
	kaas_cephfs_url_free(&u);
}

static void defaults(void **state)
{
	struct kaas_cephfs_url u;
	assert_int_equal(kaas_cephfs_url_parse("cephfs://127.0.0.1:6789", &u), 0);
	assert_string_equal(u.name, "admin");
	assert_string_equal(u.root, "/");
	assert_null(u.fs);
	assert_null(u.keyring);
	assert_null(u.conf);
	assert_int_equal(u.timeout_s, KAAS_CEPHFS_DEFAULT_TIMEOUT_S);
	kaas_cephfs_url_free(&u);
	/* monitors from the conf */
	assert_int_equal(kaas_cephfs_url_parse("cephfs:///a?conf=/lab/ceph.conf", &u), 0);
	assert_null(u.mon);
	assert_string_equal(u.root, "/a");
	kaas_cephfs_url_free(&u);
	/* a v2 address list in brackets */
	assert_int_equal(kaas_cephfs_url_parse("cephfs://x@[v2:127.0.0.1:3300,v1:127.0.0.1:6789]/", &u), 0);
	assert_string_equal(u.mon, "[v2:127.0.0.1:3300,v1:127.0.0.1:6789]");
	kaas_cephfs_url_free(&u);
}

static void refuses(const char *url, const char *says)
{
	struct kaas_cephfs_url u;
	kaas_sub_clear_error();
	assert_int_equal(kaas_cephfs_url_parse(url, &u), -EINVAL);
	if (!strstr(kaas_sub_errdetail(), url) || !strstr(kaas_sub_errdetail(), says))
		fail_msg("%s: detail '%s' should name the URL and say '%s'", url, kaas_sub_errdetail(), says);
	kaas_cephfs_url_free(&u);
}

static void refuses_bad_urls(void **state)
{
	refuses("nfs://127.0.0.1/x", "not a cephfs:// URL");
	refuses("cephfs:///x", "name a monitor");
	refuses("cephfs://a b@127.0.0.1:6789/", "client name");
	refuses("cephfs://@127.0.0.1:6789/", "client name");
	refuses("cephfs://x@127.0.0.1:67/89/../y", "'..'");
	refuses("cephfs://x@127.0.0.1:6789/a//b", "empty");
	refuses("cephfs://x@mon;rm:1/", "monitor address");
	refuses("cephfs://x@127.0.0.1:6789/?keyring=rel/k", "absolute");
	refuses("cephfs://x@127.0.0.1:6789/?conf=c", "absolute");
	refuses("cephfs://x@127.0.0.1:6789/?timeout=0", "timeout must be");
	refuses("cephfs://x@127.0.0.1:6789/?timeout=9x", "timeout must be");
	refuses("cephfs://x@127.0.0.1:6789/?fs=a/b", "fs=");
	refuses("cephfs://x@127.0.0.1:6789/?pool=p", "unknown URL argument 'pool'");
}

static void registry_knows_the_scheme(void **state)
{
	/* an unreachable monitor fails within the URL's timeout, naming it */
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open("cephfs://nobody@127.0.0.1:1/?timeout=2", &s);
	assert_true(rc < 0);
	assert_null(s);
	assert_int_not_equal(rc, -EPROTONOSUPPORT);
	assert_non_null(strstr(kaas_sub_errdetail(), "cephfs://nobody@127.0.0.1:1/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_every_part),
		cmocka_unit_test(defaults),
		cmocka_unit_test(refuses_bad_urls),
		cmocka_unit_test(registry_knows_the_scheme),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
