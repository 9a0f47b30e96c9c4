/*
 * check_internal.h — shared between the files of the substrate check
 * (substrate_check.c drives, probe_*.c probe, check_support.c helps).
 * Not for use outside src/check/.
 *
 * Probes report by filling their kaas_check_result: pass, and a line of
 * what was seen (evidence on failure).  They run in the scratch directory
 * c->scratch on c->sub (host A); host B is another instance of c->peer.
 */
#ifndef KAAS_CHECK_INTERNAL_H
#define KAAS_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "check/substrate_check.h"
#include "substrate/substrate.h"

struct kaas_check_ctx {
	const char *url;
	const char *peer;       /* host B's URL: the peer, or url again */
	const struct kaas_check_opts *o;
	struct kaas_substrate *sub;
	char scratch[160];
};

/* The probes, one per kaas_check_id. */
void kaas_check_probe_rename(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_excl(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_c2o(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_fsync_visible(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_fsync_reopen(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_readdir(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_rmdir(struct kaas_check_ctx *c, struct kaas_check_result *r);
void kaas_check_probe_errors(struct kaas_check_ctx *c, struct kaas_check_result *r);

/* r->seen = printf(fmt, ...), truncated to fit. */
void kaas_check_seen(struct kaas_check_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* r->seen = ok when r->pass, else prefix followed by why. */
void kaas_check_verdict(struct kaas_check_result *r, const char *ok, const char *prefix, const char *why);
/* "<scratch>/<printf(fmt, ...)>" (malloc'd). */
char *kaas_check_path(struct kaas_check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Version v of a self-verifying payload: a header line with its length and
 * CRC, then bytes that depend on v (malloc'd; *len its size). */
char *kaas_check_make_version(unsigned v, size_t *len);
/* 0 if buf holds a whole valid version (its number in *v), else -1. */
int kaas_check_parse_version(const char *buf, size_t len, unsigned *v);

/* Open path for writing with flags (KAAS_O_CREAT...), write buf at 0,
 * fsync if asked, close: 0 or -errno (detail set). */
int kaas_check_write_file(struct kaas_substrate *sub, const char *path, int flags, const void *buf,
			  size_t len, int do_fsync);
/* Read an open file whole (malloc'd *out, *len): 0 or -errno. */
int kaas_check_read_handle(struct kaas_file *f, char **out, size_t *len);
/* Open path on sub, read it all, compare with want[0..n): 0, or -1 with
 * what differed in why. */
int kaas_check_verify_on(struct kaas_substrate *sub, const char *path, const unsigned char *want,
			 size_t n, char *why, size_t whysz);
/* Make the scratch subdirectory name: its path (malloc'd), or NULL with
 * r->seen set. */
char *kaas_check_mkdir(struct kaas_check_ctx *c, struct kaas_check_result *r, const char *name);
/* Open host B (a new instance of c->peer): 0, or -1 with r->seen set. */
int kaas_check_open_peer(struct kaas_check_ctx *c, struct kaas_check_result *r, struct kaas_substrate **b);
/* n pseudo-random bytes determined by seed. */
void kaas_check_fill(unsigned char *b, size_t n, unsigned seed);

/* Monotonic milliseconds. */
uint64_t kaas_check_now_ms(void);
/* Wait for a child, SIGKILLing it after timeout_ms: its exit code or -1. */
int kaas_check_wait_child(pid_t pid, uint64_t timeout_ms);
/* Read exactly len bytes from a pipe: 0, or -1 (EOF or error). */
int kaas_check_read_fd(int fd, void *buf, size_t len);
/* Write all of buf to a pipe (gives up silently on error: the reader sees EOF). */
void kaas_check_write_fd(int fd, const void *buf, size_t len);
/* Fork up to n (<= 16) children that each run run(arg, ctl[0], their own
 * result pipe) and never return; ctl is the parent's start/stop pipe.
 * Fills pids/outs (read ends) and returns how many started.  If index is
 * not NULL, *index is the child's number (0, 1, ...) when run is called. */
unsigned kaas_check_spawn(unsigned n, const int ctl[2], void (*run)(void *, int, int), void *arg,
			  pid_t *pids, int *outs, unsigned *index);

#endif
