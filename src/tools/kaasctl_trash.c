/* kaasctl_trash.c — `kaasctl trash`: topic removals that have not finished,
 * and why (docs/ON-VOLUME.md, `.trash/<name>.<id>`): directories renamed
 * into <data>/.trash/ whose tree is not deleted yet, and topic documents
 * marked deleting whose directory is not yet renamed.  Brokers re-drive both
 * (housekeeping every 5 s, and at start); kaasctl only reports. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/doc.h"
#include "tools/kaasctl.h"
#include "util/status.h"

struct tally {
	uint64_t files, bytes;
};

/* Files and bytes below dir (bounded depth: a topic tree is 3 levels). */
static void count_tree(struct kaas_substrate *sub, const char *dir, int depth, struct tally *t)
{
	struct kaas_dirlist l;
	if (depth > 8 || kaas_sub_list(sub, dir, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		char *p = kaas_path_join(dir, l.names[i]);
		struct kaas_stat st;
		if (p && kaas_sub_stat(sub, p, &st) == 0) {
			if (st.type == KAAS_FT_DIR) {
				count_tree(sub, p, depth + 1, t);
			} else {
				t->files++;
				t->bytes += st.size;
			}
		}
		free(p);
	}
	kaas_dirlist_free(&l);
}

/* Why `.trash/<name>.<id>` is there, from the topic document of name. */
static const char *trash_reason(struct kctl *k, const char *entry, char *topic, size_t tsize)
{
	const char *dot = strrchr(entry, '.');
	if (!dot || strlen(dot + 1) != 32 || (size_t)(dot - entry) >= tsize)
		return "not a name kaas puts in .trash (<topic>.<32 hex id>)";
	memcpy(topic, entry, (size_t)(dot - entry));
	topic[dot - entry] = '\0';
	struct kaas_topic_doc d;
	int rc = kaas_topic_doc_read(k->cluster, topic, &d);
	char id[33];
	if (rc == 0)
		kaas_topic_id_hex(d.id, id);
	if (rc == -ENOENT)
		return "topic deleted (its document is gone): only the tree's removal is left";
	if (rc < 0)
		return "the topic document is unreadable";
	if (strcmp(id, dot + 1) != 0)
		return "an earlier incarnation of a re-created topic: the old tree's removal is left";
	if (d.deleting)
		return "topic being deleted (its document is still marked deleting)";
	return "a reclaimed directory of this incarnation (stamped by another one)";
}

static void add_trash(struct kctl *k, cJSON *arr)
{
	struct kaas_dirlist l;
	if (kaas_sub_list(k->data, KAAS_TOPIC_TRASH_DIR, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		char *path = kaas_path_join(KAAS_TOPIC_TRASH_DIR, l.names[i]);
		char topic[256] = "";
		struct tally t = { 0 };
		if (!path)
			continue;
		count_tree(k->data, path, 0, &t);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "path", path);
		const char *why = trash_reason(k, l.names[i], topic, sizeof topic);
		cJSON_AddStringToObject(o, "topic", topic);
		cJSON_AddStringToObject(o, "stage", "removing-tree");
		cJSON_AddStringToObject(o, "reason", why);
		kaas_json_add_u64(o, "files", t.files);
		kaas_json_add_u64(o, "bytes", t.bytes);
		free(path);
	}
	kaas_dirlist_free(&l);
}

static void add_deleting(struct kctl *k, cJSON *arr)
{
	struct kctl_topic *t;
	size_t n;
	if (kctl_topics(k, &t, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct kaas_stat st;
		if (t[i].rc < 0 || !t[i].doc.deleting)
			continue;
		int has_dir = kaas_sub_stat(k->data, t[i].name, &st) == 0;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "path", t[i].name);
		cJSON_AddStringToObject(o, "topic", t[i].name);
		cJSON_AddStringToObject(o, "id", t[i].id);
		cJSON_AddStringToObject(o, "stage", has_dir ? "rename-pending" : "document-pending");
		cJSON_AddStringToObject(o, "reason",
					has_dir ? "topic marked deleting: its directory is not yet "
						  "renamed into .trash"
						: "topic marked deleting: no directory left; the "
						  "document is removed next");
	}
	free(t);
}

int kctl_cmd_trash(struct kctl *k, int argc, char **argv)
{
	if (argc != 1)
		return kctl_error("trash: unexpected argument '%s'", argv[1]);
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "pending");
	add_trash(k, arr);
	add_deleting(k, arr);
	cJSON_AddStringToObject(root, "driven_by",
				"every running broker's housekeeping (every 5 s) and every broker "
				"start; nothing happens while no broker runs");
	if (k->json)
		return kctl_json_emit(root) ? KCTL_EXIT_ERROR : KCTL_EXIT_OK;
	printf("%-50s %-24s %-17s %8s %12s  %s\n", "PATH", "TOPIC", "STAGE", "FILES", "BYTES",
	       "REASON");
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		char fs[32], bs[32];
		kctl_num_text(o, "files", fs);
		kctl_num_text(o, "bytes", bs);
		printf("%-50s %-24s %-17s %8s %12s  %s\n",
		       cJSON_GetObjectItemCaseSensitive(o, "path")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(o, "topic")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(o, "stage")->valuestring, fs, bs,
		       cJSON_GetObjectItemCaseSensitive(o, "reason")->valuestring);
	}
	if (!cJSON_GetArraySize(arr))
		printf("(nothing pending removal)\n");
	else
		printf("removal is driven by %s\n",
		       cJSON_GetObjectItemCaseSensitive(root, "driven_by")->valuestring);
	cJSON_Delete(root);
	return KCTL_EXIT_OK;
}
