/* kaasctl_verify.c — `kaasctl verify [--topic T]`: walks the data volume
 * (topic directories, their stamps and partitions, .trash) and the cluster
 * directory's documents, and reports every finding with its path.  Exit 1
 * when any finding is an error (corruption), 0 otherwise: warnings are
 * transient state kaas removes itself, and each says what removes it. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/kaasctl_verify.h"
#include "util/status.h"

#define DATA "data"

void kv_add(struct kv_report *r, enum kv_severity sev, const char *volume, const char *path,
	    const char *kind, const char *fmt, ...)
{
	char detail[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "severity", sev == KV_ERROR ? "error" : "warning");
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddStringToObject(o, "volume", volume);
	kctl_add_text(o, "path", path); /* names on the volume may be any bytes */
	kctl_add_text(o, "detail", detail);
	cJSON_AddItemToArray(r->findings, o);
	if (sev == KV_ERROR)
		r->errors++;
	else
		r->warnings++;
}

static void check_trash(struct kv_report *r)
{
	struct kaas_dirlist l;
	if (kaas_sub_list(r->k->data, KAAS_TOPIC_TRASH_DIR, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		char *path = kaas_path_join(KAAS_TOPIC_TRASH_DIR, l.names[i]);
		if (path && !kv_leftover(r, r->k->data, DATA, KAAS_TOPIC_TRASH_DIR, l.names[i]))
			kv_add(r, KV_WARNING, DATA, path, "undrained-trash",
			       "a removed topic directory not yet deleted: a running broker's "
			       "housekeeping (every 5 s) and every broker start remove it; if it "
			       "stays, see the brokers' logs (kaasctl trash)");
		free(path);
	}
	kaas_dirlist_free(&l);
}

static const struct kctl_topic *find(const struct kctl_topic *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

/* <topic>/: its stamp against the document, its partitions, leftovers. */
static void check_topic(struct kv_report *r, const char *name, const struct kctl_topic *doc)
{
	struct kaas_topic_stamp st;
	char stamp_path[300];
	snprintf(stamp_path, sizeof stamp_path, "%s/.topic-id.json", name);
	int rc = kaas_topic_stamp_read(r->k->data, name, &st);
	r->documents += rc != -ENOENT;
	if (rc < 0 && rc != -ENOENT)
		kv_add(r, KV_ERROR, DATA, stamp_path, rc == -EBADMSG ? "corrupt-document" : "unreadable",
		       "%s (%s): the topic stays offline", kaas_strerror(rc), kaas_sub_errdetail());
	if (!doc)
		kv_add(r, KV_WARNING, DATA, name, "orphan-topic-dir",
		       "no topic document names it: a removal in progress (renamed to .trash "
		       "next), or a directory a tool made");
	else if (rc == 0 && doc->rc == 0 && memcmp(st.id, doc->doc.id, 16) != 0)
		kv_add(r, KV_WARNING, DATA, stamp_path, "foreign-stamp",
		       "stamped by another incarnation than the topic document's (%s): the current "
		       "incarnation reclaims it (moves it to .trash) before opening", doc->id);
	struct kaas_dirlist l;
	if (kaas_sub_list(r->k->data, name, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		const char *e = l.names[i];
		char *path = kaas_path_join(name, e);
		char *end;
		long p = strtol(e, &end, 10);
		if (!path || strcmp(e, ".topic-id.json") == 0) {
		} else if (end != e && *end == '\0' && p >= 0 && e[0] != '+' && e[0] != '-') {
			if (doc && doc->rc == 0 && p >= doc->doc.np)
				kv_add(r, KV_WARNING, DATA, path, "orphan-partition",
				       "the topic document lists %" PRId64 " partitions", doc->doc.np);
			kv_partition(r, path);
		} else if (!kv_leftover(r, r->k->data, DATA, name, e)) {
			kv_add(r, KV_WARNING, DATA, path, "unknown", "not a name kaas writes here");
		}
		free(path);
	}
	kaas_dirlist_free(&l);
}

static int check_data(struct kv_report *r, const char *only)
{
	struct kctl_topic *t;
	size_t nt;
	int rc = kctl_topics(r->k, &t, &nt);
	if (rc < 0)
		return kctl_error("listing topics in %s: %s (%s)", r->k->cluster_url,
				  kaas_strerror(rc), kaas_sub_errdetail());
	struct kaas_dirlist l;
	rc = kaas_sub_list(r->k->data, "", &l);
	if (rc < 0) {
		free(t);
		return kctl_error("listing %s: %s (%s)", r->k->cfg.data_url, kaas_strerror(rc),
				  kaas_sub_errdetail());
	}
	int seen = 0;
	for (size_t i = 0; i < l.n; i++) {
		const char *e = l.names[i];
		if (only && strcmp(e, only) != 0)
			continue;
		seen |= only != NULL;
		if (strcmp(e, "__cluster") == 0)
			continue; /* the cluster directory: kv_cluster */
		if (strcmp(e, KAAS_TOPIC_TRASH_DIR) == 0)
			check_trash(r);
		else if (kv_leftover(r, r->k->data, DATA, "", e))
			continue;
		else if (kaas_topic_name_valid(e, (int)strlen(e)) && l.types[i] != KAAS_FT_FILE)
			check_topic(r, e, find(t, nt, e));
		else
			kv_add(r, KV_WARNING, DATA, e, "unknown", "not a name kaas writes here");
	}
	kaas_dirlist_free(&l);
	if (only && !seen && !find(t, nt, only)) {
		free(t);
		return kctl_error("no topic '%s': neither a document in %s nor a directory in %s",
				  only, r->k->cluster_url, r->k->cfg.data_url);
	}
	free(t);
	return 0;
}

static void print_table(const struct kv_report *r, const struct kctl *k)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, r->findings) {
		const char *vol = cJSON_GetObjectItemCaseSensitive(f, "volume")->valuestring;
		const char *path = cJSON_GetObjectItemCaseSensitive(f, "path")->valuestring;
		/* The path as a URL of its own (before any ?query of the volume's). */
		char *url = kaas_url_subdir(strcmp(vol, DATA) == 0 ? k->cfg.data_url : k->cluster_url,
					    path);
		printf("%-7s %-18s %s\n        %s\n",
		       cJSON_GetObjectItemCaseSensitive(f, "severity")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(f, "kind")->valuestring, url ? url : path,
		       cJSON_GetObjectItemCaseSensitive(f, "detail")->valuestring);
		free(url);
	}
	printf("%s: %u error(s), %u warning(s); checked %" PRIu64 " segment(s), %" PRIu64
	       " batch(es), %" PRIu64 " document(s)\n",
	       r->errors ? "CORRUPT" : "clean", r->errors, r->warnings, r->segments, r->batches,
	       r->documents);
}

int kctl_cmd_verify(struct kctl *k, int argc, char **argv)
{
	const char *only = NULL;
	if (kctl_one_option(argc, argv, "topic", &only, "verify [--topic T]"))
		return KCTL_EXIT_ERROR;
	struct kv_report r = { .k = k, .findings = cJSON_CreateArray() };
	if (!r.findings)
		return kctl_error("out of memory");
	int rc = check_data(&r, only);
	if (rc) {
		cJSON_Delete(r.findings);
		return rc;
	}
	kv_cluster(&r, only);
	if (!only)
		kv_secret_modes(&r);
	int status = r.errors ? KCTL_EXIT_CORRUPT : KCTL_EXIT_OK;
	if (k->json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "data", k->cfg.data_url);
		cJSON_AddStringToObject(root, "cluster", k->cluster_url);
		cJSON_AddBoolToObject(root, "clean", r.errors == 0);
		cJSON_AddNumberToObject(root, "errors", r.errors);
		cJSON_AddNumberToObject(root, "warnings", r.warnings);
		cJSON_AddNumberToObject(root, "segments", (double)r.segments);
		cJSON_AddNumberToObject(root, "batches", (double)r.batches);
		cJSON_AddNumberToObject(root, "documents", (double)r.documents);
		cJSON_AddItemToObject(root, "findings", r.findings);
		return kctl_json_emit(root) ? KCTL_EXIT_ERROR : status;
	}
	print_table(&r, k);
	cJSON_Delete(r.findings);
	return status;
}
