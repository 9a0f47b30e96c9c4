/* kaasctl_common.c — volumes, output helpers and the topic list shared by
 * the kaasctl commands (see kaasctl.h). */
#include "tools/kaasctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/assignment.h"
#include "util/status.h"

int kctl_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kaasctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return KCTL_EXIT_ERROR;
}

static int open_volume(const char *what, const char *url, struct kaas_substrate **out)
{
	kaas_sub_clear_error();
	int rc = kaas_substrate_open(url, out);
	if (rc == 0)
		return 0;
	*out = NULL;
	const char *detail = kaas_sub_errdetail();
	return kctl_error("cannot open %s %s: %s%s%s%s", what, url, kaas_strerror(rc),
			  *detail ? " (" : "", detail, *detail ? ")" : "");
}

int kctl_open(struct kctl *k)
{
	int rc = open_volume("data volume", k->cfg.data_url, &k->data);
	if (rc)
		return rc;
	if (k->cfg.cluster_url) {
		k->cluster_url = strdup(k->cfg.cluster_url);
	} else {
		struct kaas_stat st;
		if (kaas_sub_stat(k->data, "__cluster", &st) < 0 || st.type != KAAS_FT_DIR)
			return kctl_error("%s has no __cluster directory: not a kaas data volume, or "
					  "the cluster directory is elsewhere (--cluster-dir URL)",
					  k->cfg.data_url);
		k->cluster_url = kaas_url_subdir(k->cfg.data_url, "__cluster");
	}
	if (!k->cluster_url)
		return kctl_error("out of memory");
	return open_volume("cluster directory", k->cluster_url, &k->cluster);
}

void kctl_close(struct kctl *k)
{
	if (k->cluster)
		kaas_substrate_close(k->cluster);
	if (k->data)
		kaas_substrate_close(k->data);
	free(k->cluster_url);
	kaas_config_free(&k->cfg);
	k->data = k->cluster = NULL;
	k->cluster_url = NULL;
}

int kctl_json_emit(cJSON *root)
{
	char *s = root ? cJSON_Print(root) : NULL;
	cJSON_Delete(root);
	if (!s)
		return kctl_error("out of memory building the JSON output");
	puts(s);
	free(s);
	return 0;
}

char *kctl_escape(const void *p, size_t n)
{
	const unsigned char *b = p;
	char *out = malloc(n * 4 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];
		if (c == '\\' || c == '"') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n') {
			memcpy(out + o, "\\n", 2);
			o += 2;
		} else if (c == '\t') {
			memcpy(out + o, "\\t", 2);
			o += 2;
		} else if (c == '\r') {
			memcpy(out + o, "\\r", 2);
			o += 2;
		} else if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
		}
	}
	out[o] = '\0';
	return out;
}

/* Is s well-formed UTF-8 (no overlong forms, surrogates or values past
 * U+10FFFF)? */
static int utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s++, n, min, v;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0)
			n = 1, min = 0x80, v = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			n = 2, min = 0x800, v = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			n = 3, min = 0x10000, v = c & 0x07;
		else
			return 0;
		for (unsigned i = 0; i < n; i++, s++) {
			if ((*s & 0xc0) != 0x80)
				return 0;
			v = (v << 6) | (*s & 0x3f);
		}
		if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return 0;
	}
	return 1;
}

int kctl_add_text(cJSON *o, const char *key, const char *s)
{
	if (utf8_ok((const unsigned char *)s))
		return cJSON_AddStringToObject(o, key, s) ? 0 : -ENOMEM;
	char *e = kctl_escape(s, strlen(s));
	cJSON *v = e ? cJSON_AddStringToObject(o, key, e) : NULL;
	free(e);
	return v ? 0 : -ENOMEM;
}

static int cmp_topic(const void *a, const void *b)
{
	return strcmp(((const struct kctl_topic *)a)->name, ((const struct kctl_topic *)b)->name);
}

int kctl_topics(struct kctl *k, struct kctl_topic **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct kaas_dirlist l;
	int rc = kaas_sub_list(k->cluster, KAAS_TOPIC_DOC_DIR, &l);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc; /* no topics/ yet: no topics */
	struct kctl_topic *t = calloc(l.n + 1, sizeof *t);
	size_t m = 0;
	for (size_t i = 0; t && i < l.n; i++) {
		if (kaas_topic_doc_entry(l.names[i], t[m].name) != 1)
			continue;
		t[m].rc = kaas_topic_doc_read(k->cluster, t[m].name, &t[m].doc);
		if (t[m].rc == 0)
			kaas_topic_id_hex(t[m].doc.id, t[m].id);
		m++;
	}
	kaas_dirlist_free(&l);
	if (!t)
		return -ENOMEM;
	qsort(t, m, sizeof *t, cmp_topic);
	*out = t;
	*n = m;
	return 0;
}

const char *kctl_num_text(const cJSON *o, const char *key, char buf[32])
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsNumber(v))
		snprintf(buf, 32, "%.0f", v->valuedouble);
	else
		snprintf(buf, 32, "-");
	return buf;
}

void kctl_add_leader(cJSON *o, const struct kaas_assignment *as, const char *topic, int32_t p,
		     const char *leader_key, const char *epoch_key)
{
	const struct kaas_assign_entry *e = as ? kaas_assignment_find(as, topic, p) : NULL;
	if (e && e->leader != KAAS_NO_LEADER) {
		cJSON_AddNumberToObject(o, leader_key, e->leader);
		cJSON_AddNumberToObject(o, epoch_key, e->leader_epoch);
	} else {
		cJSON_AddNullToObject(o, leader_key);
		cJSON_AddNullToObject(o, epoch_key);
	}
}

int kctl_one_option(int argc, char **argv, const char *name, const char **value,
		    const char *usage)
{
	const struct option lo[] = { { name, required_argument, 0, 'o' }, { 0, 0, 0, 0 } };
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch != 'o')
			return kctl_error("usage: %s", usage);
		*value = optarg;
	}
	if (optind != argc)
		return kctl_error("unexpected argument '%s' (usage: %s)", argv[optind], usage);
	return 0;
}

void kctl_part_dir(char *buf, size_t size, const char *topic, int32_t p)
{
	snprintf(buf, size, "%s/%d", topic, (int)p);
}
