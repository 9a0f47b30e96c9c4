/* kaasctl_groups.c — `kaasctl groups`: every consumer group with committed
 * offsets in <cluster>/groups/ (or, asked of its coordinator, with
 * members), its coordinator (slot, broker, epoch from the assignment), and
 * its committed offsets with the lag behind each partition's high
 * watermark.  A group whose offsets are all gone (DeleteGroups, expiry) is
 * not shown: Kafka no longer knows it either (its directory stays: the
 * fence in it is never removed).
 *
 * The volume holds committed offsets only: a group's members and state live
 * in its coordinator's memory (src/broker/groups); they are asked of the
 * coordinator (DescribeGroups, kaasctl_describe.c) unless --volume-only. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/agent.h"
#include "cluster/assignment.h"
#include "cluster/group_store.h"
#include "cluster/membership.h"
#include "contract/doc.h"
#include "log/log_inspect.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_describe.h"
#include "util/status.h"

/* The kind group_store.c writes its offsets documents with. */
#define GROUP_DOC_KIND "group-offsets"

/* The group name recorded in the newest offsets-<E>.json of groups/<enc>:
 * 0 and *name (malloc'd), -ENOENT (no offsets document), or -errno. */
static int group_name_of(struct kctl *k, const char *enc, char **name)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/%s", KAAS_GROUPS_DIR, enc);
	struct kaas_dirlist l;
	int rc = kaas_sub_list(k->cluster, dir, &l);
	if (rc < 0)
		return rc;
	const char *newest = NULL; /* the listing is sorted; names are zero-padded */
	for (size_t i = 0; i < l.n; i++) {
		unsigned long long e;
		int end = 0;
		if (sscanf(l.names[i], "offsets-%20llu.json%n", &e, &end) == 1 &&
		    l.names[i][end] == '\0' && strlen(l.names[i]) == 33)
			newest = l.names[i];
	}
	rc = -ENOENT;
	if (newest) {
		char path[800];
		snprintf(path, sizeof path, "%s/%s", dir, newest);
		cJSON *body;
		rc = kaas_doc_read(k->cluster, path, GROUP_DOC_KIND, 1, &body, NULL);
		if (rc == 0) {
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(body, "group");
			*name = cJSON_IsString(g) ? strdup(g->valuestring) : NULL;
			rc = *name ? 0 : kaas_sub_fail(EBADMSG, "%s: no group name", path);
			cJSON_Delete(body);
		}
	}
	kaas_dirlist_free(&l);
	return rc;
}

static const struct kctl_topic *find_topic(const struct kctl_topic *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static cJSON *offset_json(struct kctl *k, const struct kaas_committed *c,
			  const struct kctl_topic *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "topic", c->topic);
	cJSON_AddNumberToObject(o, "partition", c->partition);
	kaas_json_add_i64(o, "committed", c->offset);
	cJSON_AddNumberToObject(o, "leader_epoch", c->leader_epoch);
	kaas_json_add_i64(o, "commit_ms", c->commit_ms);
	if (c->metadata)
		kctl_add_text(o, "metadata", c->metadata);
	cJSON_AddStringToObject(o, "topic_id", c->topic_id);
	const char *why = NULL;
	if (!t || t->rc < 0)
		why = "the topic is not listed (deleted, or its document is unreadable)";
	else if (c->topic_id[0] && strcmp(c->topic_id, t->id) != 0)
		why = "committed to an earlier incarnation of the topic: not served";
	else if (c->partition >= t->doc.np)
		why = "no such partition";
	struct kaas_log_inspect li = { 0 };
	int rc = 0;
	if (!why) {
		char dir[300];
		kctl_part_dir(dir, sizeof dir, c->topic, c->partition);
		rc = kaas_log_inspect_open(k->data, dir, &li);
		if (rc < 0)
			why = rc == -ENOENT ? "no partition directory yet" : kaas_sub_errdetail();
	}
	if (why) {
		cJSON_AddNullToObject(o, "high_watermark");
		cJSON_AddNullToObject(o, "lag");
		cJSON_AddStringToObject(o, "note", why);
	} else {
		kaas_json_add_i64(o, "high_watermark", li.high_watermark);
		int64_t lag = li.high_watermark - c->offset;
		kaas_json_add_i64(o, "lag", lag < 0 ? 0 : lag);
	}
	kaas_log_inspect_free(&li);
	return o;
}

