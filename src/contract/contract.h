/*
 * contract.h — the contract primitives: the only ways kaas changes durable
 * state on the shared volume.
 *
 *   replace      write a whole document atomically (temp, fsync, rename,
 *                fsync dir) — the contract's rule 1.
 *   claim        win a numbered name by exclusive create (guarantee 2).
 *   converge     re-drive an idempotent step to its end state — rule 2.
 *   remove_tree  a recursive delete that is idempotent and resumable.
 *   doc          versioned, CRC-checked JSON documents on top of replace.
 *
 * All functions return >= 0 on success or a negative errno; the detail for a
 * failure is in kaas_sub_errdetail() and names the file concerned.
 */
#ifndef KAAS_CONTRACT_H
#define KAAS_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

/* ---------------------------------------------------------------- replace */

/* Temp files made by replace are named
 *   .tmp.<target-name>.<host>.<pid>.<incarnation:016x>.<counter>
 * in the target's directory (a private name, substrate.h: the target name
 * is cut to 150 bytes), so two writers (two hosts, two processes, two
 * threads, two incarnations with one pid) never share a temp name, and a
 * sweep can tell whose a temp is.  Names in the format before incarnations
 * (.tmp.<target>.<host>.<pid>.<counter>) are still recognised. */
#define KAAS_TEMP_PREFIX ".tmp."

/* Atomically make `path` hold exactly buf[0..len): write a temp in the same
 * directory, fsync it, rename it over `path`, fsync the directory.  A reader
 * on any host sees the previous content or the new one, never a mix.
 * Returns 0, or -errno with nothing changed at `path` (the temp is removed
 * where possible; a sweep removes what remains).  A failed fsync is not
 * retried: the call fails.  Not idempotent by itself only in the sense that
 * the last caller wins: callers must be the single (epoch-fenced) writer of
 * `path`. */
int kaas_replace(struct kaas_substrate *sub, const char *path, const void *buf, size_t len);
/* The same with the file's permission bits (kaas_replace: 0644; secrets,
 * credentials and ACLs: 0600, on backends that keep modes). */
int kaas_replace_mode(struct kaas_substrate *sub, const char *path, const void *buf, size_t len,
		      uint32_t mode);

enum kaas_sweep_scope {
	/* Only temps and exclusive-create private names made on this host
	 * whose process is gone: another pid that no process has, or our own
	 * pid with another incarnation (an earlier life of a restarted
	 * container, where every broker is PID 1).  Safe at any time. */
	KAAS_SWEEP_DEAD_LOCAL = 0,
	/* Every temp and private name in the directory.  Only for the fenced
	 * single writer of the directory (a new leader after its epoch bump):
	 * every other writer is by then fenced, so any temp there belongs to a
	 * dead incarnation. */
	KAAS_SWEEP_ALL = 1,
};

/* Remove stale replace temps and exclusive-create private names
 * (KAAS_EXCL_PREFIX) in `dir`.  Idempotent: a name already gone counts as
 * removed.  Returns the number removed, or -errno (listing failed, or a
 * removal failed with something other than ENOENT). */
int kaas_sweep_temps(struct kaas_substrate *sub, const char *dir, enum kaas_sweep_scope scope);

/* Is the writer incarnation `inc` (0: a name in the format before
 * incarnations) live?  1 keep its names, 0 sweep `name`. */
typedef int (*kaas_live_fn)(void *arg, uint64_t inc, const char *name);

/* Remove the temps and private names in `dir` whose writer is dead, keyed
 * by incarnation: never this process's; for the rest `live` decides (the
 * broker: the incarnations in brokers/<id>.json it believes alive, and any
 * incarnation it has not yet seen for a liveness timeout).  Returns the
 * number removed or -errno, as kaas_sweep_temps.  Removing a live writer's
 * temp never damages data: its rename then fails (ENOENT) and its replace
 * reports the failure. */
int kaas_sweep_stale(struct kaas_substrate *sub, const char *dir, kaas_live_fn live, void *arg);

/* Is `name` (a bare file name) a replace temp? */
int kaas_is_temp_name(const char *name);
/* Is `name` an exclusive create's private link name (KAAS_EXCL_PREFIX)? */
int kaas_is_excl_name(const char *name);

/* ------------------------------------------------------------------ claim */

/* Claimed names look like "<prefix>-<n:020>", e.g. epoch-00000000000000000042. */
#define KAAS_CLAIM_DIGITS 20

/* Exclusive-create "<dir>/<prefix>-<n>" for the smallest n >= from that no
 * one has claimed; on -EEXIST try n+1, up to `tries` numbers.  On success
 * *won is the number this caller owns (no other caller on any host can ever
 * be told it owns it) and 0 is returned.  The file's content (`note`,
 * optional, may be NULL) is advisory only: readers must rely on the name.
 * Returns -EEXIST if all `tries` numbers were taken, or another -errno. */
int kaas_claim(struct kaas_substrate *sub, const char *dir, const char *prefix,
	       uint64_t from, unsigned tries, const char *note, uint64_t *won);

/* Exclusive-create exactly "<dir>/<prefix>-<n>": 0 if this caller won it,
 * -EEXIST if someone else had, or another -errno. */
int kaas_claim_exact(struct kaas_substrate *sub, const char *dir, const char *prefix, uint64_t n,
		     const char *note);

