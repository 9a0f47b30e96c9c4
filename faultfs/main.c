/*
 * main.c — the faultfs program.
 *
 *   faultfs --lower URL --mount DIR [--hosts N] [--config FILE.json]
 *           [--seed S] [--profile nfs-floor|passthrough] [--log FILE]
 *       mounts DIR/host0 .. DIR/host(N-1), serves DIR/.faultfs.sock, logs
 *       injected faults to FILE (default DIR/.faultfs-events.jsonl), runs in
 *       the foreground until SIGINT/SIGTERM, then unmounts everything.
 *   faultfs ctl DIR COMMAND...
 *       sends one control command (JSON, or a shorthand) and prints the reply.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faultfs/ctl_socket.h"
#include "faultfs/fuse_front.h"
#include "faultfs/model.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: faultfs --lower URL --mount DIR [--hosts N] [--config FILE.json] [--seed S]\n"
		"               [--profile nfs-floor|passthrough] [--log FILE]\n"
		"       faultfs ctl DIR COMMAND\n"
		"COMMAND: a JSON object, or one of\n"
		"  dump | counters | clear [ID] | crash HOST | heal [HOST]\n"
		"  set RULE-JSON | switch rename_copy|fsync_lies|excl_race on|off\n");
}

static int number(const char *s, long *out)
{
	char *end;
	errno = 0;
	*out = strtol(s, &end, 10);
	return *s && !*end && !errno;
}

static int ctl_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *dir = argv[0];
	const char *c = argv[1];
	char *cmd = NULL;
	long n;
	int r = -1;
	if (c[0] == '{')
		r = asprintf(&cmd, "%s", c);
	else if (!strcmp(c, "dump") || !strcmp(c, "counters"))
		r = asprintf(&cmd, "{\"cmd\":\"%s\"}", c);
	else if (!strcmp(c, "clear") && argc == 2)
		r = asprintf(&cmd, "{\"cmd\":\"clear\"}");
	else if (!strcmp(c, "clear") && number(argv[2], &n))
		r = asprintf(&cmd, "{\"cmd\":\"clear\",\"id\":%ld}", n);
	else if (!strcmp(c, "crash") && argc == 3 && number(argv[2], &n))
		r = asprintf(&cmd, "{\"cmd\":\"crash\",\"host\":%ld}", n);
	else if (!strcmp(c, "heal") && argc == 2)
		r = asprintf(&cmd, "{\"cmd\":\"heal\"}");
	else if (!strcmp(c, "heal") && number(argv[2], &n))
		r = asprintf(&cmd, "{\"cmd\":\"heal\",\"host\":%ld}", n);
	else if (!strcmp(c, "set") && argc == 3)
		r = asprintf(&cmd, "{\"cmd\":\"set\",\"rule\":%s}", argv[2]);
	else if (!strcmp(c, "switch") && argc == 4 && (!strcmp(argv[3], "on") || !strcmp(argv[3], "off")))
		r = asprintf(&cmd, "{\"cmd\":\"switch\",\"name\":\"%s\",\"on\":%s}", argv[2],
			     !strcmp(argv[3], "on") ? "true" : "false");
	if (r < 0) {
		fprintf(stderr, "faultfs ctl: cannot understand command '%s'\n", c);
		usage(stderr);
		return 2;
	}
	char *sock = kaas_ctl_socket_path(dir);
	char *reply = NULL;
	int rc = sock ? kaas_ctl_send(sock, cmd, &reply) : -ENOMEM;
	free(sock);
	free(cmd);
	if (rc < 0) {
		fprintf(stderr, "faultfs ctl: %s\n", kaas_sub_errdetail());
		return 1;
	}
	fputs(reply, stdout);
	int ok = strstr(reply, "\"ok\":true") != NULL;
	free(reply);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "ctl"))
		return ctl_main(argc - 2, argv + 2);
	const char *lower = NULL, *mount = NULL, *config = NULL, *profile = NULL, *log = NULL;
	long hosts = 2, seed = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			fprintf(stderr, "faultfs: %s needs a value\n", a);
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--lower"))
			lower = v;
		else if (!strcmp(a, "--mount"))
			mount = v;
		else if (!strcmp(a, "--config"))
			config = v;
		else if (!strcmp(a, "--profile"))
			profile = v;
		else if (!strcmp(a, "--log"))
			log = v;
		else if (!strcmp(a, "--hosts")) {
			if (!number(v, &hosts) || hosts < 1 || hosts > KAAS_FAULT_MAX_HOSTS) {
				fprintf(stderr, "faultfs: --hosts must be 1..%d\n", KAAS_FAULT_MAX_HOSTS);
				return 2;
			}
		} else if (!strcmp(a, "--seed")) {
			if (!number(v, &seed) || seed < 0) {
				fprintf(stderr, "faultfs: --seed must be a number >= 0\n");
				return 2;
			}
		} else {
			fprintf(stderr, "faultfs: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!lower || !mount) {
		fprintf(stderr, "faultfs: --lower and --mount are required\n");
		usage(stderr);
		return 2;
	}
	char *cfg_text = NULL;
	if (config && !(cfg_text = kaas_fault_read_config(config))) {
		fprintf(stderr, "faultfs: cannot read config %s: %s\n", config, strerror(errno));
		return 2;
	}
	char *deflog = NULL;
	if (!log && asprintf(&deflog, "%s/.faultfs-events.jsonl", mount) >= 0)
		log = deflog;

	/* every thread inherits this mask; main waits for the signals */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	struct kaas_fault_model *m = NULL;
	int rc = kaas_fault_model_new(lower, NULL, (uint64_t)seed, log, &m);
	if (rc == 0 && profile) {
		char *p = NULL;
		if (asprintf(&p, "{\"profile\":\"%s\"}", profile) < 0)
			rc = -ENOMEM;
		else
			rc = kaas_fault_configure(m, p);
		free(p);
	}
	if (rc == 0 && cfg_text)
		rc = kaas_fault_configure(m, cfg_text);
	free(cfg_text);
	if (rc < 0) {
		fprintf(stderr, "faultfs: %s\n", kaas_sub_errdetail());
		kaas_fault_model_free(m);
		free(deflog);
		return 1;
	}
	char **mps = calloc((size_t)hosts, sizeof *mps);
	for (long i = 0; mps && i < hosts; i++) {
		if (asprintf(&mps[i], "%s/host%ld", mount, i) < 0)
			mps[i] = NULL;
		if (mps[i])
			mkdir(mps[i], 0755);
	}
	struct kaas_fuse_front *front = NULL;
	struct kaas_ctl_server *ctl = NULL;
	char *sock = kaas_ctl_socket_path(mount);
	rc = kaas_fuse_front_start(m, (int)hosts, mps, &front);
	if (rc == 0) {
		rc = kaas_ctl_server_start(m, sock, &ctl);
		if (rc < 0)
			fprintf(stderr, "faultfs: %s\n", kaas_sub_errdetail());
	}
	if (rc == 0) {
		fprintf(stderr, "faultfs: %ld host(s) mounted under %s over %s; control: %s\n", hosts, mount,
			lower, sock);
		int sig = 0;
		sigwait(&sigs, &sig);
	}
	kaas_ctl_server_stop(ctl);
	kaas_fuse_front_stop(front);
	kaas_fault_model_free(m);
	for (long i = 0; mps && i < hosts; i++)
		free(mps[i]);
	free(mps);
	free(sock);
	free(deflog);
	return rc == 0 ? 0 : 1;
}
