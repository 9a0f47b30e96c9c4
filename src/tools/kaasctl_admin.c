/* kaasctl_admin.c — the entry of kaasctl's broker commands: global options
 * (--bootstrap, --command-config, --json), the bootstrap connection, and
 * errors in words (see kaasctl_admin.h). */
#include "tools/kaasctl_admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/kaasctl.h"

static const struct {
	const char *name;
	int (*run)(struct kctl_admin *a, int argc, char **argv);
} cmds[] = {
	{ "topic", kctl_admin_topic },
	{ "group", kctl_admin_group },
	{ "cluster", kctl_admin_cluster },
	{ "txn", kctl_admin_txn },
	{ "user", kctl_admin_user }, /* with --bootstrap only: else the volume's */
	{ "acl", kctl_admin_acl },   /* the same */
};

int kctl_admin_is_command(const char *name)
{
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(cmds[i].name, name))
			return strcmp(name, "user") != 0 && strcmp(name, "acl") != 0;
	return 0;
}

int kctl_admin_wants(int argc, char **argv)
{
	static const char *const valued[] = { "--bootstrap", "--bootstrap-server",
		"--command-config", "--data", "--cluster-dir", "--config" };
	int boot = 0;
	for (int i = 1; i < argc; i++) {
		int skip = 0;
		for (size_t j = 0; j < sizeof valued / sizeof valued[0]; j++)
			if (!strcmp(argv[i], valued[j]))
				skip = 1;
		boot |= !strncmp(argv[i], "--bootstrap", 11);
		if (skip)
			i++;
		else if (argv[i][0] != '-')
			return kctl_admin_is_command(argv[i]) ||
			       (boot && (!strcmp(argv[i], "user") || !strcmp(argv[i], "acl")));
	}
	return 0;
}

int kctl_admin_kerr(const char *what, int16_t code, const struct kaas_kslice *msg)
{
	if (msg && msg->len > 0)
		return kctl_error("%s: %s: %.*s", what, kctl_kerr_name(code), (int)msg->len,
				  (const char *)msg->p);
	const char *m = kctl_kerr_meaning(code);
	return kctl_error("%s: %s%s%s", what, kctl_kerr_name(code), *m ? ": " : "", m);
}

int kctl_admin_dial(struct kctl_admin *a, const char *host, int port, struct kctl_conn *c)
{
	if (kctl_conn_open(c, host, port, &a->cfg) < 0)
		return kctl_error("%s", c->why);
	return 0;
}

/* Is arg the option name, alone or as name=value? */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *err)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*err = kctl_error("%s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

int kctl_admin_main(int argc, char **argv)
{
	struct kctl_admin a;
	memset(&a, 0, sizeof a);
	a.boot.fd = -1;
	const char *bootstrap = getenv("KAAS_BOOTSTRAP"), *props = NULL;
	if (!bootstrap || !*bootstrap)
		bootstrap = "127.0.0.1:9092";
	char **cmd = calloc((size_t)argc + 1, sizeof *cmd);
	if (!cmd)
		return kctl_error("out of memory");
	int ncmd = 0, err = 0;
	for (int i = 1; i < argc && !err; i++) {
		const char *v;
		if (!strcmp(argv[i], "--json"))
			a.json = 1;
		else if ((v = opt_value(argc, argv, &i, "--bootstrap", &err)) ||
			 (v = opt_value(argc, argv, &i, "--bootstrap-server", &err)))
			bootstrap = v;
		else if ((v = opt_value(argc, argv, &i, "--command-config", &err)))
			props = v;
		else if (!err)
			cmd[ncmd++] = argv[i];
	}
	int rc = KCTL_EXIT_ERROR;
	char why[512];
	size_t c = 0;
	if (err || ncmd == 0)
		goto out;
	while (c < sizeof cmds / sizeof cmds[0] && strcmp(cmds[c].name, cmd[0]) != 0)
		c++;
	if (c == sizeof cmds / sizeof cmds[0]) {
		kctl_error("unknown command '%s'", cmd[0]);
		goto out;
	}
	if (kctl_split_hostport(bootstrap, a.host, sizeof a.host, &a.port) < 0) {
		kctl_error("--bootstrap %s: not HOST:PORT", bootstrap);
		goto out;
	}
	if (kctl_client_config_load(&a.cfg, props, why, sizeof why) < 0) {
		kctl_error("--command-config: %s", why);
		goto out;
	}
	if (kctl_admin_dial(&a, a.host, a.port, &a.boot) != 0)
		goto out;
	rc = cmds[c].run(&a, ncmd, cmd);
out:
	kctl_conn_close(&a.boot);
	memset(a.cfg.password, 0, sizeof a.cfg.password);
	free(cmd);
	return rc;
}
