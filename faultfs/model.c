/* model.c — the fault model's core: lifetime, nodes, silly names, rule
 * application, host crash and heal.  Handle operations are in handles.c,
 * name operations in names.c. */
#include "faultfs/internal.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local pid_t caller_pid;

void kaas_fault_set_caller(pid_t pid)
{
	caller_pid = pid;
}

pid_t fm_caller(void)
{
	return caller_pid > 0 ? caller_pid : getpid();
}

int fm_bad_host(int host)
{
	return host < 0 || host >= KAAS_FAULT_MAX_HOSTS;
}

/* ---- nodes, attributes ---- */

struct fm_node *fm_node_find(struct kaas_fault_model *m, uint64_t ino)
{
	for (struct fm_node *n = m->nodes; n; n = n->next)
		if (n->ino == ino)
			return n;
	return NULL;
}

void fm_node_release(struct kaas_fault_model *m, struct fm_node *node)
{
	if (node->nopen > 0)
		return;
	for (struct fm_node **pp = &m->nodes; *pp; pp = &(*pp)->next)
		if (*pp == node) {
			*pp = node->next;
			break;
		}
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		fm_ext_free(&node->view[i].dirty);
		fm_ext_free(&node->view[i].undo);
		free(node->view[i].silly);
	}
	free(node);
}

/* A silly-renamed name some host still holds. */
int fm_silly_held(struct kaas_fault_model *m, int host, const char *path)
{
	for (struct fm_node *n = m->nodes; n; n = n->next)
		if (n->view[host].silly && !strcmp(n->view[host].silly, path))
			return 1;
	return 0;
}

/* Rename lower `path` (file node, held open by `host`) to its .nfs name. */
int fm_silly_rename(struct kaas_fault_model *m, int host, struct fm_node *node, const char *path)
{
	char *dir = kaas_path_dirname(path);
	char name[64];
	snprintf(name, sizeof name, ".nfs%016llx%08x", (unsigned long long)node->ino,
		 (unsigned)(++m->silly_counter & 0xffffffffu));
	char *silly = dir ? kaas_path_join(dir, name) : NULL;
	free(dir);
	if (!silly)
		return -ENOMEM;
	int rc = kaas_sub_rename(m->lower, path, silly);
	if (rc < 0) {
		free(silly);
		return rc;
	}
	if (node->view[host].silly) {
		/* already silly-renamed once (renamed back, then removed again) */
		free(node->view[host].silly);
	}
	node->view[host].silly = silly;
	fm_event(m, host, "unlink", path, "silly-rename");
	return 0;
}

/* ---- applying rule decisions ---- */

/* Decide and apply the fault for op.  0 to go on, or -errno.  Called and
 * returns with m->mu held (unlocked while delaying). */
int fm_apply(struct kaas_fault_model *m, int host, enum fm_op op, const char *path,
		 struct fm_decided *d)
{
	struct fm_rule *r = fm_decide(m, host, op, path);
	if (!r)
		return 0;
	switch (r->kind) {
	case FK_ERRNO:
		return kaas_sub_fail(r->err, "faultfs: injected %s on %s %s (host %d)",
				     fm_rule_fault_name(r), fm_op_names[op], path, host);
	case FK_DELAY: {
		int ms = r->delay_ms;
		UNLOCK(m);
		fm_sleep_ms(ms);
		LOCK(m);
		return 0;
	}
	case FK_TORN:
		if (d) {
			d->torn = 1;
			d->torn_delay_ms = r->delay_ms;
		}
		return 0;
	case FK_LOST:
		/* Only the ops in FM_LOST_OPS match a lost_reply rule, and
		 * each of them passes d. */
		assert(d && (FM_LOST_OPS & (1u << op)));
		d->lost = 1;
		d->lost_err = r->err;
		return 0;
	case FK_KILL: {
		pid_t pid = fm_caller();
		if (m->log)
			fflush(m->log);
		if (pid == getpid()) {
			UNLOCK(m);
			raise(SIGKILL);
			LOCK(m);
		} else {
			kill(pid, SIGKILL);
		}
		return kaas_sub_fail(EIO, "faultfs: killed the caller of %s %s", fm_op_names[op], path);
	}
	}
	return 0;
}

int fm_lost_reply(const struct fm_decided *d, int rc, enum fm_op op, int excl, const char *path,
		  int host)
{
	if (rc < 0 || !d->lost)
		return rc;
	int err = d->lost_err;
	if (!err)
		err = op == FM_CREATE ? (excl ? EEXIST : ETIMEDOUT)
		      : op == FM_MKDIR ? EEXIST : ENOENT;
	return kaas_sub_fail(err, "faultfs: lost reply: %s%s %s was applied, the answer is %s (host %d)",
			     excl ? "exclusive " : "", fm_op_names[op], path, fm_errno_name(err), host);
}

