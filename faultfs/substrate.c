/*
 * substrate.c — the in-process front of the fault model: the `fault+` URLs.
 *
 *   fault+<lower-url>?seed=S&host=H&config=FILE.json&profile=P&log=FILE
 *                    &rename_copy=1&fsync_lies=1&excl_race=1&attr_timeout_ms=N&neg_timeout_ms=N
 *
 * Every instance opened in one process over the same lower URL shares one
 * model, so two instances are two hosts of one simulated volume (host=H
 * picks the host; without it each instance gets the lowest free host).  The
 * first instance's parameters configure the shared model.  Instances in
 * different processes share only the lower store.
 */
#include "faultfs/substrate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultfs/model.h"

struct shared_model {
	char *lower_url;
	pid_t pid;              /* a forked child never shares its parent's model */
	struct kaas_fault_model *m;
	int refs;
	int host_refs[KAAS_FAULT_MAX_HOSTS];
	struct shared_model *next;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct shared_model *registry;

struct fault_sub {
	struct kaas_substrate base;
	struct shared_model *shared;
	int host;
};

struct fault_file {
	struct kaas_file base;
	struct kaas_fault_handle *h;
};

#define S(sub) ((struct fault_sub *)(sub))
#define M(sub) (S(sub)->shared->m)
#define H(sub) (S(sub)->host)
#define FH(f) (((struct fault_file *)(f))->h)

static void fault_destroy(struct kaas_substrate *sub)
{
	struct shared_model *sm = S(sub)->shared;
	pthread_mutex_lock(&registry_mu);
	sm->host_refs[S(sub)->host]--;
	if (--sm->refs == 0) {
		for (struct shared_model **pp = &registry; *pp; pp = &(*pp)->next)
			if (*pp == sm) {
				*pp = sm->next;
				break;
			}
		kaas_fault_model_free(sm->m);
		free(sm->lower_url);
		free(sm);
	}
	pthread_mutex_unlock(&registry_mu);
	free(sub);
}

static int fault_open(struct kaas_substrate *sub, const char *path, int flags, uint32_t mode,
		      struct kaas_file *f)
{
	return kaas_fault_open(M(sub), H(sub), path, flags, mode, &FH(f));
}

static int fault_close(struct kaas_file *f)
{
	return kaas_fault_close(FH(f));
}

static ssize_t fault_pread(struct kaas_file *f, void *buf, size_t len, uint64_t off)
{
	return kaas_fault_pread(FH(f), buf, len, off);
}

static ssize_t fault_pwrite(struct kaas_file *f, const void *buf, size_t len, uint64_t off)
{
	return kaas_fault_pwrite(FH(f), buf, len, off);
}

static int fault_fsync(struct kaas_file *f)
{
	return kaas_fault_fsync(FH(f));
}

static int fault_ftruncate(struct kaas_file *f, uint64_t size)
{
	return kaas_fault_ftruncate(FH(f), size);
}

static int fault_fstat(struct kaas_file *f, struct kaas_stat *st)
{
	return kaas_fault_fstat(FH(f), st);
}

static int fault_stat(struct kaas_substrate *sub, const char *path, struct kaas_stat *st)
{
	return kaas_fault_stat(M(sub), H(sub), path, st);
}

static int fault_rename(struct kaas_substrate *sub, const char *from, const char *to)
{
	return kaas_fault_rename(M(sub), H(sub), from, to);
}

static int fault_unlink(struct kaas_substrate *sub, const char *path)
{
	return kaas_fault_unlink(M(sub), H(sub), path);
}

static int fault_mkdir(struct kaas_substrate *sub, const char *path, uint32_t mode)
{
	return kaas_fault_mkdir(M(sub), H(sub), path, mode);
}

static int fault_rmdir(struct kaas_substrate *sub, const char *path)
{
	return kaas_fault_rmdir(M(sub), H(sub), path);
}

static int fault_readdir(struct kaas_substrate *sub, const char *path, kaas_dirent_cb cb, void *arg)
{
	return kaas_fault_readdir(M(sub), H(sub), path, cb, arg);
}

static int fault_fsync_dir(struct kaas_substrate *sub, const char *path)
{
	return kaas_fault_fsync_dir(M(sub), H(sub), path);
}

static int fault_statfs(struct kaas_substrate *sub, const char *path, struct kaas_statfs *out)
{
	return kaas_fault_statfs(M(sub), H(sub), path, out);
}

static const struct kaas_substrate_ops fault_ops = {
	.version = KAAS_SUBSTRATE_OPS_VERSION,
	.name = "fault",
	.file_size = sizeof(struct fault_file),
	.destroy = fault_destroy,
	.open = fault_open,
	.close = fault_close,
	.pread = fault_pread,
	.pwrite = fault_pwrite,
	.fsync = fault_fsync,
	.ftruncate = fault_ftruncate,
	.fstat = fault_fstat,
	.stat = fault_stat,
	.rename = fault_rename,
	.unlink = fault_unlink,
	.mkdir = fault_mkdir,
	.rmdir = fault_rmdir,
	.readdir = fault_readdir,
	.fsync_dir = fault_fsync_dir,
	.statfs = fault_statfs,
	.sendfile = NULL,
	.fallocate = NULL,
	.readahead = NULL,
};

/* The parameters of a fault+ URL. */
struct params {
	char *lower;
	long long seed;
	int host;               /* -1: the lowest free one */
	char *config;           /* JSON text assembled from config= and the switches */
	char *log;
};

static const char *const keys[] = { "seed", "host", "config", "profile", "log", "rename_copy",
				    "fsync_lies", "excl_race", "attr_timeout_ms", "neg_timeout_ms", NULL };

static int known_key(const char *k, size_t n)
{
	for (int i = 0; keys[i]; i++)
		if (strlen(keys[i]) == n && !strncmp(keys[i], k, n))
			return 1;
	return 0;
}

/* Merge the config file's object with the URL's own keys into JSON text. */
static int parse_url(const char *url, struct params *p)
{
	memset(p, 0, sizeof *p);
	p->host = -1;
	const char *rest = url + strlen("fault+");
	const char *q = strrchr(rest, '?');
	/* the query is ours only if every key in it is ours (nfs:// has its own) */
	if (q) {
		const char *s = q + 1;
		while (*s) {
			size_t n = strcspn(s, "=&");
			if (!known_key(s, n)) {
				q = NULL;
				break;
			}
			s += strcspn(s, "&");
			if (*s)
				s++;
		}
	}
	p->lower = q ? strndup(rest, (size_t)(q - rest)) : strdup(rest);
	if (!p->lower)
		return -ENOMEM;
	if (!*p->lower)
		return kaas_sub_fail(EINVAL, "%s: fault+ needs a lower URL", url);
	char *cfg_file = NULL, *profile = NULL;
	char extra[512] = "";
	int rc = 0;
	for (const char *s = q ? q + 1 : ""; *s && rc == 0;) {
		size_t n = strcspn(s, "&");
		char *kv = strndup(s, n);
		char *eq = kv ? strchr(kv, '=') : NULL;
		const char *val = eq ? eq + 1 : "";
		if (eq)
			*eq = '\0';
		char *end = NULL;
		if (!kv) {
			rc = -ENOMEM;
		} else if (!strcmp(kv, "seed")) {
			p->seed = strtoll(val, &end, 0);
			if (!*val || *end || p->seed < 0)
				rc = kaas_sub_fail(EINVAL, "%s: seed must be a number >= 0", url);
		} else if (!strcmp(kv, "host")) {
			long h = strtol(val, &end, 10);
			if (!*val || *end || h < 0 || h >= KAAS_FAULT_MAX_HOSTS)
				rc = kaas_sub_fail(EINVAL, "%s: host must be 0..%d", url, KAAS_FAULT_MAX_HOSTS - 1);
			p->host = (int)h;
		} else if (!strcmp(kv, "config")) {
			free(cfg_file);
			cfg_file = strdup(val);
		} else if (!strcmp(kv, "profile")) {
			free(profile);
			profile = strdup(val);
		} else if (!strcmp(kv, "log")) {
			free(p->log);
			p->log = strdup(val);
		} else if (!strcmp(kv, "attr_timeout_ms") || !strcmp(kv, "neg_timeout_ms")) {
			long t = strtol(val, &end, 10);
			if (!*val || *end || t < 0)
				rc = kaas_sub_fail(EINVAL, "%s: %s must be >= 0", url, kv);
			snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",\"%s\":%ld", kv, t);
		} else {
			int on = !strcmp(val, "1") || !strcmp(val, "true") || !*val;
			if (!on && strcmp(val, "0") && strcmp(val, "false"))
				rc = kaas_sub_fail(EINVAL, "%s: %s must be 0 or 1", url, kv);
			snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",\"%s\":%s", kv,
				 on ? "true" : "false");
		}
		free(kv);
		s += n;
		if (*s)
			s++;
	}
	char *file_json = NULL;
	if (rc == 0 && cfg_file) {
		file_json = cfg_file[0] == '{' ? strdup(cfg_file) : kaas_fault_read_config(cfg_file);
		if (!file_json)
			rc = kaas_sub_fail(ENOENT, "%s: cannot read config file %s", url, cfg_file);
	}
	if (rc == 0 && profile && strcmp(profile, "nfs-floor") && strcmp(profile, "passthrough"))
		rc = kaas_sub_fail(EINVAL, "%s: profile must be nfs-floor or passthrough", url);
	if (rc == 0) {
		/* {"profile":P <extra>} then the file's object applied after */
		char *out = NULL;
		int r;
		if (profile)
			r = asprintf(&out, "{\"profile\":\"%s\"%s}", profile, extra);
		else
			r = asprintf(&out, "{%s}", extra[0] ? extra + 1 : "");
		if (r < 0)
			rc = -ENOMEM;
		p->config = out;
	}
	if (rc == 0 && file_json) {
		/* keep both: the file first, then the URL's keys */
		char *both = NULL;
		if (asprintf(&both, "%s\n%s", file_json, p->config) < 0)
			rc = -ENOMEM;
		free(p->config);
		p->config = both;
	}
	free(file_json);
	free(cfg_file);
	free(profile);
	return rc;
}

