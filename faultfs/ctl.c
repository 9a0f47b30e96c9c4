/* ctl.c — the fault model's JSON config and control commands. */
#include "faultfs/internal.h"

#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int set_switch(struct kaas_fault_model *m, const char *name, int on)
{
	if (!strcmp(name, "rename_copy"))
		m->rename_copy = on;
	else if (!strcmp(name, "fsync_lies"))
		m->fsync_lies = on;
	else if (!strcmp(name, "excl_race"))
		m->excl_race = on;
	else
		return kaas_sub_fail(EINVAL, "faultfs: unknown switch '%s' (rename_copy, fsync_lies, excl_race)",
				     name);
	fm_event(m, -1, "switch", name, on ? "on" : "off");
	return 0;
}

/* Apply a parsed config object; m->mu held. */
static int configure_locked(struct kaas_fault_model *m, const cJSON *cfg)
{
	if (!cJSON_IsObject(cfg))
		return kaas_sub_fail(EINVAL, "faultfs config: not a JSON object");
	const cJSON *it;
	/* the profile first: it sets the defaults the other keys adjust */
	const cJSON *prof = cJSON_GetObjectItemCaseSensitive(cfg, "profile");
	if (prof) {
		const char *p = cJSON_IsString(prof) ? prof->valuestring : "";
		if (!strcmp(p, "passthrough")) {
			m->passthrough = 1;
			m->attr_timeout_ms = 0;
			m->neg_timeout_ms = 0;
		} else if (!strcmp(p, "nfs-floor")) {
			m->passthrough = 0;
		} else {
			return kaas_sub_fail(EINVAL, "faultfs config: profile must be \"nfs-floor\" or \"passthrough\"");
		}
	}
	cJSON_ArrayForEach(it, cfg)
	{
		const char *k = it->string;
		if (!strcmp(k, "profile"))
			continue;
		if (!strcmp(k, "seed")) {
			if (!cJSON_IsNumber(it) || it->valuedouble < 0)
				return kaas_sub_fail(EINVAL, "faultfs config: seed must be a number >= 0");
			m->rng = (uint64_t)it->valuedouble;
		} else if (!strcmp(k, "attr_timeout_ms")) {
			if (!cJSON_IsNumber(it) || it->valueint < 0)
				return kaas_sub_fail(EINVAL, "faultfs config: attr_timeout_ms must be >= 0");
			m->attr_timeout_ms = it->valueint;
		} else if (!strcmp(k, "neg_timeout_ms")) {
			if (!cJSON_IsNumber(it) || it->valueint < 0)
				return kaas_sub_fail(EINVAL, "faultfs config: neg_timeout_ms must be >= 0");
			m->neg_timeout_ms = it->valueint;
			if (!m->neg_timeout_ms)
				for (int h = 0; h < KAAS_FAULT_MAX_HOSTS; h++)
					fm_neg_forget_all(&m->hosts[h]);
		} else if (!strcmp(k, "writeback_bytes")) {
			if (!cJSON_IsNumber(it) || it->valuedouble < 1)
				return kaas_sub_fail(EINVAL, "faultfs config: writeback_bytes must be >= 1");
			m->writeback_bytes = (size_t)it->valuedouble;
		} else if (!strcmp(k, "race_window_ms")) {
			if (!cJSON_IsNumber(it) || it->valueint < 0)
				return kaas_sub_fail(EINVAL, "faultfs config: race_window_ms must be >= 0");
			m->race_window_ms = it->valueint;
		} else if (!strcmp(k, "rename_copy") || !strcmp(k, "fsync_lies") || !strcmp(k, "excl_race")) {
			if (!cJSON_IsBool(it))
				return kaas_sub_fail(EINVAL, "faultfs config: %s must be true or false", k);
			set_switch(m, k, cJSON_IsTrue(it));
		} else if (!strcmp(k, "rules")) {
			if (!cJSON_IsArray(it))
				return kaas_sub_fail(EINVAL, "faultfs config: rules must be an array");
			const cJSON *r;
			cJSON_ArrayForEach(r, it)
			{
				int rc = fm_rule_add(m, r);
				if (rc < 0)
					return rc;
			}
		} else {
			return kaas_sub_fail(EINVAL, "faultfs config: unknown key '%s'", k);
		}
	}
	return 0;
}

