/* kaasctl_verify_docs.c — `kaasctl verify` for the cluster directory: every
 * document read through its own reader (kind, version, length, CRC), and
 * leftovers (temps, NFSv4 link names, silly renames) in every directory kaas
 * writes there.  Also kv_leftover, shared with the data volume's walk. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/acl_store.h"
#include "cluster/assignment.h"
#include "cluster/group_store.h"
#include "cluster/membership.h"
#include "cluster/quota_store.h"
#include "contract/doc.h"
#include "tools/kaasctl_verify.h"
#include "util/status.h"

#define CLUSTER "cluster"

static const struct {
	const char *prefix, *kind, *why;
} leftovers[] = {
	{ ".tmp.", "temp-file",
	  "a replace's temp file: its writer is still writing, or died before its rename; "
	  "removed by the partition's next open (partition directories) or the controller's "
	  "sweep pass (every 30 s) once no live process owns its name" },
	{ ".kaas-excl.", "temp-file",
	  "an NFSv4 exclusive-create link name left by a crash between CREATE and REMOVE: "
	  "garbage, removed by the partition opener or the sweep pass where they visit" },
	{ ".nfs", "nfs-silly-rename",
	  "an NFS client's silly rename of a file unlinked while still open: the client "
	  "removes it at the file's last close" },
	{ ".kaas-check.", "check-leftover",
	  "a kaasctl substrate-check run's directory: the run was stopped before its cleanup "
	  "(safe to remove)" },
};

int kv_leftover(struct kv_report *r, struct kaas_substrate *sub, const char *volume,
		const char *dir, const char *name)
{
	for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++) {
		if (strncmp(name, leftovers[i].prefix, strlen(leftovers[i].prefix)) != 0)
			continue;
		char *path = kaas_path_join(dir, name);
		struct kaas_stat st;
		char age[64] = "";
		if (path && kaas_sub_stat(sub, path, &st) == 0 && st.mtime_ns > 0)
			snprintf(age, sizeof age, " (modified %" PRId64 " s ago)",
				 (int64_t)time(NULL) - st.mtime_ns / 1000000000);
		kv_add(r, KV_WARNING, volume, path ? path : name, leftovers[i].kind, "%s%s",
		       leftovers[i].why, age);
		free(path);
		return 1;
	}
	return 0;
}

/* Report leftovers in dir; call doc(r, path, name) for every other file. */
static void walk_dir(struct kv_report *r, const char *dir,
		     void (*doc)(struct kv_report *r, const char *path, const char *name))
{
	struct kaas_dirlist l;
	int rc = kaas_sub_list(r->k->cluster, dir, &l);
	if (rc == -ENOENT)
		return;
	if (rc < 0) {
		kv_add(r, KV_ERROR, CLUSTER, dir, "unreadable", "%s (%s)", kaas_strerror(rc),
		       kaas_sub_errdetail());
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (kv_leftover(r, r->k->cluster, CLUSTER, dir, l.names[i]) || !doc)
			continue;
		char *path = kaas_path_join(dir, l.names[i]);
		if (path)
			doc(r, path, l.names[i]);
		free(path);
	}
	kaas_dirlist_free(&l);
}

static void report_rc(struct kv_report *r, const char *path, int rc)
{
	r->documents++;
	if (rc < 0 && rc != -ENOENT)
		kv_add(r, KV_ERROR, CLUSTER, path, rc == -EBADMSG ? "corrupt-document" : "unreadable",
		       "%s (%s)", kaas_strerror(rc), kaas_sub_errdetail());
}

static void broker_doc(struct kv_report *r, const char *path, const char *name)
{
	char *end;
	long id = strtol(name, &end, 10);
	if (end == name || strcmp(end, ".json") != 0)
		return;
	struct kaas_broker_info b;
	report_rc(r, path, kaas_broker_read(r->k->cluster, (int32_t)id, &b));
}

static void topic_doc(struct kv_report *r, const char *path, const char *name)
{
	char topic[256];
	if (kaas_topic_doc_entry(name, topic) != 1)
		return;
	struct kaas_topic_doc d;
	report_rc(r, path, kaas_topic_doc_read(r->k->cluster, topic, &d));
}

