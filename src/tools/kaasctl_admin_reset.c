/* kaasctl_admin_reset.c — `kaasctl group reset-offsets GROUP --topic T
 * --to-earliest|--to-latest|--to-offset N [--dry-run]`: as Kafka's tool,
 * only for a group with no members (Empty, or Dead: never formed); the
 * targets from ListOffsets (a --to-offset outside the log is clamped to
 * its start or end), committed with OffsetCommit as an admin does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin_group.h"

static int usage(void)
{
	fputs("usage: kaasctl group reset-offsets GROUP --topic T (--to-earliest | --to-latest |\n"
	      "           --to-offset N) [--dry-run]\n", stderr);
	return KCTL_EXIT_ERROR;
}

int kctl_group_commit(struct kctl_conn *c, const char *group, const char *topic,
		      const int32_t *parts, const int64_t *offsets, int n)
{
	int v = kctl_conn_pick(c, KAAS_API_OFFSET_COMMIT, 2, 5);
	if (v < 0)
		return kctl_error("%s", c->why);
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_OFFSET_COMMIT, (int16_t)v, 0);
	kaas_kw_str(&w, 0, group);
	kaas_kw_i32(&w, -1); /* generation: none, an admin's commit */
	kaas_kw_str(&w, 0, "");
	if (v <= 4)
		kaas_kw_i64(&w, -1); /* retention: the broker's */
	kaas_kw_array(&w, 0, 1);
	kaas_kw_str(&w, 0, topic);
	kaas_kw_array(&w, 0, n);
	for (int i = 0; i < n; i++) {
		kaas_kw_i32(&w, parts[i]);
		kaas_kw_i64(&w, offsets[i]);
		kaas_kw_str(&w, 0, "");
	}
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 0, &buf, &r) < 0)
		return kctl_error("OffsetCommit: %s", c->why);
	if (v >= 3)
		(void)kaas_kr_i32(&r);
	int rc = 0;
	int32_t nt = kaas_kr_array(&r, 0, 6);
	for (int32_t i = 0; i < nt && kaas_kr_ok(&r); i++) {
		(void)kaas_kr_str(&r, 0);
		int32_t np = kaas_kr_array(&r, 0, 6);
		for (int32_t j = 0; j < np && kaas_kr_ok(&r); j++) {
			int32_t p = kaas_kr_i32(&r);
			int16_t err = kaas_kr_i16(&r);
			if (err && rc == 0) {
				char what[400];
				snprintf(what, sizeof what, "commit of group %s at %s/%d", group, topic,
					 (int)p);
				rc = kctl_admin_kerr(what, err, NULL);
			}
		}
	}
	if (rc == 0 && !kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed OffsetCommit answer", c->addr);
	free(buf);
	return rc;
}

/* Is the group without members (Empty, or Dead: never formed or gone)? */
static int check_inactive(struct kctl_conn *c, const char *group)
{
	cJSON *o = cJSON_CreateObject();
	int rc = kctl_group_describe(c, group, o);
	if (rc == 0) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "state");
		const char *s = cJSON_IsString(st) ? st->valuestring : "?";
		int members = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "members"));
		if ((strcmp(s, "Empty") && strcmp(s, "Dead")) || members > 0)
			rc = kctl_error("group %s is %s with %d member(s): offsets are reset only "
					"while no consumer is in the group (stop them first)",
					group, s, members);
	}
	cJSON_Delete(o);
	return rc;
}

int kctl_admin_group_reset(struct kctl_admin *a, int argc, char **argv)
{
	if (argc < 3 || argv[2][0] == '-')
		return usage();
	const char *group = argv[2], *topic = NULL;
	int mode = 0, dry = 0; /* 1 earliest, 2 latest, 3 offset */
	long long to = 0;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--topic") && i + 1 < argc)
			topic = argv[++i];
		else if (!strcmp(argv[i], "--to-earliest"))
			mode = 1;
		else if (!strcmp(argv[i], "--to-latest"))
			mode = 2;
		else if (!strcmp(argv[i], "--to-offset") && i + 1 < argc) {
			char *e;
			errno = 0;
			to = strtoll(argv[++i], &e, 10);
			if (errno || *e || to < 0)
				return usage();
			mode = 3;
		} else if (!strcmp(argv[i], "--dry-run"))
			dry = 1;
		else
			return usage();
	}
	if (!topic || !mode)
		return usage();
	struct kctl_conn c;
	int32_t node;
	int rc = kctl_group_coordinator(a, group, &c, &node);
	if (rc == 0)
		rc = check_inactive(&c, group);
	struct kctl_md md = {0};
	const char *names[1] = { topic };
	if (rc == 0)
		rc = kctl_metadata(&a->boot, names, 1, &md);
	const struct kctl_md_topic *t = rc ? NULL : kctl_md_topic(&md, topic);
	if (rc == 0 && (!t || t->err))
		rc = kctl_admin_kerr(topic, t ? t->err : KAAS_KERR_UNKNOWN_TOPIC_OR_PARTITION, NULL);
	int n = t ? t->nparts : 0;
	int32_t *parts = calloc((size_t)n + 1, sizeof *parts);
	int64_t *lo = calloc((size_t)n + 1, sizeof *lo), *hi = calloc((size_t)n + 1, sizeof *hi);
	int64_t *target = calloc((size_t)n + 1, sizeof *target);
	if (rc == 0 && (!parts || !lo || !hi || !target))
		rc = kctl_error("out of memory");
	for (int i = 0; rc == 0 && i < n; i++)
		parts[i] = t->parts[i].id;
	if (rc == 0)
		rc = kctl_list_offsets(a, &md, topic, parts, n, -2, lo);
	if (rc == 0)
		rc = kctl_list_offsets(a, &md, topic, parts, n, -1, hi);
	for (int i = 0; rc == 0 && i < n; i++) {
		if (lo[i] < 0 || hi[i] < 0)
			rc = kctl_error("%s/%d: no log start or end offset", topic, (int)parts[i]);
		else
			target[i] = mode == 1 ? lo[i] : mode == 2 ? hi[i]
				: to < lo[i] ? lo[i] : to > hi[i] ? hi[i] : (int64_t)to;
	}
	if (rc == 0 && !dry)
		rc = kctl_group_commit(&c, group, topic, parts, target, n);
	kctl_conn_close(&c);
	if (rc == 0 && a->json) {
		cJSON *o = cJSON_CreateObject(), *arr;
		cJSON_AddStringToObject(o, "group", group);
		cJSON_AddBoolToObject(o, "dry_run", dry);
		arr = cJSON_AddArrayToObject(o, "offsets");
		for (int i = 0; i < n; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "topic", topic);
			cJSON_AddNumberToObject(x, "partition", parts[i]);
			cJSON_AddNumberToObject(x, "offset", (double)target[i]);
			cJSON_AddItemToArray(arr, x);
		}
		rc = kctl_json_emit(o);
	} else if (rc == 0) {
		printf("%-24s %9s %10s%s\n", "TOPIC", "PARTITION", "NEW-OFFSET",
		       dry ? "  (dry run: nothing committed)" : "");
		for (int i = 0; i < n; i++)
			printf("%-24s %9d %10lld\n", topic, (int)parts[i], (long long)target[i]);
	}
	kctl_md_free(&md);
	free(parts);
	free(lo);
	free(hi);
	free(target);
	return rc;
}
