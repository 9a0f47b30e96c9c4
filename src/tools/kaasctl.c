/* kaasctl — operator commands for kaas volumes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/substrate_check.h"
#include "tools/kaasctl.h"
#include "tools/kaasctl_admin.h"
#include "substrate/substrate.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kaasctl [--data URL] [--cluster-dir URL] [--config FILE] COMMAND [--json]\n"
		"       kaasctl substrate-check [options] URL\n"
		"       kaasctl [--bootstrap HOST:PORT] [--command-config FILE] topic|group|cluster|txn ...\n"
		"\n"
		"Volume options (the same as kaasd's, with the same defaults: --data ./kaas-data,\n"
		"the cluster directory $KAAS_CLUSTER_DIR, else <data>/__cluster); a URL is a\n"
		"directory, file:///abs/path, nfs://server/export/path?..., or fault+...\n"
		"--json: one JSON document on stdout instead of a table.\n"
		"\n"
		"commands (read-only but user add/delete and acl add/remove):\n"
		"  status [--watch-ms N]\n"
		"      Brokers and their liveness (a heartbeat counter that moves within N ms,\n"
		"      default 1000), the controller, the assignment, and per topic its id,\n"
		"      partitions, leaders, leader epochs and high watermarks.\n"
		"  groups [--group G] [--volume-only]\n"
		"      Consumer groups: coordinator, committed offsets and lag; state and\n"
		"      members asked of the coordinator (DescribeGroups) unless --volume-only.\n"
		"  verify [--topic T]\n"
		"      Check every segment's batches (CRC32C) against its manifest and every\n"
		"      document; list orphans, temp files, .nfs* and .trash leftovers.\n"
		"      Exit 1 on corruption, 0 when clean (warnings allowed).\n"
		"  dump-log TOPIC PARTITION [--from OFFSET] [--max-records N]\n"
		"      Batches and records, human-readable.\n"
		"  trash\n"
		"      Topic removals not finished yet, and why.\n"
		"  user add NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--iterations N]\n"
		"  user delete NAME [--mechanism M]\n"
		"  user list\n"
		"      SASL users' SCRAM credentials in the cluster directory (the commands that\n"
		"      write): add reads the password from stdin's first line and stores only\n"
		"      salted keys (default SCRAM-SHA-512, 8192 iterations); delete removes one\n"
		"      mechanism's credential or all of them.\n"
		"  acl add|remove --principal User:NAME (--topic T | --group G | --cluster |\n"
		"          --transactional-id X) --operation OP [--prefixed] [--host H] [--deny]\n"
		"  acl list [--principal P] [--topic T | --group G | --cluster | --transactional-id X]\n"
		"      ACL bindings on the cluster volume (brokers follow within a heartbeat).\n"
		"\n"
		"broker commands (through the Kafka protocol, to kaas or any Kafka broker;\n"
		"--bootstrap default $KAAS_BOOTSTRAP, else 127.0.0.1:9092; --command-config: a\n"
		"Kafka client properties file: security.protocol PLAINTEXT, SSL, SASL_PLAINTEXT\n"
		"or SASL_SSL, sasl.mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, PEM CAs and\n"
		"certificates; docs/KAASCTL.md lists the keys):\n"
		"  topic create NAME [--partitions N] [--replication-factor R] [--config K=V]...\n"
		"  topic list\n"
		"  topic describe [NAME...] [--all-configs]\n"
		"  topic alter-config NAME [--set K=V]... [--delete K]...\n"
		"  topic add-partitions NAME N          (N more partitions)\n"
		"  topic delete NAME\n"
		"  group describe GROUP                 (members, offsets, log-end offsets, lag)\n"
		"  group reset-offsets GROUP --topic T (--to-earliest|--to-latest|--to-offset N)\n"
		"      [--dry-run]                      (only a group without members)\n"
		"  group delete GROUP\n"
		"  cluster describe\n"
		"  txn list [--state STATE]...           (every broker's transactions)\n"
		"  txn describe TRANSACTIONAL-ID\n"
		"  user list | user add NAME [--mechanism M] [--iterations N] | user delete NAME\n"
		"      [--mechanism M]                  (with --bootstrap: SCRAM users through the\n"
		"                                       broker; the password from stdin)\n"
		"  acl list|add|remove ...              (with --bootstrap: ACL bindings through the\n"
		"                                       broker, the options of acl above)\n"
		"\n"
		"  substrate-check [--renames N] [--rounds N] [--procs N] [--only KEY[,KEY...]]\n"
		"                  [--peer URL2] URL\n"
		"      Qualify a volume before trusting it with data: probe the contract's three\n"
		"      guarantees (atomic rename, atomic exclusive create, close-to-open) and the\n"
		"      documented error behaviour. Prints a table; exits 0 only if all pass.\n"
		"      --peer URL2: the same volume as another host sees it (e.g. a second NFS\n"
		"      mount of the export, nosharecache): the two-host probes use it as host B;\n"
		"      without it, host B is a second instance of URL.\n"
		"      KEYs: rename-atomic exclusive-create close-to-open fsync-visible\n"
		"            fsync-reopen readdir rmdir-nonempty error-codes\n"
		"exit status: 0 done, 1 verify found corruption, 2 the command could not run.\n");
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

static const struct {
	const char *name;
	int (*run)(struct kctl *k, int argc, char **argv);
} commands[] = {
	{"status", kctl_cmd_status}, {"groups", kctl_cmd_groups},
	{"verify", kctl_cmd_verify}, {"dump-log", kctl_cmd_dump_log},
	{"trash", kctl_cmd_trash}, {"user", kctl_cmd_user}, {"acl", kctl_cmd_acl},
};

static int is_global(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Split argv: the volume options go to kaasd's own option parser (so that
 * kaasctl takes exactly kaasd's --data, --cluster-dir and --config, with its
 * defaults and environment), --json is noted, the rest is the command. */
