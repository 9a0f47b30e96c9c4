/* kaasctl_status.c — `kaasctl status`: brokers and their liveness, the
 * controller, the assignment, and per topic its partitions with leaders,
 * leader epochs and high watermarks.  Everything is gathered into one JSON
 * document first; the table is printed from it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/assignment.h"
#include "cluster/membership.h"
#include "contract/doc.h"
#include "log/log_inspect.h"
#include "tools/kaasctl.h"
#include "util/status.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Liveness from two listings watch_ms apart: a broker whose heartbeat
 * counter (or incarnation) moved is alive. */
static const char *liveness(const struct kaas_broker_info *b, const struct kaas_broker_info *old,
			    size_t nold, unsigned watch_ms)
{
	if (b->stopped)
		return "stopped";
	if (!watch_ms)
		return "unknown";
	for (size_t i = 0; i < nold; i++)
		if (old[i].id == b->id)
			return old[i].counter != b->counter ||
					       old[i].incarnation != b->incarnation
				       ? "alive"
				       : "silent";
	return "alive"; /* appeared while we watched */
}

static cJSON *brokers_json(struct kctl *k, unsigned watch_ms, uint64_t ctl_epoch, int *rc)
{
	struct kaas_broker_info *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	*rc = kaas_broker_list(k->cluster, &a, &na, NULL);
	if (*rc == 0 && watch_ms) {
		sleep_ms(watch_ms);
		*rc = kaas_broker_list(k->cluster, &b, &nb, NULL);
	} else if (*rc == 0) {
		b = a;
		nb = na;
		a = NULL;
		na = 0;
	}
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; *rc == 0 && arr && i < nb; i++) {
		cJSON *o = cJSON_CreateObject();
		char inc[24];
		/* hex, as kaasd logs it */
		snprintf(inc, sizeof inc, "%016" PRIx64, b[i].incarnation);
		cJSON_AddItemToArray(arr, o);
		cJSON_AddNumberToObject(o, "id", b[i].id);
		cJSON_AddStringToObject(o, "host", b[i].host);
		cJSON_AddNumberToObject(o, "port", b[i].port);
		cJSON_AddStringToObject(o, "incarnation", inc);
		kaas_json_add_u64(o, "counter", b[i].counter);
		cJSON_AddStringToObject(o, "state", liveness(&b[i], a, na, watch_ms));
		cJSON_AddBoolToObject(o, "controller",
				      ctl_epoch && b[i].controller_epoch == ctl_epoch);
	}
	free(a);
	free(b);
	return arr;
}

static cJSON *partition_json(struct kctl *k, const char *topic, int32_t p,
			     const struct kaas_assignment *as)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "partition", p);
	kctl_add_leader(o, as, topic, p, "leader", "leader_epoch");
	char dir[300];
	kctl_part_dir(dir, sizeof dir, topic, p);
	struct kaas_log_inspect li;
	kaas_sub_clear_error();
	int rc = kaas_log_inspect_open(k->data, dir, &li);
	if (rc == 0) {
		kaas_json_add_i64(o, "log_start", li.log_start);
		kaas_json_add_i64(o, "high_watermark", li.high_watermark);
		kaas_json_add_u64(o, "segments", li.n);
		cJSON_AddNullToObject(o, "error");
	} else {
		char why[600];
		snprintf(why, sizeof why, "%s: %s", kaas_strerror(rc),
			 rc == -ENOENT ? "no partition directory yet" : kaas_sub_errdetail());
		cJSON_AddNullToObject(o, "log_start");
		cJSON_AddNullToObject(o, "high_watermark");
		cJSON_AddNullToObject(o, "segments");
		cJSON_AddStringToObject(o, "error", why);
	}
	kaas_log_inspect_free(&li);
	return o;
}

static cJSON *topics_json(struct kctl *k, const struct kaas_assignment *as, int *rc)
{
	struct kctl_topic *t;
	size_t n;
	*rc = kctl_topics(k, &t, &n);
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; *rc == 0 && arr && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "name", t[i].name);
		if (t[i].rc < 0) {
			char why[600];
			snprintf(why, sizeof why, "%s: %s", kaas_strerror(t[i].rc),
				 "unreadable topic document (the topic is offline)");
			cJSON_AddStringToObject(o, "error", why);
			continue;
		}
		cJSON_AddStringToObject(o, "id", t[i].id);
		kaas_json_add_u64(o, "incarnation", t[i].doc.inc);
		cJSON_AddBoolToObject(o, "deleting", t[i].doc.deleting);
		cJSON_AddNumberToObject(o, "partition_count", (double)t[i].doc.np);
		cJSON *ps = cJSON_AddArrayToObject(o, "partitions");
		for (int32_t p = 0; p < t[i].doc.np; p++)
			cJSON_AddItemToArray(ps, partition_json(k, t[i].name, p, as));
	}
	free(t);
	return arr;
}

static void print_opt_int(const cJSON *o, const char *key, int width)
{
	char buf[32];
	printf(" %*s", width, kctl_num_text(o, key, buf));
}