int kaas_fault_configure(struct kaas_fault_model *m, const char *json)
{
	cJSON *cfg = cJSON_Parse(json);
	if (!cfg)
		return kaas_sub_fail(EINVAL, "faultfs config: not valid JSON (near '%.20s')",
				     cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
	pthread_mutex_lock(&m->mu);
	int rc = configure_locked(m, cfg);
	pthread_mutex_unlock(&m->mu);
	cJSON_Delete(cfg);
	return rc;
}

static cJSON *rule_json(const struct fm_rule *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", r->id);
	char ops[256] = "";
	for (int i = 0; i < FM_NOPS; i++)
		if (r->ops & (1u << i)) {
			if (ops[0])
				strcat(ops, ",");
			strcat(ops, fm_op_names[i]);
		}
	cJSON_AddStringToObject(o, "op", ops);
	if (r->path)
		cJSON_AddStringToObject(o, "path", r->path);
	cJSON_AddNumberToObject(o, "host", r->host);
	cJSON_AddNumberToObject(o, "prob", r->prob);
	cJSON_AddNumberToObject(o, "after", (double)r->after);
	cJSON_AddNumberToObject(o, "times", (double)r->times);
	cJSON_AddStringToObject(o, "fault", fm_rule_fault_name(r));
	if (r->kind == FK_LOST && r->err)
		cJSON_AddStringToObject(o, "reply", fm_errno_name(r->err));
	cJSON_AddNumberToObject(o, "delay_ms", r->delay_ms);
	cJSON_AddNumberToObject(o, "seen", (double)r->seen);
	cJSON_AddNumberToObject(o, "fired", (double)r->fired);
	return o;
}

static void add_counters(struct kaas_fault_model *m, cJSON *reply)
{
	cJSON *ops = cJSON_AddObjectToObject(reply, "ops");
	cJSON *faults = cJSON_AddObjectToObject(reply, "faults");
	for (int i = 0; i < FM_NOPS; i++) {
		cJSON_AddNumberToObject(ops, fm_op_names[i], (double)m->op_count[i]);
		cJSON_AddNumberToObject(faults, fm_op_names[i], (double)m->fault_count[i]);
	}
	cJSON_AddNumberToObject(reply, "events", (double)m->seq);
	cJSON_AddNumberToObject(reply, "neg_hits", (double)m->neg_hits);
}

static void add_dump(struct kaas_fault_model *m, cJSON *reply)
{
	cJSON_AddStringToObject(reply, "lower", m->lower_url);
	cJSON_AddStringToObject(reply, "profile", m->passthrough ? "passthrough" : "nfs-floor");
	cJSON_AddNumberToObject(reply, "attr_timeout_ms", m->attr_timeout_ms);
	cJSON_AddNumberToObject(reply, "neg_timeout_ms", m->neg_timeout_ms);
	cJSON *sw = cJSON_AddObjectToObject(reply, "switches");
	cJSON_AddBoolToObject(sw, "rename_copy", m->rename_copy);
	cJSON_AddBoolToObject(sw, "fsync_lies", m->fsync_lies);
	cJSON_AddBoolToObject(sw, "excl_race", m->excl_race);
	cJSON *hosts = cJSON_AddArrayToObject(reply, "hosts");
	for (int i = 0; i < KAAS_FAULT_MAX_HOSTS; i++) {
		struct fm_host *hs = &m->hosts[i];
		if (!hs->used && !hs->crashes)
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "host", i);
		cJSON_AddNumberToObject(o, "crashes", (double)hs->crashes);
		int nh = 0;
		for (struct kaas_fault_handle *h = m->handles; h; h = h->next)
			nh += h->host == i;
		cJSON_AddNumberToObject(o, "handles", nh);
		cJSON *left = cJSON_AddArrayToObject(o, "leftovers");
		for (size_t j = 0; j < hs->nleftovers; j++)
			cJSON_AddItemToArray(left, cJSON_CreateString(hs->leftovers[j]));
		cJSON_AddItemToArray(hosts, o);
	}
	cJSON *handles = cJSON_AddArrayToObject(reply, "handles");
	for (struct kaas_fault_handle *h = m->handles; h; h = h->next) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "host", h->host);
		cJSON_AddStringToObject(o, "path", h->path);
		cJSON_AddBoolToObject(o, "dead", h->dead);
		cJSON_AddBoolToObject(o, "stale", h->node && h->node->removed);
		if (h->node) {
			struct fm_view *v = &h->node->view[h->host];
			cJSON_AddNumberToObject(o, "unpublished", (double)v->dirty.bytes);
			if (v->silly)
				cJSON_AddStringToObject(o, "silly", v->silly);
		}
		cJSON_AddItemToArray(handles, o);
	}
	cJSON *rules = cJSON_AddArrayToObject(reply, "rules");
	for (struct fm_rule *r = m->rules; r; r = r->next)
		cJSON_AddItemToArray(rules, rule_json(r));
	cJSON *ev = cJSON_AddArrayToObject(reply, "events");
	for (size_t i = 0; i < m->nevents; i++) {
		cJSON *e = cJSON_Parse(m->events[i]);
		if (e)
			cJSON_AddItemToArray(ev, e);
	}
	add_counters(m, reply);
}