#define DESCRIBE_TIMEOUT_MS 3000

/* State and members from the coordinator broker, or why not. */
static void describe(struct kctl *k, cJSON *o, const cJSON *broker, const char *name)
{
	struct kaas_broker_info b;
	char why[512] = "no coordinator assigned";
	int rc = -1;
	if (cJSON_IsNumber(broker)) {
		rc = kaas_broker_read(k->cluster, (int32_t)broker->valuedouble, &b);
		if (rc < 0)
			snprintf(why, sizeof why, "no readable brokers/%d.json",
				 (int)broker->valuedouble);
		else if (b.stopped)
			snprintf(why, sizeof why, "the coordinator, broker %d, is stopped", b.id);
		else
			rc = kctl_describe_group(b.host, b.port, name, DESCRIBE_TIMEOUT_MS, o, why,
						 sizeof why);
	}
	if (rc < 0) {
		cJSON_AddNullToObject(o, "state");
		cJSON_AddNullToObject(o, "members");
		kctl_add_text(o, "describe_error", why);
	}
}

/* The group as shown (NULL: a group without committed offsets or members,
 * which a listing does not show; `named`: asked for by name, shown
 * anyway). */
static cJSON *group_json(struct kctl *k, const char *name, const struct kaas_assignment *as,
			 const struct kctl_topic *t, size_t nt, int ask, int named)
{
	struct kaas_group_offsets g;
	int rc = kaas_group_peek(k->cluster, name, &g);
	size_t noffs = rc == 0 ? g.n : 0;
	if (rc == 0)
		kaas_group_offsets_free(&g);
	if (rc == 0 && noffs == 0 && !ask && !named)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	kctl_add_text(o, "group", name);
	int32_t slot = kaas_coordinator_slot_of(name, strlen(name), k->cfg.coordinator_slots);
	cJSON *co = cJSON_AddObjectToObject(o, "coordinator");
	cJSON_AddNumberToObject(co, "slot", slot);
	kctl_add_leader(co, as, KAAS_COORDINATOR_TOPIC, slot, "broker", "epoch");
	if (ask) {
		describe(k, o, cJSON_GetObjectItemCaseSensitive(co, "broker"), name);
	} else {
		cJSON_AddNullToObject(o, "state");
		cJSON_AddNullToObject(o, "members");
	}
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "members");
	if (rc == 0 && noffs == 0 && cJSON_GetArraySize(ms) == 0 && !named) {
		cJSON_Delete(o); /* deleted, or never committed to, and nobody in it */
		return NULL;
	}
	rc = kaas_group_peek(k->cluster, name, &g);
	if (rc < 0) {
		char why[600];
		snprintf(why, sizeof why, "%s: %s", kaas_strerror(rc), kaas_sub_errdetail());
		cJSON_AddStringToObject(o, "error", why);
		return o;
	}
	kaas_json_add_u64(o, "offsets_epoch", g.epoch);
	cJSON *arr = cJSON_AddArrayToObject(o, "offsets");
	for (size_t i = 0; i < g.n; i++)
		cJSON_AddItemToArray(arr, offset_json(k, &g.items[i], find_topic(t, nt,
										   g.items[i].topic)));
	kaas_group_offsets_free(&g);
	return o;
}

/* "group G: state S, N member(s): id (client, host), ..." */
static void print_state(const cJSON *g, const char *shown)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(g, "state");
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(g, "describe_error");
	if (cJSON_IsString(why))
		printf("group %s: state unknown (%s)\n", shown, why->valuestring);
	if (!cJSON_IsString(st))
		return;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(g, "members"), *m;
	printf("group %s: state %s, %d member(s)", shown, st->valuestring, cJSON_GetArraySize(ms));
	const char *sep = ": ";
	cJSON_ArrayForEach(m, ms) {
		printf("%s%s (%s, %s)", sep,
		       cJSON_GetObjectItemCaseSensitive(m, "member_id")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(m, "client_id")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(m, "client_host")->valuestring);
		sep = ", ";
	}
	printf("\n");
}

