/* kaasctl_admin_cluster.c — `kaasctl cluster describe`: the cluster id,
 * the controller and the brokers, from DescribeCluster v0 where the broker
 * serves it, else from Metadata. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/protocol.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"

/* DescribeCluster v0 (flexible) into md's cluster id, controller and
 * brokers: 0, 1 when the broker does not serve it, or KCTL_EXIT_ERROR. */
static int describe_cluster(struct kctl_conn *c, struct kctl_md *md)
{
	memset(md, 0, sizeof *md);
	if (kctl_conn_pick(c, KAAS_API_DESCRIBE_CLUSTER, 0, 0) < 0)
		return 1;
	struct kaas_kw w;
	kctl_req_begin(c, &w, KAAS_API_DESCRIBE_CLUSTER, 0, 1);
	kaas_kw_i8(&w, 0); /* no authorized operations */
	kaas_kw_tags(&w, 1);
	uint8_t *buf;
	struct kaas_kr r;
	if (kctl_conn_call(c, &w, 1, &buf, &r) < 0)
		return kctl_error("DescribeCluster: %s", c->why);
	(void)kaas_kr_i32(&r);
	int16_t err = kaas_kr_i16(&r);
	struct kaas_kslice msg = kaas_kr_nstr(&r, 1);
	md->cluster_id = kaas_kslice_dup(kaas_kr_str(&r, 1));
	md->controller = kaas_kr_i32(&r);
	md->nbrokers = kaas_kr_array_alloc(&r, 1, 8, sizeof *md->brokers, (void **)&md->brokers);
	for (int32_t i = 0; i < md->nbrokers && kaas_kr_ok(&r); i++) {
		struct kctl_md_broker *b = &md->brokers[i];
		b->id = kaas_kr_i32(&r);
		b->host = kaas_kslice_dup(kaas_kr_str(&r, 1));
		b->port = kaas_kr_i32(&r);
		b->rack = kaas_kslice_dup(kaas_kr_nstr(&r, 1));
		kaas_kr_tags(&r, 1);
		if (!b->host)
			kaas_kr_fail(&r);
	}
	if (md->nbrokers < 0)
		md->nbrokers = 0;
	int rc = 0;
	if (!kaas_kr_ok(&r))
		rc = kctl_error("%s: a malformed DescribeCluster answer", c->addr);
	else if (err)
		rc = kctl_admin_kerr("DescribeCluster", err, &msg);
	free(buf);
	return rc;
}

int kctl_admin_cluster(struct kctl_admin *a, int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "describe") != 0) {
		fputs("usage: kaasctl [--bootstrap HOST:PORT] cluster describe\n", stderr);
		return KCTL_EXIT_ERROR;
	}
	struct kctl_md md;
	int rc = describe_cluster(&a->boot, &md);
	if (rc == 1) {
		kctl_md_free(&md);
		rc = kctl_metadata(&a->boot, NULL, 0, &md);
	}
	if (rc) {
		kctl_md_free(&md);
		return rc;
	}
	cJSON *o = cJSON_CreateObject();
	if (md.cluster_id)
		kctl_add_text(o, "cluster_id", md.cluster_id);
	else
		cJSON_AddNullToObject(o, "cluster_id");
	cJSON_AddNumberToObject(o, "controller", md.controller);
	cJSON *bs = cJSON_AddArrayToObject(o, "brokers");
	if (!a->json)
		printf("cluster %s, controller %d\n%-8s %-32s %6s %s\n",
		       md.cluster_id ? md.cluster_id : "-", (int)md.controller, "ID", "HOST", "PORT",
		       "RACK");
	for (int32_t i = 0; i < md.nbrokers; i++) {
		const struct kctl_md_broker *b = &md.brokers[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(bs, x);
		cJSON_AddNumberToObject(x, "id", b->id);
		kctl_add_text(x, "host", b->host);
		cJSON_AddNumberToObject(x, "port", b->port);
		if (b->rack)
			kctl_add_text(x, "rack", b->rack);
		else
			cJSON_AddNullToObject(x, "rack");
		if (!a->json)
			printf("%-8d %-32s %6d %s\n", (int)b->id, b->host, (int)b->port,
			       b->rack ? b->rack : "-");
	}
	kctl_md_free(&md);
	if (!a->json) {
		cJSON_Delete(o);
		return 0;
	}
	return kctl_json_emit(o);
}
