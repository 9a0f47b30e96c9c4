/* The metrics registry: rendering in the Prometheus text format (help and
 * type lines, label escaping, cumulative histogram buckets in seconds),
 * the series cap, and the metering substrate decorator counting ops and
 * errors by backend and op without changing what the ops return. */
#include "tests/unit/unit.h"

#include <errno.h>

#include "substrate/metered.h"
#include "util/metrics.h"

static struct kaas_metric c_fam = KAAS_COUNTER("t_requests_total", "Requests.", "api", "error");
static struct kaas_metric g_fam = KAAS_GAUGE("t_temp", "A gauge.", NULL);
static const uint64_t bounds[] = { 1000000, 10000000 }; /* 1 ms, 10 ms */
static struct kaas_metric h_fam = KAAS_HISTOGRAM("t_seconds", "Latency.", KAAS_METRIC_SECONDS,
						 bounds, 2, "op");
static struct kaas_metric cap_fam = KAAS_COUNTER("t_cap_total", "Capped.", "k");

static char *render(void)
{
	struct kaas_mbuf b = { 0 };
	kaas_metrics_render(&b);
	assert_false(b.oom);
	return b.p;
}

/* Every line of `want` (NULL-terminated) is in `text`; frees text. */
static void expect_lines(char *text, const char *const *want)
{
	for (size_t i = 0; want[i]; i++)
		if (!strstr(text, want[i]))
			fail_msg("missing from the rendering: %s\n--\n%s", want[i], text);
	free(text);
}

static void test_render(void **state)
{
	(void)state;
	const char *l1[] = { "Produce", "0" };
	const char *l2[] = { "we\"ird\\\n", "6" };
	kaas_metric_add(kaas_metric_series(&c_fam, l1), 3);
	kaas_metric_add(kaas_metric_series(&c_fam, l1), 2);
	kaas_metric_add(kaas_metric_series(&c_fam, l2), 1);
	kaas_metric_set(kaas_metric_series(&g_fam, NULL), 2.5);
	const char *op[] = { "fsync" };
	struct kaas_metric_series *h = kaas_metric_series(&h_fam, op);
	kaas_metric_observe(h, 500000);    /* 0.5 ms */
	kaas_metric_observe(h, 2000000);   /* 2 ms */
	kaas_metric_observe(h, 20000000);  /* 20 ms */
	static const char *const want[] = {
		"# HELP t_requests_total Requests.\n# TYPE t_requests_total counter\n",
		"t_requests_total{api=\"Produce\",error=\"0\"} 5\n",
		"t_requests_total{api=\"we\\\"ird\\\\\\n\",error=\"6\"} 1\n",
		"# TYPE t_temp gauge\nt_temp 2.5\n",
		"t_seconds_bucket{op=\"fsync\",le=\"0.001\"} 1\n",
		"t_seconds_bucket{op=\"fsync\",le=\"0.01\"} 2\n",
		"t_seconds_bucket{op=\"fsync\",le=\"+Inf\"} 3\n",
		"t_seconds_sum{op=\"fsync\"} 0.0225\n",
		"t_seconds_count{op=\"fsync\"} 3\n",
		NULL,
	};
	expect_lines(render(), want);
}

static void test_cap(void **state)
{
	(void)state;
	char k[32];
	struct kaas_metric_series *first = NULL, *over = NULL;
	for (int i = 0; i <= KAAS_METRIC_MAX_SERIES; i++) {
		snprintf(k, sizeof k, "k%d", i);
		const char *l[] = { k };
		struct kaas_metric_series *s = kaas_metric_series(&cap_fam, l);
		kaas_metric_add(s, 1);
		if (i == 0)
			first = s;
		if (i == KAAS_METRIC_MAX_SERIES)
			over = s;
	}
	const char *l0[] = { "k0" };
	assert_ptr_equal(kaas_metric_series(&cap_fam, l0), first);
	char *text = render();
	snprintf(k, sizeof k, "k=\"k%d\"", KAAS_METRIC_MAX_SERIES - 1);
	assert_non_null(strstr(text, k));
	snprintf(k, sizeof k, "k=\"k%d\"", KAAS_METRIC_MAX_SERIES);
	assert_null(strstr(text, k));
	assert_non_null(over);
	free(text);
}