/* The highest n of any "<prefix>-<n>" in dir: 0 with *n set, -ENOENT when
 * there is none (or the directory is missing), or another -errno. */
int kaas_claim_latest(struct kaas_substrate *sub, const char *dir, const char *prefix,
		      uint64_t *n);

/* Format/parse a claim name.  kaas_claim_name writes into buf (size >= 
 * strlen(prefix)+22); kaas_claim_parse returns 0 and *n if `name` is exactly
 * "<prefix>-<20 digits>", else -EINVAL. */
void kaas_claim_name(char *buf, size_t size, const char *prefix, uint64_t n);
int kaas_claim_parse(const char *name, const char *prefix, uint64_t *n);

/* --------------------------------------------------------------- converge */

/* One attempt at an idempotent step.  Returns KAAS_DONE when the end state is
 * reached, KAAS_NOT_YET when another attempt is needed (progress possible:
 * a silly-renamed file still held, a racer mid-way, a retryable error), or
 * -errno for a failure that further attempts cannot fix. */
#define KAAS_DONE 1
#define KAAS_NOT_YET 0
typedef int (*kaas_step_fn)(void *arg);

struct kaas_converge_opts {
	unsigned max_attempts;  /* 0: default 50 */
	unsigned first_delay_us;/* 0: default 1000 (1 ms) */
	unsigned max_delay_us;  /* 0: default 200000 (200 ms); the backoff doubles up to this */
	uint64_t deadline_ms;   /* 0: none; otherwise give up after this long */
};

/* Run step until it returns KAAS_DONE, sleeping with bounded exponential
 * backoff between attempts.  Returns 0 when done, -EAGAIN when attempts or
 * time ran out with the work still unfinished (the caller MUST record it and
 * re-drive it later — see kaas_pending), or the step's final -errno. */
int kaas_converge(kaas_step_fn step, void *arg, const struct kaas_converge_opts *opts);

/* A list of unfinished convergent work, re-driven later (never dropped).
 * Not thread-safe: one owner drives it. */
struct kaas_pending_item {
	struct kaas_pending_item *next;
	char *what;             /* description for logs */
	kaas_step_fn step;
	void *arg;
	void (*free_arg)(void *arg); /* may be NULL */
	unsigned attempts;
};
struct kaas_pending {
	struct kaas_pending_item *head;
	size_t count;
};
/* Record work that has not reached its end state.  Takes ownership of arg
 * (freed with free_arg when the work completes or the list is cleared).
 * Returns 0 or -ENOMEM (in which case arg is NOT freed). */
int kaas_pending_add(struct kaas_pending *p, const char *what, kaas_step_fn step, void *arg,
		     void (*free_arg)(void *));
/* Run one attempt of every recorded step; completed ones are removed.
 * Items whose step fails finally stay recorded too (their last error is
 * returned) so an operator sees them.  Returns the number still pending. */
size_t kaas_pending_drive(struct kaas_pending *p);
/* Free every item (shutdown). */
void kaas_pending_clear(struct kaas_pending *p);

/* ---------------------------------------------------------- fresh lookups */

/* What a lookup by name may answer (the RWX contract gives close-to-open
 * and listings, not fresh lookups): "no such name" can come from the
 * host's cache.  A kernel NFS client keeps a negative entry until the
 * directory's attributes time out (acdirmin, 30 s) even after another host
 * created the name; faultfs models it (neg_timeout_ms).  Opening a
 * directory (close-to-open: its cached entries, positive and negative, are
 * dropped if it changed) and listing it are answered by the server.  So an
 * ENOENT that decides something ("never committed", "no such group") must
 * be confirmed before it is believed.
 *
 * Open and close every directory on the way to `path`, from the root down
 * (not `path` itself), so the next lookup of `path` and of each of its
 * ancestors is answered by the server.  0; -ENOENT if an ancestor is
 * missing on the server (so is `path`); or -errno. */
int kaas_revalidate_parents(struct kaas_substrate *sub, const char *path);

/* kaas_sub_list with an ENOENT confirmed: on -ENOENT the directories on the
 * way are revalidated (kaas_revalidate_parents) and the listing tried
 * again, so -ENOENT means `dir` is missing on the server, not only in this
 * host's cache.  Otherwise as kaas_sub_list. */
int kaas_list_fresh(struct kaas_substrate *sub, const char *dir, struct kaas_dirlist *out);

/* ------------------------------------------------------------ remove_tree */

/* One pass of a recursive delete of `path` (file or directory).  Children
 * first; ENOENT anywhere counts as already done; a silly-renamed .nfs entry
 * (EBUSY on unlink) or ENOTEMPTY from rmdir means "not yet".  Interrupted at
 * any point, the next call resumes from what is left.
 * Returns KAAS_DONE when `path` no longer exists, KAAS_NOT_YET when entries
 * remain that later passes may remove, or a final -errno. */
int kaas_remove_tree_step(struct kaas_substrate *sub, const char *path);

/* kaas_remove_tree_step under kaas_converge: 0 when gone, -EAGAIN when still
 * not done after the attempts (record it and re-drive), or -errno. */
int kaas_remove_tree(struct kaas_substrate *sub, const char *path,
		     const struct kaas_converge_opts *opts);

/* Is `name` an NFS silly-rename name (".nfs" followed by hex)? */
int kaas_is_silly_name(const char *name);

#endif
