/* kaasctl_client_config.c — a Kafka client properties file (the
 * --command-config of Kafka's tools) into kaasctl's client settings. */
#include "tools/kaasctl_client.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* The quoted value of `key="..."` in a JAAS line, into out: 0 or -1. */
static int jaas_value(const char *jaas, const char *key, char *out, size_t outsz)
{
	size_t kl = strlen(key);
	for (const char *p = jaas; (p = strstr(p, key)) != NULL; p += kl) {
		if (p != jaas && !isspace((unsigned char)p[-1]))
			continue;
		const char *q = p + kl;
		while (isspace((unsigned char)*q))
			q++;
		if (*q++ != '=')
			continue;
		while (isspace((unsigned char)*q))
			q++;
		if (*q++ != '"')
			return -1;
		const char *e = strchr(q, '"');
		if (!e || (size_t)(e - q) >= outsz)
			return -1;
		memcpy(out, q, (size_t)(e - q));
		out[e - q] = '\0';
		return 0;
	}
	return -1;
}

static int set(char *dst, size_t sz, const char *v)
{
	if (strlen(v) >= sz)
		return -1;
	strcpy(dst, v);
	return 0;
}

int kctl_client_config_load(struct kctl_client_cfg *cfg, const char *path, char *why,
			    size_t whysz)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->timeout_ms = 30000;
	if (!path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whysz, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	char line[4096], proto[64] = "PLAINTEXT", ts_type[16] = "JKS", ks_type[16] = "JKS";
	char ts[512] = "", ks[512] = "";
	cfg->verify_host = 1;
	int rc = 0, lineno = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#' || *s == '!')
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(why, whysz, "%s:%d: not key=value", path, lineno);
			rc = -1;
			break;
		}
		*eq = '\0';
		char *k = trim(s), *v = trim(eq + 1);
		if (!strcmp(k, "security.protocol"))
			rc = set(proto, sizeof proto, v);
		else if (!strcmp(k, "sasl.mechanism") || !strcmp(k, "sasl.mechanisms"))
			rc = set(cfg->mechanism, sizeof cfg->mechanism, v);
		else if (!strcmp(k, "sasl.username") || !strcmp(k, "username"))
			rc = set(cfg->username, sizeof cfg->username, v);
		else if (!strcmp(k, "sasl.password") || !strcmp(k, "password"))
			rc = set(cfg->password, sizeof cfg->password, v);
		else if (!strcmp(k, "sasl.jaas.config")) {
			if (jaas_value(v, "username", cfg->username, sizeof cfg->username) < 0 ||
			    jaas_value(v, "password", cfg->password, sizeof cfg->password) < 0) {
				snprintf(why, whysz, "%s:%d: sasl.jaas.config without username=\"...\" "
					 "and password=\"...\"", path, lineno);
				rc = -1;
				break;
			}
		} else if (!strcmp(k, "ssl.ca.location"))
			rc = set(cfg->ca_file, sizeof cfg->ca_file, v);
		else if (!strcmp(k, "ssl.truststore.location"))
			rc = set(ts, sizeof ts, v);
		else if (!strcmp(k, "ssl.truststore.type"))
			rc = set(ts_type, sizeof ts_type, v);
		else if (!strcmp(k, "ssl.keystore.location"))
			rc = set(ks, sizeof ks, v);
		else if (!strcmp(k, "ssl.keystore.type"))
			rc = set(ks_type, sizeof ks_type, v);
		else if (!strcmp(k, "ssl.certificate.location"))
			rc = set(cfg->cert_file, sizeof cfg->cert_file, v);
		else if (!strcmp(k, "ssl.key.location"))
			rc = set(cfg->key_file, sizeof cfg->key_file, v);
		else if (!strcmp(k, "ssl.endpoint.identification.algorithm"))
			cfg->verify_host = *v != '\0';
		else if (!strcmp(k, "request.timeout.ms") || !strcmp(k, "default.api.timeout.ms")) {
			char *e;
			long t = strtol(v, &e, 10);
			if (*e || t <= 0 || t > 3600000)
				rc = -1;
			else
				cfg->timeout_ms = (int)t;
		}
		/* Other client keys (client.id, ...) are Kafka's and harmless here. */
		if (rc < 0)
			snprintf(why, whysz, "%s:%d: bad value for %s", path, lineno, k);
	}
	fclose(f);
	if (rc < 0)
		return -1;
	for (char *p = proto; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	/* Kafka's truststore and keystore: kaasctl reads them as PEM only. */
	for (char *p = ts_type; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	for (char *p = ks_type; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	if (ts[0] && strcmp(ts_type, "PEM") != 0) {
		snprintf(why, whysz, "ssl.truststore.location: a %s truststore; kaasctl reads PEM "
			 "(ssl.truststore.type=PEM, or ssl.ca.location)", ts_type);
		return -1;
	}
	if (ks[0] && strcmp(ks_type, "PEM") != 0) {
		snprintf(why, whysz, "ssl.keystore.location: a %s keystore; kaasctl reads PEM "
			 "(ssl.keystore.type=PEM: the key and certificate in one file)", ks_type);
		return -1;
	}
	if (ts[0] && !cfg->ca_file[0])
		strcpy(cfg->ca_file, ts);
	if (ks[0] && !cfg->cert_file[0])
		strcpy(cfg->cert_file, ks);
	cfg->tls = !strcmp(proto, "SSL") || !strcmp(proto, "SASL_SSL");
	if (!strcmp(proto, "SASL_SSL"))
		strcpy(proto, "SASL_PLAINTEXT"); /* the SASL settings are checked alike */
	if (!strcmp(proto, "SASL_PLAINTEXT")) {
		cfg->sasl = 1;
		if (!cfg->mechanism[0])
			strcpy(cfg->mechanism, "GSSAPI"); /* Kafka's default, refused below */
		if (strcmp(cfg->mechanism, "PLAIN") && strcmp(cfg->mechanism, "SCRAM-SHA-256") &&
		    strcmp(cfg->mechanism, "SCRAM-SHA-512")) {
			snprintf(why, whysz, "sasl.mechanism %s: kaasctl speaks PLAIN, SCRAM-SHA-256 "
				 "and SCRAM-SHA-512",
				 cfg->mechanism);
			return -1;
		}
	} else if (strcmp(proto, "PLAINTEXT") != 0 && strcmp(proto, "SSL") != 0) {
		snprintf(why, whysz, "security.protocol %s: kaasctl speaks PLAINTEXT, SSL, "
			 "SASL_PLAINTEXT and SASL_SSL", proto);
		return -1;
	}
	return 0;
}
