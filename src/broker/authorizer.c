/* authorizer.c — the ACL decision and its cache (broker/authorizer.h). */
#include "broker/authorizer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/logger.h"
#include "util/thread_name.h"
#include "util/lock_rank.h"

/* One cached document: its name and binding (bad: unreadable). */
struct entry {
	char doc[40];
	int bad;
	struct kaas_acl acl;
};

struct kaas_authz {
	struct kaas_substrate *cluster;
	const struct kaas_config *cfg;
	int enabled;
	int allow_if_no_acl;
	char **supers;
	size_t nsupers;

	pthread_rwlock_t lock;  /* the cache */
	struct entry *v;
	size_t n;
	size_t nbad;            /* unreadable documents: refuse all but super users */

	pthread_mutex_t mu;     /* the thread's stop flag */
	pthread_cond_t cv;
	int stop, started;
	pthread_t thread;
	pthread_mutex_t refresh_mu; /* one refresh at a time */
};

/* ------------------------------------------------------------ settings */

int kaas_config_authz_key(const char *key)
{
	return strcmp(key, "authorizer.class.name") == 0 || strcmp(key, "super.users") == 0 ||
	       strcmp(key, "allow.everyone.if.no.acl.found") == 0;
}

int kaas_config_authz_apply(struct kaas_config *c, const char *key, const char *v)
{
	struct kaas_authz_cfg *a = &c->authz;
	if (strcmp(key, "authorizer.class.name") == 0) {
		a->disabled = *v == '\0';
		return 0;
	}
	if (strcmp(key, "super.users") == 0)
		return kaas_config_set_str(&a->super_users, v);
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		a->allow_if_no_acl_set = 1;
		a->allow_if_no_acl = v[0] == 't';
		return 0;
	}
	fprintf(stderr, "kaasd: bad value '%s' for %s (true or false)\n", v, key);
	return -EINVAL;
}

void kaas_config_authz_free(struct kaas_config *c)
{
	free(c->authz.super_users);
	c->authz.super_users = NULL;
}

static int parse_supers(struct kaas_authz *az, const char *list)
{
	if (!list)
		return 0;
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		while (*t == ' ')
			t++;
		size_t len = strlen(t);
		while (len && t[len - 1] == ' ')
			t[--len] = '\0';
		if (!len)
			continue;
		char **nv = realloc(az->supers, (az->nsupers + 1) * sizeof(*nv));
		if (!nv || !(nv[az->nsupers] = strdup(t))) {
			if (nv)
				az->supers = nv;
			free(copy);
			return -ENOMEM;
		}
		az->supers = nv;
		az->nsupers++;
	}
	free(copy);
	return 0;
}

/* --------------------------------------------------------------- cache */

static struct entry *find_entry(struct entry *v, size_t n, const char *doc)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].doc, doc) == 0)
			return &v[i];
	return NULL;
}

static void free_entries(struct entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kaas_acl_clear(&v[i].acl);
	free(v);
}

int kaas_authz_refresh(struct kaas_authz *az)
{
	if (!az || !az->enabled)
		return 0;
	kaas_lock(&az->refresh_mu, KAAS_RANK_AUTHZ_REFRESH);
	struct kaas_dirlist l;
	int rc = kaas_acl_store_list(az->cluster, &l);
	if (rc < 0) {
		kaas_warn("ACLs: cannot list %s: %s (the last bindings read stay in force)",
			  KAAS_ACLS_DIR, kaas_sub_errdetail());
		kaas_unlock(&az->refresh_mu);
		return rc;
	}
	/* Build the new cache: known names are copied from the old one (a
	 * name never changes content), new ones read. */
	struct entry *nv = calloc(l.n + 1, sizeof(*nv));
	size_t nn = 0, nbad = 0;
	if (!nv)
		rc = -ENOMEM;
	/* az->v changes only here, under refresh_mu: read it without lock. */
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		struct entry *old = find_entry(az->v, az->n, l.names[i]);
		struct entry *e = &nv[nn];
		snprintf(e->doc, sizeof e->doc, "%s", l.names[i]);
		if (old && !old->bad) {
			rc = kaas_acl_copy(&e->acl, &old->acl);
		} else {
			int r = kaas_acl_store_read(az->cluster, l.names[i], &e->acl);
			if (r == -ENOENT)
				continue; /* removed since the listing */
			if (r < 0) {
				if (!old)
					kaas_error("ACLs: %s/%s unreadable (%s): every request but "
						   "a super user's is refused until it is removed",
						   KAAS_ACLS_DIR, l.names[i], kaas_sub_errdetail());
				e->bad = 1;
				nbad++;
			}
		}
		nn++;
	}
	kaas_dirlist_free(&l);
	if (rc < 0) {
		free_entries(nv, nn);
		kaas_unlock(&az->refresh_mu);
		return rc;
	}
	kaas_wrlock(&az->lock, KAAS_RANK_AUTHZ_CACHE);
	struct entry *ov = az->v;
	size_t on = az->n;
	az->v = nv;
	az->n = nn;
	az->nbad = nbad;
	kaas_rwunlock(&az->lock);
	free_entries(ov, on);
	kaas_unlock(&az->refresh_mu);
	return 0;
}

