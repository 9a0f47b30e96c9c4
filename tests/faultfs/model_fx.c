/*
 * model_fx.c — the shared test_model* fixture (see model_fx.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "faultfs/substrate.h"
#include "tests/faultfs/model_fx.h"
#include "tests/support/testdir.h"

struct kaas_substrate *open_host(const char *dir, int host, const char *extra)
{
	char *url = NULL;
	assert_true(asprintf(&url, "fault+%s?seed=7&host=%d%s", dir, host, extra ? extra : "") > 0);
	struct kaas_substrate *s = NULL;
	int rc = kaas_substrate_open(url, &s);
	if (rc < 0)
		fprintf(stderr, "open %s: %s\n", url, kaas_sub_errdetail());
	assert_int_equal(rc, 0);
	free(url);
	return s;
}

void fx_open(struct fx *x, const char *extra)
{
	memset(x, 0, sizeof *x);
	x->dir = kaas_testdir_make("faultfs");
	x->a = open_host(x->dir, 0, extra);
	x->b = open_host(x->dir, 1, extra);
	x->m = kaas_fault_substrate_model(x->a);
	assert_non_null(x->m);
	assert_ptr_equal(x->m, kaas_fault_substrate_model(x->b)); /* one shared model */
	assert_int_equal(kaas_substrate_open(x->dir, &x->lower), 0);
}

void fx_close(struct fx *x)
{
	kaas_substrate_close(x->a);
	kaas_substrate_close(x->b);
	kaas_substrate_close(x->lower);
	kaas_testdir_remove(x->dir);
}

void put(struct kaas_substrate *s, const char *path, const char *text)
{
	struct kaas_file *f;
	assert_int_equal(kaas_sub_open(s, path, KAAS_O_WRITE | KAAS_O_CREAT | KAAS_O_TRUNC, 0644, &f), 0);
	assert_int_equal(kaas_sub_pwrite_full(f, text, strlen(text), 0), 0);
	assert_int_equal(kaas_sub_close(f), 0);
}

/* Read all of a handle as a string. */
char *slurp_handle(struct kaas_file *f, ssize_t *rc)
{
	static char buf[65536];
	*rc = kaas_sub_pread_full(f, buf, sizeof buf - 1, 0);
	if (*rc < 0)
		return NULL;
	buf[*rc] = '\0';
	return buf;
}

char *get(struct kaas_substrate *s, const char *path)
{
	char *buf;
	size_t len;
	int rc = kaas_sub_read_all(s, path, 1 << 20, &buf, &len);
	return rc == 0 ? buf : NULL;
}

int count_silly(struct kaas_substrate *lower, const char *dir)
{
	struct kaas_dirlist l;
	assert_int_equal(kaas_sub_list(lower, dir, &l), 0);
	int n = 0;
	for (size_t i = 0; i < l.n; i++)
		n += !strncmp(l.names[i], ".nfs", 4) && strlen(l.names[i]) == 4 + 16 + 8;
	kaas_dirlist_free(&l);
	return n;
}

char *ctl(struct kaas_fault_model *m, const char *cmd)
{
	char *reply = NULL;
	int rc = kaas_fault_ctl(m, cmd, &reply);
	if (rc < 0)
		fprintf(stderr, "ctl %s -> %s\n", cmd, reply);
	assert_int_equal(rc, 0);
	return reply;
}

void set_rule(struct kaas_fault_model *m, const char *rule)
{
	char *cmd = NULL;
	assert_true(asprintf(&cmd, "{\"cmd\":\"set\",\"rule\":%s}", rule) > 0);
	free(ctl(m, cmd));
	free(cmd);
}
