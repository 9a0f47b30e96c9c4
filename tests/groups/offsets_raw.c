/*
 * offsets_raw.c — standalone OffsetCommit v7 / OffsetFetch v5 (generation
 * -1, no member: the group must be empty) against a running kaasd, printing
 * what the broker answered.
 *
 *   offsets_raw HOST:PORT commit GROUP TOPIC PARTITION OFFSET   prints ERROR
 *   offsets_raw HOST:PORT fetch GROUP TOPIC PARTITION           prints OFFSET ERROR
 * Exit 0 when an answer came (whatever its error), 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/kwire.h"

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: offsets_raw HOST:PORT commit|fetch GROUP TOPIC PARTITION [OFFSET]\n");
		return 2;
	}
	int commit = strcmp(argv[2], "commit") == 0;
	if (commit && argc < 7)
		return 2;
	int fd = kwire_connect(argv[1], 5000);
	if (fd < 0) {
		fprintf(stderr, "cannot connect to %s\n", argv[1]);
		return 1;
	}
	struct kaas_kw w;
	kwire_begin(&w, commit ? 8 : 9, commit ? 7 : 5, 1, "offsets_raw");
	kaas_kw_str(&w, 0, argv[3]);
	if (commit) {
		kaas_kw_i32(&w, -1);      /* generation */
		kaas_kw_str(&w, 0, "");   /* member */
		kaas_kw_str(&w, 0, NULL); /* instance */
	}
	kaas_kw_i32(&w, 1);
	kaas_kw_str(&w, 0, argv[4]);
	kaas_kw_i32(&w, 1);
	kaas_kw_i32(&w, atoi(argv[5]));
	if (commit) {
		kaas_kw_i64(&w, strtoll(argv[6], NULL, 10));
		kaas_kw_i32(&w, -1);
		kaas_kw_str(&w, 0, "raw");
	}
	struct kaas_kr r;
	uint8_t *b = kwire_call(fd, &w, &r, 15000);
	close(fd);
	if (!b) {
		fprintf(stderr, "no answer\n");
		return 1;
	}
	(void)kaas_kr_i32(&r); /* throttle */
	(void)kaas_kr_i32(&r);
	(void)kaas_kr_str(&r, 0);
	(void)kaas_kr_i32(&r);
	(void)kaas_kr_i32(&r);
	if (commit) {
		int16_t err = kaas_kr_i16(&r);
		printf("%d\n", err);
	} else {
		int64_t off = kaas_kr_i64(&r);
		(void)kaas_kr_i32(&r);
		(void)kaas_kr_nstr(&r, 0);
		int16_t perr = kaas_kr_i16(&r);
		int16_t err = kaas_kr_i16(&r);
		printf("%lld %d\n", (long long)off, perr ? perr : err);
	}
	free(b);
	return kaas_kr_ok(&r) ? 0 : 1;
}