static void print_table(const cJSON *groups)
{
	printf("%-24s %-5s %-11s %-24s %9s %12s %14s %8s\n", "GROUP", "SLOT", "COORDINATOR",
	       "TOPIC", "PARTITION", "COMMITTED", "HIGH-WATERMARK", "LAG");
	const cJSON *g;
	cJSON_ArrayForEach(g, groups) {
		const char *name = cJSON_GetObjectItemCaseSensitive(g, "group")->valuestring;
		char *shown = kctl_escape(name, strlen(name));
		const cJSON *co = cJSON_GetObjectItemCaseSensitive(g, "coordinator");
		char coord[32], hws[32], lags[32];
		kctl_num_text(co, "broker", coord);
		int slot = (int)cJSON_GetObjectItemCaseSensitive(co, "slot")->valuedouble;
		print_state(g, shown);
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(g, "error");
		const cJSON *offs = cJSON_GetObjectItemCaseSensitive(g, "offsets");
		if (cJSON_IsString(err) || !cJSON_GetArraySize(offs))
			printf("%-24s %-5d %-11s %s\n", shown ? shown : "", slot, coord,
			       cJSON_IsString(err) ? err->valuestring : "(no committed offsets)");
		const cJSON *o;
		cJSON_ArrayForEach(o, offs) {
			const cJSON *note = cJSON_GetObjectItemCaseSensitive(o, "note");
			kctl_num_text(o, "high_watermark", hws);
			kctl_num_text(o, "lag", lags);
			printf("%-24s %-5d %-11s %-24s %9d %12.0f %14s %8s%s%s\n", shown ? shown : "",
			       slot, coord, cJSON_GetObjectItemCaseSensitive(o, "topic")->valuestring,
			       (int)cJSON_GetObjectItemCaseSensitive(o, "partition")->valuedouble,
			       cJSON_GetObjectItemCaseSensitive(o, "committed")->valuedouble, hws, lags,
			       cJSON_IsString(note) ? "  " : "",
			       cJSON_IsString(note) ? note->valuestring : "");
		}
		free(shown);
	}
}

int kctl_cmd_groups(struct kctl *k, int argc, char **argv)
{
	static const struct option lo[] = { { "group", required_argument, 0, 'g' },
					    { "volume-only", no_argument, 0, 'v' },
					    { 0, 0, 0, 0 } };
	const char *only = NULL;
	int ask = 1, ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'g')
			only = optarg;
		else if (ch == 'v')
			ask = 0;
		else
			return kctl_error("usage: groups [--group G] [--volume-only]");
	}
	if (optind != argc)
		return kctl_error("groups: unexpected argument '%s'", argv[optind]);
	struct kaas_dirlist l = { 0 };
	int rc = kaas_sub_list(k->cluster, KAAS_GROUPS_DIR, &l);
	if (rc < 0 && rc != -ENOENT)
		return kctl_error("listing %s/%s: %s (%s)", k->cluster_url, KAAS_GROUPS_DIR,
				  kaas_strerror(rc), kaas_sub_errdetail());
	struct kaas_assignment as = { 0 };
	kaas_assignment_read(k->cluster, &as, NULL); /* none: no coordinators shown */
	struct kctl_topic *t = NULL;
	size_t nt = 0;
	kctl_topics(k, &t, &nt);
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "groups");
	int found = 0;
	for (size_t i = 0; i < l.n; i++) {
		char *name = NULL;
		if (l.types[i] == KAAS_FT_FILE || group_name_of(k, l.names[i], &name) < 0)
			continue; /* a group without committed offsets, or not a group */
		cJSON *o = !only || strcmp(only, name) == 0 ? group_json(k, name, &as, t, nt, ask, only != NULL)
							    : NULL;
		if (o) {
			cJSON_AddItemToArray(arr, o);
			found = 1;
		}
		free(name);
	}
	kaas_dirlist_free(&l);
	kaas_assignment_free(&as);
	free(t);
	if (only && !found) {
		cJSON_Delete(root);
		return kctl_error("no group '%s' with committed offsets in %s", only, k->cluster_url);
	}
	if (k->json)
		return kctl_json_emit(root) ? KCTL_EXIT_ERROR : KCTL_EXIT_OK;
	print_table(arr);
	cJSON_Delete(root);
	return KCTL_EXIT_OK;
}