/* A label set longer than the lookup's stack buffer. */
static void test_long_label(void **state)
{
	(void)state;
	char v[600], line[700];
	memset(v, 'x', sizeof v - 1);
	v[sizeof v - 1] = '\0';
	const char *l[] = { v, "1" };
	struct kaas_metric_series *s = kaas_metric_series(&c_fam, l);
	assert_ptr_equal(kaas_metric_series(&c_fam, l), s);
	kaas_metric_add(s, 7);
	snprintf(line, sizeof line, "t_requests_total{api=\"%s\",error=\"1\"} 7\n", v);
	const char *const want[] = { line, NULL };
	expect_lines(render(), want);
}

/* The text buffer formats into the room it has, and grows (from a
 * borrowed stack buffer to the heap, then doubling) without losing or
 * repeating a byte when a formatted piece does not fit. */
static void test_mbuf(void **state)
{
	(void)state;
	char stack[8] = "";
	struct kaas_mbuf b = { .p = stack, .cap = sizeof stack, .borrowed = 1 };
	kaas_mbuf_printf(&b, "%s", "abc");
	assert_ptr_equal(b.p, stack);
	kaas_mbuf_printf(&b, "%d-%s", 42, "defghij"); /* overflows the stack buffer */
	assert_int_equal(b.borrowed, 0);
	assert_string_equal(b.p, "abc42-defghij");
	assert_int_equal(b.len, 13);
	char piece[101];
	memset(piece, 'x', 100);
	piece[100] = '\0';
	for (int i = 0; i < 100; i++) /* past 4096 and 8192 bytes */
		kaas_mbuf_printf(&b, "%s%c", piece, (char)('0' + i % 10));
	assert_false(b.oom);
	assert_int_equal(b.len, 13 + 100 * 101);
	assert_int_equal(strlen(b.p), b.len);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(b.p[13 + i * 101 + 99], 'x');
		assert_int_equal(b.p[13 + i * 101 + 100], '0' + i % 10);
	}
	kaas_mbuf_free(&b);
}

static void test_metered(void **state)
{
	(void)state;
	char *dir;
	struct kaas_substrate *inner = unit_open_tmp(&dir), *m = NULL;
	kaas_metrics_enable(1);
	assert_int_equal(kaas_metered_wrap(inner, &m), 0);
	assert_string_equal(m->host, inner->host);
	struct kaas_file *f = NULL;
	assert_int_equal(kaas_sub_open(m, "a", KAAS_O_WRITE | KAAS_O_CREAT, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, "hello", 5, 0), 0);
	assert_int_equal(kaas_sub_fsync(f), 0);
	assert_int_equal(kaas_sub_close(f), 0);
	struct kaas_stat st;
	assert_int_equal(kaas_sub_stat(m, "a", &st), 0);
	assert_int_equal(st.size, 5);
	assert_int_equal(kaas_sub_stat(m, "missing", &st), -ENOENT);
	assert_int_equal(kaas_sub_open(m, "missing", KAAS_O_READ, 0, &f), -ENOENT);
	static const char *const want[] = {
		"kaas_substrate_ops_total{backend=\"posix\",op=\"fsync\"} 1\n",
		"kaas_substrate_ops_total{backend=\"posix\",op=\"stat\"} 2\n",
		"kaas_substrate_errors_total{backend=\"posix\",op=\"stat\"} 1\n",
		"kaas_substrate_errors_total{backend=\"posix\",op=\"open\"} 1\n",
		"kaas_substrate_op_duration_seconds_count{backend=\"posix\",op=\"pwrite\"} 1\n",
		NULL,
	};
	expect_lines(render(), want);
	assert_int_equal(kaas_sub_unlink(m, "a"), 0);
	kaas_substrate_close(m); /* closes inner too */
	kaas_testdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_long_label),
		cmocka_unit_test(test_mbuf),
		cmocka_unit_test(test_metered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