static void *refresh_thread(void *arg)
{
	struct kaas_authz *az = arg;
	kaas_thread_name("kaas-authz");
	kaas_lock(&az->mu, KAAS_RANK_LEAF);
	while (!az->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)az->cfg->heartbeat_ms * 1000000ull;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_cond_timedwait(&az->cv, &az->mu, &ts);
		if (az->stop)
			break;
		kaas_unlock(&az->mu);
		(void)kaas_authz_refresh(az);
		kaas_lock(&az->mu, KAAS_RANK_LEAF);
	}
	kaas_unlock(&az->mu);
	return NULL;
}

/* ----------------------------------------------------------- lifecycle */

static int default_allow(const struct kaas_config *cfg)
{
	if (cfg->authz.allow_if_no_acl_set)
		return cfg->authz.allow_if_no_acl;
	for (int i = 0; i < cfg->sec.n; i++)
		if (cfg->sec.l[i].protocol != KAAS_SEC_PLAINTEXT)
			return 0;
	return 1;
}

int kaas_authz_new(struct kaas_substrate *cluster, const struct kaas_config *cfg,
		   struct kaas_authz **out)
{
	struct kaas_authz *az = calloc(1, sizeof(*az));
	if (!az)
		return -ENOMEM;
	az->cluster = cluster;
	az->cfg = cfg;
	az->enabled = !cfg->authz.disabled;
	az->allow_if_no_acl = default_allow(cfg);
	pthread_rwlock_init(&az->lock, NULL);
	pthread_mutex_init(&az->mu, NULL);
	pthread_mutex_init(&az->refresh_mu, NULL);
	pthread_cond_init(&az->cv, NULL);
	int rc = parse_supers(az, cfg->authz.super_users);
	if (rc == 0)
		rc = kaas_authz_refresh(az);
	if (rc < 0) {
		kaas_authz_free(az);
		return rc;
	}
	if (az->enabled)
		kaas_info("authorizer: on (%zu binding(s), %zu super user(s), "
			  "allow.everyone.if.no.acl.found=%s)", az->n, az->nsupers,
			  az->allow_if_no_acl ? "true" : "false");
	else
		kaas_info("authorizer: off (authorizer.class.name is empty)");
	*out = az;
	return 0;
}

int kaas_authz_start(struct kaas_authz *az)
{
	if (!az->enabled)
		return 0;
	int rc = pthread_create(&az->thread, NULL, refresh_thread, az);
	if (rc != 0)
		return -rc;
	az->started = 1;
	return 0;
}

void kaas_authz_free(struct kaas_authz *az)
{
	if (!az)
		return;
	if (az->started) {
		kaas_lock(&az->mu, KAAS_RANK_LEAF);
		az->stop = 1;
		pthread_cond_signal(&az->cv);
		kaas_unlock(&az->mu);
		pthread_join(az->thread, NULL);
	}
	free_entries(az->v, az->n);
	for (size_t i = 0; i < az->nsupers; i++)
		free(az->supers[i]);
	free(az->supers);
	pthread_rwlock_destroy(&az->lock);
	pthread_mutex_destroy(&az->mu);
	pthread_mutex_destroy(&az->refresh_mu);
	pthread_cond_destroy(&az->cv);
	free(az);
}

/* ------------------------------------------------------------ decision */

int kaas_authz_enabled(const struct kaas_authz *az)
{
	return az && az->enabled;
}

int kaas_authz_super(const struct kaas_authz *az, const char *principal)
{
	for (size_t i = 0; az && i < az->nsupers; i++)
		if (strcmp(az->supers[i], principal) == 0)
			return 1;
	return 0;
}

/* Does binding a apply to the resource (type, name[0..len))? */
static int applies(const struct kaas_acl *a, int type, const char *name, size_t len)
{
	if (a->resource_type != type)
		return 0;
	size_t an = strlen(a->name);
	if (a->pattern_type == KAAS_PAT_LITERAL)
		return (an == 1 && a->name[0] == '*') ||
		       (an == len && memcmp(a->name, name, len) == 0);
	return an <= len && memcmp(a->name, name, an) == 0;
}