static void params_free(struct params *p)
{
	free(p->lower);
	free(p->config);
	free(p->log);
}

/* Apply the (one or two, newline-separated) config objects. */
static int configure_all(struct kaas_fault_model *m, char *config)
{
	char *nl = strrchr(config, '\n');
	if (nl) {
		*nl = '\0';
		int rc = kaas_fault_configure(m, config);
		*nl = '\n';
		if (rc < 0)
			return rc;
		return kaas_fault_configure(m, nl + 1);
	}
	return kaas_fault_configure(m, config);
}

static int fault_backend_open(const char *url, struct kaas_substrate **out)
{
	struct params p;
	int rc = parse_url(url, &p);
	if (rc < 0) {
		params_free(&p);
		return rc;
	}
	struct fault_sub *fs = calloc(1, sizeof *fs);
	if (!fs) {
		params_free(&p);
		return -ENOMEM;
	}
	pthread_mutex_lock(&registry_mu);
	struct shared_model *sm = registry;
	while (sm && (sm->pid != getpid() || strcmp(sm->lower_url, p.lower)))
		sm = sm->next;
	if (!sm) {
		sm = calloc(1, sizeof *sm);
		if (!sm) {
			rc = -ENOMEM;
		} else {
			/* the file's config may set a profile; then the URL's keys */
			rc = kaas_fault_model_new(p.lower, NULL, (uint64_t)p.seed, p.log, &sm->m);
			if (rc == 0)
				rc = configure_all(sm->m, p.config);
			if (rc < 0) {
				kaas_fault_model_free(sm->m);
				free(sm);
				sm = NULL;
			} else {
				sm->lower_url = strdup(p.lower);
				sm->pid = getpid();
				sm->next = registry;
				registry = sm;
			}
		}
	}
	if (sm) {
		int host = p.host;
		if (host < 0) {
			host = 0;
			while (host < KAAS_FAULT_MAX_HOSTS - 1 && sm->host_refs[host] > 0)
				host++;
		}
		sm->refs++;
		sm->host_refs[host]++;
		fs->host = host;
		fs->shared = sm;
	}
	pthread_mutex_unlock(&registry_mu);
	params_free(&p);
	if (rc < 0) {
		free(fs);
		return rc;
	}
	fs->base.ops = &fault_ops;
	snprintf(fs->base.host, sizeof fs->base.host, "fault%d", fs->host);
	*out = &fs->base;
	return 0;
}

const struct kaas_backend kaas_backend_fault = { "fault", fault_backend_open };

struct kaas_fault_model *kaas_fault_substrate_model(struct kaas_substrate *sub)
{
	return sub && sub->ops == &fault_ops ? M(sub) : NULL;
}

int kaas_fault_substrate_host(struct kaas_substrate *sub)
{
	return sub && sub->ops == &fault_ops ? H(sub) : -1;
}
