/* kaasctl_dump.c — `kaasctl dump-log TOPIC PARTITION [--from OFFSET]
 * [--max-records N]`: the partition's batches and records below the high
 * watermark, read-only (log/log_inspect.h), as text or JSON. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_inspect.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_records.h"
#include "util/status.h"

struct dump {
	struct kctl *k;
	cJSON *batches;        /* --json: collected here */
	int64_t from;
	int64_t max_records;   /* < 0: no limit */
	int64_t shown;
};

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void print_text(const cJSON *b, const char *segment)
{
	printf("batch %.0f..%.0f  position %.0f  size %.0f  segment %s\n",
	       num(b, "base_offset"), num(b, "last_offset"), num(b, "position"), num(b, "size"),
	       segment);
	printf("  leader-epoch %.0f  records %.0f  compression %s  %s  base-ts %.0f  max-ts %.0f\n",
	       num(b, "partition_leader_epoch"), num(b, "record_count"), str(b, "compression"),
	       str(b, "timestamp_type"), num(b, "base_timestamp"), num(b, "max_timestamp"));
	printf("  producer-id %.0f  producer-epoch %.0f  base-sequence %.0f  transactional %s  "
	       "control %s  crc %s\n",
	       num(b, "producer_id"), num(b, "producer_epoch"), num(b, "base_sequence"),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "transactional")) ? "yes" : "no",
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "control")) ? "yes" : "no",
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "crc_ok")) ? "ok" : "BAD");
	if (str(b, "error"))
		printf("  error: %s\n", str(b, "error"));
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(b, "records")) {
		const char *k = str(r, "key"), *v = str(r, "value");
		printf("  offset %.0f  timestamp %.0f  key %s%s%s  value %s%s%s", num(r, "offset"),
		       num(r, "timestamp"), k ? "\"" : "", k ? k : "null", k ? "\"" : "",
		       v ? "\"" : "", v ? v : "null", v ? "\"" : "");
		if (str(r, "control"))
			printf("  control %s", str(r, "control"));
		const cJSON *h;
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(r, "headers")) {
			const char *hk = str(h, "key"), *hv = str(h, "value");
			printf("  header \"%s\"=%s%s%s", hk ? hk : "", hv ? "\"" : "", hv ? hv : "null",
			       hv ? "\"" : "");
		}
		printf("%s%s\n", str(r, "error") ? "  error: " : "", str(r, "error") ? str(r, "error") : "");
	}
}

/* Drop records past the --max-records budget; 1 when the budget is spent. */
static int trim_records(struct dump *d, cJSON *b)
{
	cJSON *recs = cJSON_GetObjectItemCaseSensitive(b, "records");
	int n = cJSON_GetArraySize(recs);
	if (d->max_records < 0) {
		d->shown += n;
		return 0;
	}
	while (n > 0 && d->shown + n > d->max_records)
		cJSON_DeleteItemFromArray(recs, --n);
	d->shown += n;
	return d->shown >= d->max_records;
}

static int on_batch(void *arg, const struct kaas_log_inspect_seg *seg, uint64_t pos,
		    const unsigned char *batch, size_t len)
{
	struct dump *d = arg;
	cJSON *b = kctl_batch_json(batch, len, pos, d->from);
	if (!b)
		return -ENOMEM;
	int spent = trim_records(d, b);
	cJSON_AddStringToObject(b, "segment", seg->path);
	if (d->batches) {
		cJSON_AddItemToArray(d->batches, b);
	} else {
		print_text(b, seg->path);
		cJSON_Delete(b);
	}
	return spent;
}

static int parse_i64(const char *s, int64_t min, int64_t *out)
{
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (errno || *e || e == s || v < min)
		return -1;
	*out = v;
	return 0;
}

int kctl_cmd_dump_log(struct kctl *k, int argc, char **argv)
{
	static const struct option lo[] = { { "from", required_argument, 0, 'f' },
					    { "max-records", required_argument, 0, 'm' },
					    { 0, 0, 0, 0 } };
	struct dump d = { .k = k, .from = 0, .max_records = -1 };
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if ((ch == 'f' && parse_i64(optarg, 0, &d.from) == 0) ||
		    (ch == 'm' && parse_i64(optarg, 1, &d.max_records) == 0))
			continue;
		return kctl_error("dump-log: usage: dump-log TOPIC PARTITION [--from OFFSET >= 0] "
				  "[--max-records N >= 1]");
	}
	int64_t part;
	if (argc - optind != 2 || parse_i64(argv[optind + 1], 0, &part) < 0 || part > INT32_MAX)
		return kctl_error("dump-log: expected TOPIC PARTITION (a partition number)");
	const char *topic = argv[optind];
	struct kaas_topic_doc doc;
	int rc = kaas_topic_name_valid(topic, (int)strlen(topic)) ? 0 : -EINVAL;
	if (rc == 0)
		rc = kaas_topic_doc_read(k->cluster, topic, &doc);
	if (rc == -ENOENT || rc == -EINVAL)
		return kctl_error("no topic '%s' in %s", topic, k->cluster_url);
	if (rc < 0)
		return kctl_error("topic '%s': %s (%s)", topic, kaas_strerror(rc), kaas_sub_errdetail());
	if (part >= doc.np)
		return kctl_error("topic '%s' has %" PRId64 " partitions: no partition %" PRId64, topic,
				  doc.np, part);
	char dir[300];
	kctl_part_dir(dir, sizeof dir, topic, (int32_t)part);
	struct kaas_log_inspect li;
	rc = kaas_log_inspect_open(k->data, dir, &li);
	if (rc == -ENOENT) {
		kaas_log_inspect_free(&li);
		return kctl_error("%s: no partition directory (never opened)", dir);
	}
	if (rc < 0) {
		kaas_log_inspect_free(&li);
		return kctl_error("%s: %s (%s)", dir, kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (d.from < li.log_start)
		d.from = li.log_start;
	cJSON *root = NULL;
	if (k->json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "topic", topic);
		cJSON_AddNumberToObject(root, "partition", (double)part);
		cJSON_AddNumberToObject(root, "log_start", (double)li.log_start);
		cJSON_AddNumberToObject(root, "high_watermark", (double)li.high_watermark);
		d.batches = cJSON_AddArrayToObject(root, "batches");
	} else {
		printf("%s: log start %" PRId64 ", high watermark %" PRId64 "\n", dir, li.log_start,
		       li.high_watermark);
	}
	rc = kaas_log_inspect_batches(k->data, &li, d.from, on_batch, &d);
	kaas_log_inspect_free(&li);
	if (rc < 0) {
		cJSON_Delete(root);
		return kctl_error("%s: %s (%s)", dir, kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (root)
		return kctl_json_emit(root) ? KCTL_EXIT_ERROR : KCTL_EXIT_OK;
	return KCTL_EXIT_OK;
}
