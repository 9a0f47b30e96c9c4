/*
 * model_fx.h — the fixture the test_model* programs share: two hosts
 * (`fault+` instances, one shared model) over one lower directory, and
 * small helpers to write, read and list through them and to drive the
 * model's control channel.  Every helper fails the running cmocka test on
 * an unexpected error.
 */
#ifndef KAAS_TESTS_FAULTFS_MODEL_FX_H
#define KAAS_TESTS_FAULTFS_MODEL_FX_H

#include <sys/types.h>

#include "faultfs/model.h"
#include "substrate/substrate.h"

struct fx {
	char *dir;
	struct kaas_substrate *a, *b, *lower;
	struct kaas_fault_model *m;
};

/* A `fault+` instance as host `host` over dir (seed 7), extra appended to
 * its query string. */
struct kaas_substrate *open_host(const char *dir, int host, const char *extra);
/* A fresh test directory with hosts a (0) and b (1) and the lower
 * substrate over it; fx_close closes them and removes the directory. */
void fx_open(struct fx *x, const char *extra);
void fx_close(struct fx *x);
/* Write text as the whole of path. */
void put(struct kaas_substrate *s, const char *path, const char *text);
/* Read all of a handle as a string (a static buffer; NULL with *rc < 0). */
char *slurp_handle(struct kaas_file *f, ssize_t *rc);
/* The whole of path (malloc'd), or NULL when it cannot be read. */
char *get(struct kaas_substrate *s, const char *path);
/* How many silly-rename names (.nfs + 24 hex) dir holds on the lower side. */
int count_silly(struct kaas_substrate *lower, const char *dir);
/* Run a control command; its reply (malloc'd). */
char *ctl(struct kaas_fault_model *m, const char *cmd);
/* Add one fault rule (JSON object). */
void set_rule(struct kaas_fault_model *m, const char *rule);

#endif
