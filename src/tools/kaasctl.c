/* kaasctl — operator commands for kaas volumes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/substrate_check.h"
#include "substrate/substrate.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kaasctl COMMAND [options]\n"
		"\n"
		"commands:\n"
		"  substrate-check [--renames N] [--rounds N] [--procs N] [--only KEY[,KEY...]]\n"
		"                  [--peer URL2] URL\n"
		"      Qualify a volume before trusting it with data: probe the contract's three\n"
		"      guarantees (atomic rename, atomic exclusive create, close-to-open) and the\n"
		"      documented error behaviour. Prints a table; exits 0 only if all pass.\n"
		"      URL: a directory, file:///abs/path, nfs://server/export/path?..., fault+...\n"
		"      --peer URL2: the same volume as another host sees it (e.g. a second NFS\n"
		"      mount of the export, nosharecache): the two-host probes use it as host B;\n"
		"      without it, host B is a second instance of URL.\n"
		"      KEYs: rename-atomic exclusive-create close-to-open fsync-visible\n"
		"            fsync-reopen readdir rmdir-nonempty error-codes\n");
}

static int parse_uint(const char *s, unsigned *out, const char *what)
{
	char *e;
	errno = 0;
	unsigned long v = strtoul(s, &e, 10);
	if (errno || *e || v == 0 || v > 1000000) {
		fprintf(stderr, "kaasctl: %s must be a number from 1 to 1000000, got '%s'\n", what, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int cmd_substrate_check(int argc, char **argv)
{
	struct kaas_check_opts o = {0};
	static const struct option lo[] = {
		{"renames", required_argument, 0, 'r'}, {"rounds", required_argument, 0, 'x'},
		{"procs", required_argument, 0, 'p'},   {"only", required_argument, 0, 'o'},
		{"peer", required_argument, 0, 'P'},    {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'r':
			if (parse_uint(optarg, &o.renames, "--renames") < 0)
				return 2;
			break;
		case 'x':
			if (parse_uint(optarg, &o.excl_rounds, "--rounds") < 0)
				return 2;
			break;
		case 'p':
			if (parse_uint(optarg, &o.excl_procs, "--procs") < 0)
				return 2;
			break;
		case 'o': {
			char *list = strdup(optarg);
			for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
				int id = kaas_check_lookup(t);
				if (id < 0) {
					fprintf(stderr, "kaasctl: unknown check '%s'\n", t);
					free(list);
					return 2;
				}
				o.mask |= 1ul << id;
			}
			free(list);
			break;
		}
		case 'P':
			if (!*optarg) {
				fprintf(stderr, "kaasctl substrate-check: --peer needs a URL\n");
				return 2;
			}
			o.peer_url = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "kaasctl substrate-check: expected exactly one URL\n");
		usage(stderr);
		return 2;
	}
	const char *url = argv[optind];
	struct kaas_check_report rep;
	int rc = kaas_substrate_check(url, &o, &rep);
	kaas_check_print(url, &rep, stdout);
	if (rc < 0)
		fprintf(stderr, "kaasctl: %s\n", kaas_sub_errdetail());
	return rep.all_pass && rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "substrate-check"))
		return cmd_substrate_check(argc - 1, argv + 1);
	fprintf(stderr, "kaasctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
