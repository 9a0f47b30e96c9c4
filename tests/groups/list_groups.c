/*
 * list_groups.c — lists the broker's groups through librdkafka
 * (ListGroups + DescribeGroups) and prints one line per group:
 *   GROUP STATE PROTOCOL_TYPE PROTOCOL MEMBERS MEMBERS_WITH_ASSIGNMENT
 *
 *   list_groups BROKER [GROUP]
 */
#include <stdio.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: list_groups BROKER [GROUP]\n");
		return 2;
	}
	char err[256];
	rd_kafka_conf_t *c = rd_kafka_conf_new();
	if (rd_kafka_conf_set(c, "bootstrap.servers", argv[1], err, sizeof(err)) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "rd_kafka_new: %s\n", err);
		return 2;
	}
	const struct rd_kafka_group_list *gl = NULL;
	rd_kafka_resp_err_t e = rd_kafka_list_groups(rk, argc > 2 ? argv[2] : NULL, &gl, 10000);
	if (e) {
		fprintf(stderr, "list_groups: %s\n", rd_kafka_err2str(e));
		rd_kafka_destroy(rk);
		return 1;
	}
	int rc = 0;
	for (int i = 0; i < gl->group_cnt; i++) {
		const struct rd_kafka_group_info *g = &gl->groups[i];
		if (g->err) {
			fprintf(stderr, "group %s: %s\n", g->group, rd_kafka_err2str(g->err));
			rc = 1;
		}
		int assigned = 0;
		for (int m = 0; m < g->member_cnt; m++)
			assigned += g->members[m].member_assignment_size > 0;
		printf("%s %s %s %s %d %d\n", g->group, g->state,
		       g->protocol_type[0] ? g->protocol_type : "-", g->protocol[0] ? g->protocol : "-",
		       g->member_cnt, assigned);
	}
	rd_kafka_group_list_destroy(gl);
	rd_kafka_destroy(rk);
	return rc;
}