static int host_arg(const cJSON *cmd, int dflt)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(cmd, "host");
	if (!h)
		return dflt;
	return cJSON_IsNumber(h) ? h->valueint : -2;
}

int kaas_fault_ctl(struct kaas_fault_model *m, const char *json, char **reply_out)
{
	*reply_out = NULL;
	cJSON *reply = cJSON_CreateObject();
	cJSON *cmd = cJSON_Parse(json);
	int rc = 0;
	const char *err = NULL;
	const cJSON *name = cmd ? cJSON_GetObjectItemCaseSensitive(cmd, "cmd") : NULL;
	if (!cmd || !cJSON_IsObject(cmd)) {
		rc = -EINVAL;
		err = "command is not a JSON object";
	} else if (!cJSON_IsString(name)) {
		rc = -EINVAL;
		err = "command has no \"cmd\" string (set clear crash heal switch dump counters config)";
	}
	if (rc == 0) {
		const char *c = name->valuestring;
		pthread_mutex_lock(&m->mu);
		kaas_sub_clear_error();
		if (!strcmp(c, "set")) {
			rc = fm_rule_add(m, cJSON_GetObjectItemCaseSensitive(cmd, "rule"));
			if (rc > 0) {
				cJSON_AddNumberToObject(reply, "id", rc);
				rc = 0;
			}
		} else if (!strcmp(c, "clear")) {
			const cJSON *idj = cJSON_GetObjectItemCaseSensitive(cmd, "id");
			if (idj && cJSON_IsNumber(idj))
				rc = fm_rule_remove(m, idj->valueint);
			else if (idj)
				rc = kaas_sub_fail(EINVAL, "clear: id must be a number");
			else
				fm_rules_free(m);
		} else if (!strcmp(c, "crash")) {
			int h = host_arg(cmd, -2);
			if (h < 0 || h >= KAAS_FAULT_MAX_HOSTS)
				rc = kaas_sub_fail(EINVAL, "crash: \"host\" must be 0..%d", KAAS_FAULT_MAX_HOSTS - 1);
			else
				fm_crash_locked(m, h);
		} else if (!strcmp(c, "heal")) {
			int h = host_arg(cmd, -1);
			if (h < -1 || h >= KAAS_FAULT_MAX_HOSTS)
				rc = kaas_sub_fail(EINVAL, "heal: \"host\" must be 0..%d", KAAS_FAULT_MAX_HOSTS - 1);
			else
				cJSON_AddNumberToObject(reply, "removed", fm_heal_locked(m, h));
		} else if (!strcmp(c, "switch")) {
			const cJSON *sn = cJSON_GetObjectItemCaseSensitive(cmd, "name");
			const cJSON *on = cJSON_GetObjectItemCaseSensitive(cmd, "on");
			if (!cJSON_IsString(sn) || !cJSON_IsBool(on))
				rc = kaas_sub_fail(EINVAL, "switch: needs \"name\" (string) and \"on\" (bool)");
			else
				rc = set_switch(m, sn->valuestring, cJSON_IsTrue(on));
		} else if (!strcmp(c, "config")) {
			rc = configure_locked(m, cJSON_GetObjectItemCaseSensitive(cmd, "config"));
		} else if (!strcmp(c, "dump")) {
			add_dump(m, reply);
		} else if (!strcmp(c, "counters")) {
			add_counters(m, reply);
		} else {
			rc = kaas_sub_fail(EINVAL, "unknown command '%s' (set clear crash heal switch config dump counters)", c);
		}
		if (rc < 0)
			err = kaas_sub_errdetail();
		pthread_mutex_unlock(&m->mu);
	}
	cJSON_AddBoolToObject(reply, "ok", rc >= 0);
	if (err)
		cJSON_AddStringToObject(reply, "error", err);
	*reply_out = cJSON_PrintUnformatted(reply);
	cJSON_Delete(reply);
	cJSON_Delete(cmd);
	return rc < 0 ? rc : 0;
}
