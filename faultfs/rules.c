/* rules.c — the fault schedule: rules, the seeded PRNG, the event log. */
#include "faultfs/internal.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const fm_op_names[FM_NOPS] = {
	"open", "create", "read", "write", "fsync", "close", "truncate", "stat",
	"rename", "unlink", "mkdir", "rmdir", "readdir", "statfs", "fsyncdir",
};

int64_t fm_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void fm_sleep_ms(int ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* splitmix64: small, fast, and the same on every platform. */
uint64_t fm_rand(struct kaas_fault_model *m)
{
	uint64_t z = (m->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double fm_draw(struct kaas_fault_model *m)
{
	return (double)(fm_rand(m) >> 11) / 9007199254740992.0;
}

unsigned fm_parse_ops(const char *s)
{
	if (!s || !*s)
		return 0;
	if (!strcmp(s, "*") || !strcmp(s, "all"))
		return (1u << FM_NOPS) - 1;
	unsigned mask = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",|");
		int found = 0;
		for (int i = 0; i < FM_NOPS; i++)
			if (strlen(fm_op_names[i]) == n && !strncmp(p, fm_op_names[i], n)) {
				mask |= 1u << i;
				found = 1;
			}
		if (n == 5 && !strncmp(p, "flush", 5)) { /* flush is the close-time publication */
			mask |= 1u << FM_CLOSE;
			found = 1;
		}
		if (!found)
			return 0;
		p += n;
		if (*p)
			p++;
	}
	return mask;
}

static const struct {
	const char *name;
	int err;
} errnames[] = {
	{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT }, { "ESTALE", ESTALE },
	{ "EACCES", EACCES }, { "EROFS", EROFS }, { "ETIMEDOUT", ETIMEDOUT },
	{ "EAGAIN", EAGAIN }, { "EBUSY", EBUSY }, { "ENOENT", ENOENT }, { "EEXIST", EEXIST },
};

/* The errno named s in errnames, or 0. */
static int errno_named(const char *s)
{
	for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
		if (!strcmp(errnames[i].name, s))
			return errnames[i].err;
	return 0;
}

const char *fm_errno_name(int err)
{
	for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return "?";
}

const char *fm_rule_fault_name(const struct fm_rule *r)
{
	switch (r->kind) {
	case FK_DELAY:
		return "delay";
	case FK_TORN:
		return "torn";
	case FK_KILL:
		return "kill";
	case FK_LOST:
		return "lost_reply";
	case FK_ERRNO:
		return fm_errno_name(r->err);
	}
	return "?";
}

int fm_rule_add(struct kaas_fault_model *m, const cJSON *obj)
{
	if (!cJSON_IsObject(obj))
		return kaas_sub_fail(EINVAL, "fault rule: not a JSON object");
	struct fm_rule *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->host = -1;
	r->prob = 1.0;
	r->times = -1;
	r->ops = (1u << FM_NOPS) - 1;
	int reply = 0;          /* "reply": FK_LOST's answer */
	const char *bad = NULL;
	const cJSON *it;
	cJSON_ArrayForEach(it, obj)
	{
		const char *k = it->string;
		if (!strcmp(k, "op") || !strcmp(k, "ops")) {
			r->ops = cJSON_IsString(it) ? fm_parse_ops(it->valuestring) : 0;
			if (!r->ops)
				bad = "op (a list like \"write,fsync\" of open create read write fsync close truncate stat rename unlink mkdir rmdir readdir statfs fsyncdir, or \"*\")";
		} else if (!strcmp(k, "path")) {
			if (!cJSON_IsString(it))
				bad = "path (a glob string)";
			else
				r->path = strdup(it->valuestring);
		} else if (!strcmp(k, "host")) {
			if (!cJSON_IsNumber(it) || it->valueint < -1 || it->valueint >= KAAS_FAULT_MAX_HOSTS)
				bad = "host (-1 or 0..15)";
			else
				r->host = it->valueint;
		} else if (!strcmp(k, "prob")) {
			if (!cJSON_IsNumber(it) || it->valuedouble <= 0 || it->valuedouble > 1)
				bad = "prob (0 < prob <= 1)";
			else
				r->prob = it->valuedouble;
		} else if (!strcmp(k, "after")) {
			if (!cJSON_IsNumber(it) || it->valuedouble < 0)
				bad = "after (>= 0)";
			else
				r->after = (long)it->valuedouble;
		} else if (!strcmp(k, "times")) {
			if (!cJSON_IsNumber(it) || it->valuedouble < -1 || it->valuedouble == 0)
				bad = "times (-1 for forever, or >= 1)";
			else
				r->times = (long)it->valuedouble;
		} else if (!strcmp(k, "delay_ms")) {
			if (!cJSON_IsNumber(it) || it->valueint < 0 || it->valueint > 600000)
				bad = "delay_ms (0..600000)";
			else
				r->delay_ms = it->valueint;
		} else if (!strcmp(k, "reply")) {
			reply = cJSON_IsString(it) ? errno_named(it->valuestring) : 0;
			if (!reply)
				bad = "reply (EIO ENOSPC EDQUOT ESTALE EACCES EROFS ETIMEDOUT EAGAIN EBUSY ENOENT EEXIST)";
		} else if (!strcmp(k, "fault")) {
			const char *f = cJSON_IsString(it) ? it->valuestring : "";
			if (!strcmp(f, "delay"))
				r->kind = FK_DELAY;
			else if (!strcmp(f, "torn"))
				r->kind = FK_TORN;
			else if (!strcmp(f, "kill"))
				r->kind = FK_KILL;
			else if (!strcmp(f, "lost_reply"))
				r->kind = FK_LOST;
			else {
				r->kind = FK_ERRNO;
				r->err = errno_named(f);
				if (!r->err)
					bad = "fault (EIO ENOSPC EDQUOT ESTALE EACCES EROFS ETIMEDOUT EAGAIN EBUSY ENOENT EEXIST delay torn kill lost_reply)";
			}
		} else if (!strcmp(k, "id")) {
			/* ignored on input */
		} else {
			bad = k;
		}
		if (bad)
			break;
	}
	if (!bad && r->kind == FK_ERRNO && !r->err)
		bad = "fault (missing)";
	if (!bad && reply && r->kind != FK_LOST)
		bad = "reply (only with \"fault\": \"lost_reply\")";
	if (!bad && r->kind == FK_LOST && !(r->ops & FM_LOST_OPS))
		bad = "op (a lost_reply rule needs one of create rename unlink mkdir rmdir)";
	if (!bad && r->kind == FK_LOST)
		r->err = reply;
	if (bad) {
		free(r->path);
		free(r);
		return kaas_sub_fail(EINVAL, "fault rule: bad or unknown key '%s'", bad);
	}
	r->id = ++m->next_rule_id;
	struct fm_rule **pp = &m->rules;
	while (*pp)
		pp = &(*pp)->next;
	*pp = r;
	return r->id;
}

int fm_rule_remove(struct kaas_fault_model *m, int id)
{
	for (struct fm_rule **pp = &m->rules; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			struct fm_rule *r = *pp;
			*pp = r->next;
			free(r->path);
			free(r);
			return 0;
		}
	return kaas_sub_fail(ENOENT, "no fault rule with id %d", id);
}

void fm_rules_free(struct kaas_fault_model *m)
{
	while (m->rules) {
		struct fm_rule *r = m->rules;
		m->rules = r->next;
		free(r->path);
		free(r);
	}
}

static void json_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

void fm_event(struct kaas_fault_model *m, int host, const char *op, const char *path,
	      const char *fault)
{
	char *line = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&line, &len);
	if (!mem)
		return;
	fprintf(mem, "{\"seq\":%llu,\"host\":%d,\"op\":\"", (unsigned long long)++m->seq, host);
	json_escape(mem, op);
	fprintf(mem, "\",\"path\":\"");
	json_escape(mem, path ? path : "");
	fprintf(mem, "\",\"fault\":\"");
	json_escape(mem, fault);
	fprintf(mem, "\"}");
	fclose(mem);
	if (m->log) {
		fprintf(m->log, "%s\n", line);
		fflush(m->log);
	}
	/* keep the last 1000 in memory for dump */
	if (m->nevents == 1000) {
		free(m->events[0]);
		memmove(m->events, m->events + 1, 999 * sizeof *m->events);
		m->nevents--;
	}
	if (m->nevents == m->events_cap) {
		size_t cap = m->events_cap ? m->events_cap * 2 : 64;
		char **v = realloc(m->events, cap * sizeof *v);
		if (!v) {
			free(line);
			return;
		}
		m->events = v;
		m->events_cap = cap;
	}
	m->events[m->nevents++] = line;
}

struct fm_rule *fm_decide(struct kaas_fault_model *m, int host, enum fm_op op, const char *path)
{
	m->op_count[op]++;
	for (struct fm_rule *r = m->rules; r; r = r->next) {
		if (!(r->ops & (1u << op)))
			continue;
		if (r->kind == FK_LOST && !(FM_LOST_OPS & (1u << op)))
			continue; /* a reply only name operations can lose */
		if (r->host >= 0 && r->host != host)
			continue;
		if (r->path && fnmatch(r->path, path ? path : "", 0) != 0)
			continue;
		if (r->times >= 0 && r->fired >= r->times)
			continue;
		if (++r->seen <= r->after)
			continue;
		if (r->prob < 1.0 && fm_draw(m) >= r->prob)
			continue;
		r->fired++;
		m->fault_count[op]++;
		fm_event(m, host, fm_op_names[op], path, fm_rule_fault_name(r));
		return r;
	}
	return NULL;
}

char *kaas_fault_read_config(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(f);
	if (mem)
		fclose(mem);
	return buf;
}