static void print_table(const cJSON *root)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "controller");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "assignment");
	printf("controller epoch:");
	print_opt_int(c, "epoch", 0);
	printf("   broker:");
	print_opt_int(c, "broker", 0);
	printf("\nassignment version:");
	print_opt_int(a, "version", 0);
	printf("   written at controller epoch:");
	print_opt_int(a, "controller_epoch", 0);
	const cJSON *cur = cJSON_GetObjectItemCaseSensitive(a, "current");
	printf("%s\n\n", cJSON_IsFalse(cur) ? "   (stale: a newer controller has not rewritten it yet)"
					   : "");
	printf("%-6s %-30s %-9s %-10s %s\n", "BROKER", "ADDRESS", "STATE", "CONTROLLER",
	       "INCARNATION");
	const cJSON *o;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(root, "brokers")) {
		char addr[300];
		snprintf(addr, sizeof addr, "%s:%d",
			 cJSON_GetObjectItemCaseSensitive(o, "host")->valuestring,
			 (int)cJSON_GetObjectItemCaseSensitive(o, "port")->valuedouble);
		printf("%-6d %-30s %-9s %-10s %s\n",
		       (int)cJSON_GetObjectItemCaseSensitive(o, "id")->valuedouble, addr,
		       cJSON_GetObjectItemCaseSensitive(o, "state")->valuestring,
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "controller")) ? "yes" : "",
		       cJSON_GetObjectItemCaseSensitive(o, "incarnation")->valuestring);
	}
	printf("\n%-30s %-32s %9s %6s %8s %12s %14s\n", "TOPIC", "ID", "PARTITION", "LEADER",
	       "EPOCH", "LOG-START", "HIGH-WATERMARK");
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(root, "topics")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(o, "name")->valuestring;
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");
		if (cJSON_IsString(err)) {
			printf("%-30s %s\n", name, err->valuestring);
			continue;
		}
		const char *id = cJSON_GetObjectItemCaseSensitive(o, "id")->valuestring;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(o, "partitions")) {
			printf("%-30s %-32s", name, id);
			print_opt_int(p, "partition", 9);
			print_opt_int(p, "leader", 6);
			print_opt_int(p, "leader_epoch", 8);
			print_opt_int(p, "log_start", 12);
			print_opt_int(p, "high_watermark", 14);
			const cJSON *pe = cJSON_GetObjectItemCaseSensitive(p, "error");
			printf("%s%s\n", cJSON_IsString(pe) ? "  " : "",
			       cJSON_IsString(pe) ? pe->valuestring : "");
		}
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "deleting")))
			printf("%-30s (being deleted)\n", name);
	}
}

static int parse_watch(int argc, char **argv, unsigned *watch_ms)
{
	static const struct option lo[] = { { "watch-ms", required_argument, 0, 'w' },
					    { 0, 0, 0, 0 } };
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *e;
		long v = ch == 'w' ? strtol(optarg, &e, 10) : -1;
		if (ch != 'w' || *e || e == optarg || v < 0 || v > 600000)
			return kctl_error("status: usage: status [--watch-ms 0..600000]");
		*watch_ms = (unsigned)v;
	}
	if (optind != argc)
		return kctl_error("status: unexpected argument '%s'", argv[optind]);
	return 0;
}

int kctl_cmd_status(struct kctl *k, int argc, char **argv)
{
	unsigned watch_ms = 1000;
	if (parse_watch(argc, argv, &watch_ms))
		return KCTL_EXIT_ERROR;
	cJSON *root = cJSON_CreateObject();
	uint64_t ctl = 0;
	int rc = kaas_controller_latest(k->cluster, &ctl);
	if (rc < 0 && rc != -ENOENT)
		return kctl_error("reading controller claims: %s (%s)", kaas_strerror(rc),
				  kaas_sub_errdetail());
	struct kaas_assignment as = { 0 };
	int current = 0;
	int arc = kaas_assignment_read(k->cluster, &as, &current);
	if (arc < 0 && arc != -ENOENT)
		fprintf(stderr, "kaasctl: warning: %s: %s (%s)\n", KAAS_ASSIGNMENT_PATH,
			kaas_strerror(arc), kaas_sub_errdetail());
	cJSON *brokers = brokers_json(k, watch_ms, ctl, &rc);
	cJSON *c = cJSON_AddObjectToObject(root, "controller");
	if (ctl) {
		kaas_json_add_u64(c, "epoch", ctl);
		const cJSON *b;
		cJSON_ArrayForEach(b, brokers)
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "controller")))
				cJSON_AddNumberToObject(c, "broker",
					cJSON_GetObjectItemCaseSensitive(b, "id")->valuedouble);
	}
	cJSON *a = cJSON_AddObjectToObject(root, "assignment");
	if (arc == 0) {
		kaas_json_add_u64(a, "version", as.version);
		kaas_json_add_u64(a, "controller_epoch", as.controller_epoch);
		cJSON_AddBoolToObject(a, "current", current);
	}
	cJSON_AddItemToObject(root, "brokers", brokers);
	if (rc == 0)
		cJSON_AddItemToObject(root, "topics", topics_json(k, arc == 0 ? &as : NULL, &rc));
	kaas_assignment_free(&as);
	if (rc < 0) {
		cJSON_Delete(root);
		return kctl_error("reading the cluster directory %s: %s (%s)", k->cluster_url,
				  kaas_strerror(rc), kaas_sub_errdetail());
	}
	if (k->json)
		return kctl_json_emit(root) ? KCTL_EXIT_ERROR : KCTL_EXIT_OK;
	print_table(root);
	cJSON_Delete(root);
	return KCTL_EXIT_OK;
}