int fm_handle_check(struct kaas_fault_handle *h)
{
	if (h->dead)
		return kaas_sub_fail(EIO, "faultfs: %s: host %d crashed since this handle was opened",
				     h->path, h->host);
	if (h->node && h->node->removed)
		return kaas_sub_fail(ESTALE, "faultfs: %s: removed by another host (stale file handle)",
				     h->path);
	return 0;
}

/* ---- model lifetime ---- */

void kaas_fault_model_free(struct kaas_fault_model *m)
{
	if (!m)
		return;
	while (m->nodes) {
		struct fm_node *n = m->nodes;
		n->nopen = 0;
		fm_node_release(m, n);
	}
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		fm_attr_forget_all(&m->hosts[i]);
		fm_neg_forget_all(&m->hosts[i]);
		for (size_t j = 0; j < m->hosts[i].nleftovers; j++)
			free(m->hosts[i].leftovers[j]);
		free(m->hosts[i].leftovers);
	}
	while (m->recent) {
		struct fm_recent *r = m->recent;
		m->recent = r->next;
		free(r->path);
		free(r);
	}
	fm_rules_free(m);
	for (size_t i = 0; i < m->nevents; i++)
		free(m->events[i]);
	free(m->events);
	if (m->log)
		fclose(m->log);
	kaas_substrate_close(m->lower);
	free(m->lower_url);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

int kaas_fault_model_new(const char *lower_url, const char *config_json, uint64_t seed,
			 const char *log_path, struct kaas_fault_model **out)
{
	*out = NULL;
	struct kaas_fault_model *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->mu, NULL);
	m->rng = seed;
	m->attr_timeout_ms = 1000;
	m->neg_timeout_ms = FM_NEG_TIMEOUT_DEFAULT_MS;
	m->writeback_bytes = 8u << 20;
	m->race_window_ms = 200;
	m->lower_url = strdup(lower_url);
	int rc = kaas_substrate_open(lower_url, &m->lower);
	if (rc < 0) {
		kaas_fault_model_free(m);
		return rc;
	}
	if (config_json && (rc = kaas_fault_configure(m, config_json)) < 0) {
		kaas_fault_model_free(m);
		return rc;
	}
	if (log_path && *log_path) {
		m->log = fopen(log_path, "w");
		if (!m->log) {
			rc = kaas_sub_fail(errno, "cannot write the event log %s: %s", log_path,
					   strerror(errno));
			kaas_fault_model_free(m);
			return rc;
		}
	}
	*out = m;
	return 0;
}

int kaas_fault_model_hosts(struct kaas_fault_model *m)
{
	LOCK(m);
	int n = 0;
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++)
		if (m->hosts[i].used)
			n = i + 1;
	UNLOCK(m);
	return n;
}

void fm_crash_locked(struct kaas_fault_model *m, int host)
{
	struct fm_host *hs = &m->hosts[host];
	hs->gen++;
	hs->crashes++;
	for (struct kaas_fault_handle *h = m->handles; h; h = h->next)
		if (h->host == host) {
			h->dead = 1;
			fm_ext_free(&h->lied);
		}
	for (struct fm_node *n = m->nodes; n; n = n->next) {
		fm_ext_free(&n->view[host].dirty);
		fm_ext_free(&n->view[host].undo);
	}
	fm_attr_forget_all(hs);
	fm_neg_forget_all(hs);
	fm_event(m, host, "crash", "", "crash");
}

int kaas_fault_crash(struct kaas_fault_model *m, int host)
{
	if (fm_bad_host(host))
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	fm_crash_locked(m, host);
	UNLOCK(m);
	return 0;
}

int fm_heal_locked(struct kaas_fault_model *m, int host)
{
	int removed = 0;
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		if (host >= 0 && i != host)
			continue;
		struct fm_host *hs = &m->hosts[i];
		for (size_t j = 0; j < hs->nleftovers; j++) {
			if (kaas_sub_unlink(m->lower, hs->leftovers[j]) == 0)
				removed++;
			fm_event(m, i, "heal", hs->leftovers[j], "heal");
			free(hs->leftovers[j]);
		}
		free(hs->leftovers);
		hs->leftovers = NULL;
		hs->nleftovers = 0;
	}
	return removed;
}

int kaas_fault_heal(struct kaas_fault_model *m, int host)
{
	if (host < -1 || host >= KAAS_FAULT_MAX_HOSTS)
		return kaas_sub_fail(EINVAL, "faultfs: no host %d", host);
	LOCK(m);
	int rc = fm_heal_locked(m, host);
	UNLOCK(m);
	return rc;
}