static int split_args(struct kctl *k, int argc, char **argv, char **vol, int *nvol, char **cmd,
		      int *ncmd)
{
	*nvol = *ncmd = 0;
	vol[(*nvol)++] = "kaasctl";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			k->json = 1;
		} else if (is_global(a, "--data") || is_global(a, "--cluster-dir") ||
			   is_global(a, "--config")) {
			vol[(*nvol)++] = argv[i];
			if (!strchr(a, '=')) {
				if (i + 1 >= argc)
					return kctl_error("%s needs a value", a);
				vol[(*nvol)++] = argv[++i];
			}
		} else {
			cmd[(*ncmd)++] = argv[i];
		}
	}
	vol[*nvol] = cmd[*ncmd] = NULL;
	return 0;
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
	if (kctl_admin_wants(argc, argv))
		return kctl_admin_main(argc, argv);
	struct kctl k = {0};
	char **vol = calloc((size_t)argc + 1, sizeof *vol);
	char **cmd = calloc((size_t)argc + 1, sizeof *cmd);
	int nvol, ncmd, rc = KCTL_EXIT_ERROR;
	if (!vol || !cmd || split_args(&k, argc, argv, vol, &nvol, cmd, &ncmd) != 0)
		goto out;
	if (ncmd == 0) {
		usage(stderr);
		goto out;
	}
	size_t i = 0;
	while (i < sizeof commands / sizeof commands[0] && strcmp(commands[i].name, cmd[0]) != 0)
		i++;
	if (i == sizeof commands / sizeof commands[0]) {
		kctl_error("unknown command '%s' (kaasctl --help lists them)", cmd[0]);
		goto out;
	}
	int c = kaas_config_load(&k.cfg, nvol, vol);
	if (c != 0) {
		rc = c == 1 ? KCTL_EXIT_OK : KCTL_EXIT_ERROR;
		goto out;
	}
	rc = kctl_open(&k);
	if (rc == 0)
		rc = commands[i].run(&k, ncmd, cmd);
out:
	kctl_close(&k);
	free(vol);
	free(cmd);
	return rc;
}