/* The newest offsets document of groups/<enc>/ (older ones are pruned by
 * the next commit; readers never look at them). */
static void group_dir(struct kv_report *r, const char *path, const char *name)
{
	(void)name;
	struct kaas_dirlist l;
	if (kaas_sub_list(r->k->cluster, path, &l) < 0)
		return;
	const char *newest = NULL;
	for (size_t i = 0; i < l.n; i++) {
		if (kv_leftover(r, r->k->cluster, CLUSTER, path, l.names[i]))
			continue;
		if (strncmp(l.names[i], "offsets-", 8) == 0)
			newest = l.names[i];
	}
	if (newest) {
		char *doc = kaas_path_join(path, newest);
		cJSON *body = NULL;
		if (doc)
			report_rc(r, doc, kaas_doc_read(r->k->cluster, doc, "group-offsets", 1, &body,
							NULL));
		cJSON_Delete(body);
		free(doc);
	}
	char *fence = kaas_path_join(path, KAAS_GROUP_FENCE_DIR);
	if (fence)
		walk_dir(r, fence, NULL);
	free(fence);
	kaas_dirlist_free(&l);
}

/* acls/<32 hex>.json: a binding whose content hashes to its name (an
 * unreadable one makes every broker refuse all but super users). */
static void acl_doc(struct kv_report *r, const char *path, const char *name)
{
	(void)path;
	if (strlen(name) != 37 || strcmp(name + 32, ".json") != 0)
		return;
	struct kaas_acl a;
	int rc = kaas_acl_store_read(r->k->cluster, name, &a);
	if (rc == 0)
		kaas_acl_clear(&a);
	report_rc(r, path, rc);
}

/* quotas/<32 hex>.json: a client quota named by its (entity, key) (an
 * unreadable one is skipped by every broker, its limit lost). */
static void quota_doc(struct kv_report *r, const char *path, const char *name)
{
	(void)path;
	if (strlen(name) != 37 || strcmp(name + 32, ".json") != 0)
		return;
	struct kaas_quota q;
	int rc = kaas_quota_store_read(r->k->cluster, name, &q);
	if (rc == 0)
		kaas_quota_entity_clear(&q.e);
	report_rc(r, path, rc);
}

/* Leftovers only, one level down (topic-incarnations/<name>/, slot-epochs/<t>/). */
static void leftovers_below(struct kv_report *r, const char *path, const char *name)
{
	(void)name;
	struct kaas_stat st;
	if (kaas_sub_stat(r->k->cluster, path, &st) == 0 && st.type == KAAS_FT_DIR)
		walk_dir(r, path, leftovers_below);
}

void kv_cluster(struct kv_report *r, const char *topic)
{
	if (topic) {
		char path[300];
		snprintf(path, sizeof path, "%s/%s.json", KAAS_TOPIC_DOC_DIR, topic);
		struct kaas_topic_doc d;
		report_rc(r, path, kaas_topic_doc_read(r->k->cluster, topic, &d));
		return;
	}
	struct kaas_assignment a = { 0 };
	report_rc(r, KAAS_ASSIGNMENT_PATH, kaas_assignment_read(r->k->cluster, &a, NULL));
	kaas_assignment_free(&a);
	walk_dir(r, "", NULL);
	walk_dir(r, KAAS_BROKERS_DIR, broker_doc);
	walk_dir(r, KAAS_TOPIC_DOC_DIR, topic_doc);
	walk_dir(r, KAAS_GROUPS_DIR, group_dir);
	walk_dir(r, KAAS_CONTROLLER_DIR, NULL);
	walk_dir(r, "producer-ids", NULL);
	walk_dir(r, "leader-epochs", NULL);
	walk_dir(r, KAAS_ACLS_DIR, acl_doc);
	walk_dir(r, KAAS_QUOTAS_DIR, quota_doc);
	walk_dir(r, "topic-incarnations", leftovers_below);
	walk_dir(r, KAAS_SLOT_EPOCHS_DIR, leftovers_below);
}