static int principal_matches(const char *acl, const char *principal)
{
	return strcmp(acl, "User:*") == 0 || strcmp(acl, principal) == 0;
}

/* Does an ALLOW for operation `granted` permit `op`? */
static int implies(int granted, int op)
{
	if (granted == op || granted == KAAS_OP_ALL)
		return 1;
	if (op == KAAS_OP_DESCRIBE)
		return granted == KAAS_OP_READ || granted == KAAS_OP_WRITE ||
		       granted == KAAS_OP_DELETE || granted == KAAS_OP_ALTER;
	if (op == KAAS_OP_DESCRIBE_CONFIGS)
		return granted == KAAS_OP_ALTER_CONFIGS;
	return 0;
}

int kaas_authz_allowed(struct kaas_authz *az, const char *principal, const char *host, int op,
		       int resource_type, const char *name, size_t len)
{
	if (!az || !az->enabled || kaas_authz_super(az, principal))
		return 1;
	int any = 0, deny = 0, allow = 0;
	kaas_rdlock(&az->lock, KAAS_RANK_AUTHZ_CACHE);
	if (az->nbad) {
		kaas_rwunlock(&az->lock);
		return 0;
	}
	for (size_t i = 0; i < az->n && !deny; i++) {
		const struct kaas_acl *a = &az->v[i].acl;
		if (!applies(a, resource_type, name, len))
			continue;
		any = 1;
		if (!principal_matches(a->principal, principal) ||
		    (strcmp(a->host, "*") != 0 && strcmp(a->host, host) != 0))
			continue;
		if (a->permission == KAAS_PERM_DENY)
			deny = a->operation == op || a->operation == KAAS_OP_ALL;
		else if (implies(a->operation, op))
			allow = 1;
	}
	kaas_rwunlock(&az->lock);
	if (deny)
		return 0;
	if (!any)
		return az->allow_if_no_acl;
	return allow;
}

/* Does the DENY binding d cover everything binding a names? */
static int covers(const struct kaas_acl *d, const struct kaas_acl *a)
{
	if (d->pattern_type == KAAS_PAT_LITERAL)
		return strcmp(d->name, "*") == 0 ||
		       (a->pattern_type == KAAS_PAT_LITERAL && strcmp(d->name, a->name) == 0);
	return strncmp(d->name, a->name, strlen(d->name)) == 0;
}

int kaas_authz_allowed_any(struct kaas_authz *az, const char *principal, const char *host,
			   int op, int resource_type)
{
	if (!az || !az->enabled || kaas_authz_super(az, principal))
		return 1;
	int any = 0, ok = 0;
	kaas_rdlock(&az->lock, KAAS_RANK_AUTHZ_CACHE);
	for (size_t i = 0; !az->nbad && i < az->n && !ok; i++) {
		const struct kaas_acl *a = &az->v[i].acl;
		if (a->resource_type != resource_type)
			continue;
		any = 1;
		if (a->permission != KAAS_PERM_ALLOW || !implies(a->operation, op) ||
		    !principal_matches(a->principal, principal) ||
		    (strcmp(a->host, "*") != 0 && strcmp(a->host, host) != 0))
			continue;
		ok = 1;
		for (size_t j = 0; j < az->n && ok; j++) {
			const struct kaas_acl *d = &az->v[j].acl;
			if (d->resource_type == resource_type && d->permission == KAAS_PERM_DENY &&
			    (d->operation == op || d->operation == KAAS_OP_ALL) &&
			    principal_matches(d->principal, principal) &&
			    (strcmp(d->host, "*") == 0 || strcmp(d->host, host) == 0) && covers(d, a))
				ok = 0;
		}
	}
	int bad = az->nbad != 0;
	kaas_rwunlock(&az->lock);
	if (bad)
		return 0;
	return ok || (!any && az->allow_if_no_acl);
}

size_t kaas_authz_foreach(struct kaas_authz *az, const struct kaas_acl_filter *f,
			  void (*fn)(void *arg, const struct kaas_acl *a), void *arg)
{
	size_t count = 0;
	if (!az)
		return 0;
	kaas_rdlock(&az->lock, KAAS_RANK_AUTHZ_CACHE);
	for (size_t i = 0; i < az->n; i++)
		if (!az->v[i].bad && kaas_acl_filter_match(f, &az->v[i].acl)) {
			fn(arg, &az->v[i].acl);
			count++;
		}
	kaas_rwunlock(&az->lock);
	return count;
}
