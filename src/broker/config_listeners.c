/*
 * config_listeners.c — the listener and TLS settings of kaasd (Kafka's
 * keys; config.h "Listeners and TLS"): parsed as they come, then resolved
 * into one table of listeners once every source has been read.
 */
#include "broker/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_HANDSHAKE_TIMEOUT_MS 10000

static const char *const protocol_names[] = {
	[KAAS_SEC_PLAINTEXT] = "PLAINTEXT",
	[KAAS_SEC_SSL] = "SSL",
	[KAAS_SEC_SASL_PLAINTEXT] = "SASL_PLAINTEXT",
	[KAAS_SEC_SASL_SSL] = "SASL_SSL",
};

const char *kaas_sec_protocol_name(enum kaas_sec_protocol p)
{
	return protocol_names[p];
}

/* A protocol by name (case-insensitive): 0 and *p, or -EINVAL. */
static int protocol_by_name(const char *s, size_t len, enum kaas_sec_protocol *p)
{
	for (int i = 0; i < 4; i++)
		if (strlen(protocol_names[i]) == len && strncasecmp(protocol_names[i], s, len) == 0) {
			*p = (enum kaas_sec_protocol)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const keys[] = {
	"listeners", "advertised.listeners", "listener.security.protocol.map",
	"ssl.keystore.type", "ssl.keystore.location", "ssl.truststore.type",
	"ssl.truststore.location", "ssl.client.auth", "ssl.handshake.timeout.ms",
	"sasl.enabled.mechanisms", "connections.max.reauth.ms",
	/* issue 35: limits before and after login, TLS suites and protocols */
	"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
	"connections.max.idle.ms", "sasl.server.max.receive.size",
	"sasl.authentication.timeout.ms", "connection.failed.authentication.delay.ms",
	"ssl.cipher.suites", "ssl.enabled.protocols", NULL,
};

int kaas_config_security_key(const char *key)
{
	for (int i = 0; keys[i]; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

/* sasl.enabled.mechanisms: a comma list of PLAIN, SCRAM-SHA-256,
 * SCRAM-SHA-512 (Kafka's names, case as Kafka: exact). */
static int sasl_mechanisms(struct kaas_security_cfg *sc, const char *v)
{
	static const struct {
		const char *name;
		unsigned bit;
	} known[] = { { "PLAIN", KAAS_SASL_PLAIN },
		      { "SCRAM-SHA-256", KAAS_SASL_SCRAM_SHA_256 },
		      { "SCRAM-SHA-512", KAAS_SASL_SCRAM_SHA_512 } };
	unsigned mask = 0;
	const char *p = v;
	while (*p) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		size_t n = strcspn(p, ", \t");
		if (!n)
			break;
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == n && strncmp(known[i].name, p, n) == 0)
				bit = known[i].bit;
		if (!bit) {
			fprintf(stderr, "kaasd: sasl.enabled.mechanisms: '%.*s' is not served "
					"(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)\n", (int)n, p);
			return -EINVAL;
		}
		mask |= bit;
		p += n;
	}
	if (!mask) {
		fprintf(stderr, "kaasd: sasl.enabled.mechanisms is empty\n");
		return -EINVAL;
	}
	sc->sasl_mechanisms = mask;
	return 0;
}

static char *next_item(char **s);

/* A whole number in [min, max]: 0 and *out, or -EINVAL (printed). */
static int limit_num(const char *key, const char *v, long long min, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || *end || end == v || x < min || x > max) {
		fprintf(stderr, "kaasd: bad value '%s' for %s (%lld..%lld)\n", v, key, min, max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

/* max.connections.per.ip.overrides: "addr:n,addr:n" (the last ':' ends
 * the address, so an IPv6 address may stand in it; [v6] too). */
static int ip_overrides(struct kaas_security_cfg *sc, const char *key, const char *v)
{
	char *copy = strdup(v);
	if (!copy)
		return -ENOMEM;
	char *rest = copy, *item;
	int n = 0, rc = 0;
	while (rc == 0 && (item = next_item(&rest))) {
		char *colon = strrchr(item, ':');
		long long x;
		if (!colon || colon == item || n == KAAS_MAX_IP_OVERRIDES) {
			fprintf(stderr, "kaasd: %s: '%s' is not address:count (at most %d)\n", key,
				item, KAAS_MAX_IP_OVERRIDES);
			rc = -EINVAL;
			break;
		}
		*colon = '\0';
		if ((rc = limit_num(key, colon + 1, 0, INT32_MAX, &x)) < 0)
			break;
		size_t al = strlen(item);
		if (al >= 2 && item[0] == '[' && item[al - 1] == ']') {
			item[al - 1] = '\0';
			item++;
		}
		if (strlen(item) >= sizeof(sc->ip_overrides[0].addr)) {
			fprintf(stderr, "kaasd: %s: address '%s' too long\n", key, item);
			rc = -EINVAL;
			break;
		}
		snprintf(sc->ip_overrides[n].addr, sizeof(sc->ip_overrides[n].addr), "%s", item);
		sc->ip_overrides[n++].n = (uint32_t)x;
	}
	if (rc == 0)
		sc->n_ip_overrides = n;
	free(copy);
	return rc;
}

/* ssl.enabled.protocols: TLSv1.2 and/or TLSv1.3 (older ones are not
 * served). */
static int tls_protocols(struct kaas_security_cfg *sc, const char *key, const char *v)
{
	int min = 99, max = 0;
	const char *p = v;
	while (*p) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		size_t n = strcspn(p, ", \t");
		if (!n)
			break;
		int ver = n == 7 && strncmp(p, "TLSv1.2", 7) == 0   ? 12
			  : n == 7 && strncmp(p, "TLSv1.3", 7) == 0 ? 13
								    : 0;
		if (!ver) {
			fprintf(stderr, "kaasd: %s: '%.*s' is not served (TLSv1.2, TLSv1.3)\n", key,
				(int)n, p);
			return -EINVAL;
		}
		min = ver < min ? ver : min;
		max = ver > max ? ver : max;
		p += n;
	}
	if (!max) {
		fprintf(stderr, "kaasd: %s is empty\n", key);
		return -EINVAL;
	}
	sc->tls_min = min;
	sc->tls_max = max;
	sc->limits_set |= KAAS_LIM_PROTOCOLS;
	return 0;
}

/* The issue-35 keys: 1 taken (0 or < 0 in *rc), 0 not one of them. */
static int apply_limit(struct kaas_security_cfg *sc, const char *key, const char *v, int *rc)
{
	long long x = 0;
	if (strcmp(key, "ssl.cipher.suites") == 0) {
		*rc = kaas_config_set_str(&sc->cipher_suites, v);
		return 1;
	}
	if (strcmp(key, "ssl.enabled.protocols") == 0) {
		*rc = tls_protocols(sc, key, v);
		return 1;
	}
	if (strcmp(key, "max.connections.per.ip.overrides") == 0) {
		*rc = ip_overrides(sc, key, v);
		return 1;
	}
	if (strcmp(key, "max.connections") == 0) {
		if ((*rc = limit_num(key, v, 0, INT32_MAX, &x)) == 0) {
			sc->max_connections = (uint32_t)x;
			sc->limits_set |= KAAS_LIM_MAX_CONN;
		}
	} else if (strcmp(key, "max.connections.per.ip") == 0) {
		if ((*rc = limit_num(key, v, 0, INT32_MAX, &x)) == 0) {
			sc->max_connections_per_ip = (uint32_t)x;
			sc->limits_set |= KAAS_LIM_MAX_PER_IP;
		}
	} else if (strcmp(key, "connections.max.idle.ms") == 0) {
		if ((*rc = limit_num(key, v, -1, INT64_MAX / 2, &x)) == 0) {
			sc->idle_ms = x;
			sc->limits_set |= KAAS_LIM_IDLE;
		}
	} else if (strcmp(key, "sasl.server.max.receive.size") == 0) {
		if ((*rc = limit_num(key, v, 64, INT32_MAX, &x)) == 0) {
			sc->sasl_max_receive = (uint32_t)x;
			sc->limits_set |= KAAS_LIM_SASL_RECV;
		}
	} else if (strcmp(key, "sasl.authentication.timeout.ms") == 0) {
		if ((*rc = limit_num(key, v, 100, 3600000, &x)) == 0) {
			sc->sasl_timeout_ms = (uint32_t)x;
			sc->limits_set |= KAAS_LIM_SASL_TIMEOUT;
		}
	} else if (strcmp(key, "connection.failed.authentication.delay.ms") == 0) {
		if ((*rc = limit_num(key, v, 0, 600000, &x)) == 0) {
			sc->failed_auth_delay_ms = (uint32_t)x;
			sc->limits_set |= KAAS_LIM_AUTH_DELAY;
		}
	} else {
		return 0;
	}
	return 1;
}

int kaas_config_security_apply(struct kaas_config *c, const char *key, const char *v)
{
	struct kaas_security_cfg *sc = &c->sec;
	int lrc;
	if (apply_limit(sc, key, v, &lrc))
		return lrc;
	if (strcmp(key, "listeners") == 0)
		return kaas_config_set_str(&sc->listeners, v);
	if (strcmp(key, "advertised.listeners") == 0)
		return kaas_config_set_str(&sc->advertised, v);
	if (strcmp(key, "listener.security.protocol.map") == 0)
		return kaas_config_set_str(&sc->protocol_map, v);
	if (strcmp(key, "ssl.keystore.location") == 0)
		return kaas_config_set_str(&sc->keystore_location, v);
	if (strcmp(key, "ssl.truststore.location") == 0)
		return kaas_config_set_str(&sc->truststore_location, v);
	if (strcmp(key, "ssl.keystore.type") == 0 || strcmp(key, "ssl.truststore.type") == 0) {
		if (strcasecmp(v, "PEM") == 0)
			return 0;
		fprintf(stderr, "kaasd: %s = %s: only PEM is supported\n", key, v);
		return -EINVAL;
	}
	if (strcmp(key, "ssl.client.auth") == 0) {
		if (strcasecmp(v, "none") == 0)
			sc->client_auth = KAAS_SSL_AUTH_NONE;
		else if (strcasecmp(v, "requested") == 0)
			sc->client_auth = KAAS_SSL_AUTH_REQUESTED;
		else if (strcasecmp(v, "required") == 0)
			sc->client_auth = KAAS_SSL_AUTH_REQUIRED;
		else {
			fprintf(stderr, "kaasd: ssl.client.auth = %s: expected none, requested or required\n", v);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "sasl.enabled.mechanisms") == 0)
		return sasl_mechanisms(sc, v);
	char *end;
	if (strcmp(key, "connections.max.reauth.ms") == 0) {
		errno = 0;
		long long ms = strtoll(v, &end, 10);
		if (errno || *end || end == v || ms < 0 || ms > UINT32_MAX) {
			fprintf(stderr, "kaasd: bad value '%s' for %s (0..%u ms)\n", v, key, UINT32_MAX);
			return -EINVAL;
		}
		sc->reauth_ms = (uint32_t)ms;
		return 0;
	}
	/* ssl.handshake.timeout.ms */
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || end == v || x < 100 || x > 600000) {
		fprintf(stderr, "kaasd: bad value '%s' for %s (100..600000)\n", v, key);
		return -EINVAL;
	}
	sc->handshake_timeout_ms = (uint32_t)x;
	return 0;
}

/* The next comma-separated item of *s, trimmed, NUL-terminated in place
 * (NULL at the end). */
static char *next_item(char **s)
{
	while (**s == ',' || isspace((unsigned char)**s))
		(*s)++;
	if (!**s)
		return NULL;
	char *item = *s;
	char *comma = strchr(item, ',');
	*s = comma ? comma + 1 : item + strlen(item);
	if (comma)
		*comma = '\0';
	char *e = item + strlen(item);
	while (e > item && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return item;
}

/* "NAME://host:port" (host may be empty or [v6]): 0, or -EINVAL (printed). */
static int parse_endpoint(const char *key, char *item, char *name, size_t namesz, char *host,
			  size_t hostsz, int *port)
{
	char *sep = strstr(item, "://");
	size_t nl = sep ? (size_t)(sep - item) : 0;
	if (!sep || nl == 0 || nl >= namesz) {
		fprintf(stderr, "kaasd: %s: '%s' is not NAME://host:port\n", key, item);
		return -EINVAL;
	}
	for (size_t i = 0; i < nl; i++) {
		if (!isalnum((unsigned char)item[i]) && item[i] != '_' && item[i] != '-') {
			fprintf(stderr, "kaasd: %s: bad listener name in '%s'\n", key, item);
			return -EINVAL;
		}
		name[i] = (char)toupper((unsigned char)item[i]);
	}
	name[nl] = '\0';
	char *hp = sep + 3;
	char *colon = strrchr(hp, ':');
	char *end = NULL;
	long p = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon[1] == '\0' || *end || p < 0 || p > 65535) {
		fprintf(stderr, "kaasd: %s: '%s' has no valid port\n", key, item);
		return -EINVAL;
	}
	*colon = '\0';
	size_t hl = strlen(hp);
	if (hl >= 2 && hp[0] == '[' && hp[hl - 1] == ']') {
		hp[hl - 1] = '\0';
		hp++;
		hl -= 2;
	}
	if (hl >= hostsz) {
		fprintf(stderr, "kaasd: %s: host too long in '%s'\n", key, item);
		return -EINVAL;
	}
	memcpy(host, hp, hl + 1);
	*port = (int)p;
	return 0;
}

static struct kaas_listener_cfg *find_listener(struct kaas_security_cfg *sc, const char *name)
{
	for (int i = 0; i < sc->n; i++)
		if (strcmp(sc->l[i].name, name) == 0)
			return &sc->l[i];
	return NULL;
}

/* One parsed endpoint of a list, for each_endpoint's callback. */
struct endpoint {
	char name[KAAS_LISTENER_NAME_MAX];
	char host[256];
	int port;
};

/* Parse the comma-separated endpoints of `value` and hand each to fn:
 * 0, the first error of parsing or of fn, or -ENOMEM. */
static int each_endpoint(struct kaas_security_cfg *sc, const char *key, const char *value,
			 int (*fn)(struct kaas_security_cfg *sc, struct endpoint *e))
{
	char *copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	int rc = 0;
	char *s = copy, *item;
	struct endpoint e;
	while (rc == 0 && (item = next_item(&s))) {
		rc = parse_endpoint(key, item, e.name, sizeof(e.name), e.host, sizeof(e.host), &e.port);
		if (rc == 0)
			rc = fn(sc, &e);
	}
	free(copy);
	return rc;
}

static int add_listener(struct kaas_security_cfg *sc, struct endpoint *e)
{
	if (sc->n == KAAS_MAX_LISTENERS) {
		fprintf(stderr, "kaasd: listeners: at most %d listeners\n", KAAS_MAX_LISTENERS);
		return -EINVAL;
	}
	if (find_listener(sc, e->name)) {
		fprintf(stderr, "kaasd: listeners: %s named twice\n", e->name);
		return -EINVAL;
	}
	for (int i = 0; i < sc->n && e->port; i++)
		if (sc->l[i].port == e->port) {
			fprintf(stderr, "kaasd: listeners: port %d used twice\n", e->port);
			return -EINVAL;
		}
	struct kaas_listener_cfg *l = &sc->l[sc->n];
	memset(l, 0, sizeof(*l));
	if (strlen(e->host) >= sizeof(l->host)) {
		fprintf(stderr, "kaasd: listeners: host %s too long\n", e->host);
		return -EINVAL;
	}
	snprintf(l->name, sizeof(l->name), "%s", e->name);
	snprintf(l->host, sizeof(l->host), "%s", e->host[0] ? e->host : "0.0.0.0");
	l->port = e->port;
	sc->n++;
	return 0;
}

static int set_advertised(struct kaas_security_cfg *sc, struct endpoint *e)
{
	struct kaas_listener_cfg *l = find_listener(sc, e->name);
	if (!l) {
		fprintf(stderr, "kaasd: advertised.listeners: %s is not in listeners\n", e->name);
		return -EINVAL;
	}
	if (e->host[0])
		snprintf(l->adv_host, sizeof(l->adv_host), "%s", e->host);
	l->adv_port = e->port;
	return 0;
}

/* The security protocol of each listener: its entry in the map, else the
 * protocol its name spells (Kafka's default map). */
static int map_protocols(struct kaas_security_cfg *sc)
{
	char *copy = sc->protocol_map ? strdup(sc->protocol_map) : NULL;
	if (sc->protocol_map && !copy)
		return -ENOMEM;
	int found[KAAS_MAX_LISTENERS] = { 0 };
	for (int i = 0; i < sc->n; i++)
		found[i] = protocol_by_name(sc->l[i].name, strlen(sc->l[i].name),
					    &sc->l[i].protocol) == 0;
	int rc = 0;
	char *s = copy, *item;
	while (copy && rc == 0 && (item = next_item(&s))) {
		char *colon = strchr(item, ':');
		enum kaas_sec_protocol p;
		if (!colon || protocol_by_name(colon + 1, strlen(colon + 1), &p) < 0) {
			fprintf(stderr, "kaasd: listener.security.protocol.map: '%s' is not "
					"NAME:PROTOCOL (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)\n", item);
			rc = -EINVAL;
			break;
		}
		for (int i = 0; i < sc->n; i++)
			if ((size_t)(colon - item) == strlen(sc->l[i].name) &&
			    strncasecmp(item, sc->l[i].name, strlen(sc->l[i].name)) == 0) {
				sc->l[i].protocol = p;
				found[i] = 1;
			}
	}
	free(copy);
	for (int i = 0; rc == 0 && i < sc->n; i++) {
		struct kaas_listener_cfg *l = &sc->l[i];
		if (!found[i]) {
			fprintf(stderr, "kaasd: listener %s has no security protocol: name it in "
					"listener.security.protocol.map\n", l->name);
			rc = -EINVAL;
		}
	}
	return rc;
}

int kaas_config_security_resolve(struct kaas_config *c)
{
	struct kaas_security_cfg *sc = &c->sec;
	if (!sc->handshake_timeout_ms)
		sc->handshake_timeout_ms = DEFAULT_HANDSHAKE_TIMEOUT_MS;
	if (!sc->sasl_mechanisms)
		sc->sasl_mechanisms = KAAS_SASL_SCRAM_SHA_256 | KAAS_SASL_SCRAM_SHA_512;
	/* Kafka's defaults for the limits it has (kaas's own: the SASL deadline). */
	if (!(sc->limits_set & KAAS_LIM_MAX_CONN))
		sc->max_connections = INT32_MAX;
	if (!(sc->limits_set & KAAS_LIM_MAX_PER_IP))
		sc->max_connections_per_ip = INT32_MAX;
	if (!(sc->limits_set & KAAS_LIM_IDLE))
		sc->idle_ms = 600000;
	if (!(sc->limits_set & KAAS_LIM_SASL_RECV))
		sc->sasl_max_receive = 524288;
	if (!(sc->limits_set & KAAS_LIM_SASL_TIMEOUT))
		sc->sasl_timeout_ms = 10000;
	if (!(sc->limits_set & KAAS_LIM_AUTH_DELAY))
		sc->failed_auth_delay_ms = 100;
	if (!(sc->limits_set & KAAS_LIM_PROTOCOLS)) {
		sc->tls_min = 12;
		sc->tls_max = 13;
	}
	sc->n = 0;
	if (!sc->listeners) {
		if (sc->advertised) {
			fprintf(stderr, "kaasd: advertised.listeners needs listeners\n");
			return -EINVAL;
		}
		struct kaas_listener_cfg *l = &sc->l[0];
		memset(l, 0, sizeof(*l));
		strcpy(l->name, "PLAINTEXT");
		snprintf(l->host, sizeof(l->host), "%s", c->listen_host);
		l->port = c->listen_port;
		snprintf(l->adv_host, sizeof(l->adv_host), "%s", c->advertise_host);
		l->adv_port = c->advertise_port;
		l->protocol = KAAS_SEC_PLAINTEXT;
		sc->n = 1;
		/* A protocol map naming PLAINTEXT's protocol still applies. */
		if (sc->protocol_map && map_protocols(sc) < 0)
			return -EINVAL;
	} else {
		if (sc->listen_set) {
			fprintf(stderr, "kaasd: both --listen/--advertise and listeners are set: use one\n");
			return -EINVAL;
		}
		int rc = each_endpoint(sc, "listeners", sc->listeners, add_listener);
		if (rc == 0 && sc->n == 0) {
			fprintf(stderr, "kaasd: listeners is empty\n");
			rc = -EINVAL;
		}
		if (rc == 0 && sc->advertised)
			rc = each_endpoint(sc, "advertised.listeners", sc->advertised, set_advertised);
		if (rc == 0)
			rc = map_protocols(sc);
		if (rc < 0)
			return rc;
		for (int i = 0; i < sc->n; i++) {
			struct kaas_listener_cfg *l = &sc->l[i];
			if (l->adv_host[0])
				continue;
			if (strcmp(l->host, "0.0.0.0") == 0 || strcmp(l->host, "::") == 0 ||
			    strcmp(l->host, "localhost") == 0)
				strcpy(l->adv_host, "127.0.0.1");
			else
				snprintf(l->adv_host, sizeof(l->adv_host), "%s", l->host);
			if (!l->adv_port)
				l->adv_port = l->port;
		}
		snprintf(c->listen_host, sizeof(c->listen_host), "%s", sc->l[0].host);
		c->listen_port = sc->l[0].port;
		snprintf(c->advertise_host, sizeof(c->advertise_host), "%s", sc->l[0].adv_host);
		c->advertise_port = sc->l[0].adv_port;
	}
	int tls = 0;
	for (int i = 0; i < sc->n; i++)
		tls |= sc->l[i].protocol == KAAS_SEC_SSL || sc->l[i].protocol == KAAS_SEC_SASL_SSL;
	if (tls && !sc->keystore_location) {
		fprintf(stderr, "kaasd: an SSL listener needs ssl.keystore.location "
				"(one PEM file with the key and the certificate chain)\n");
		return -EINVAL;
	}
	if (tls && sc->client_auth != KAAS_SSL_AUTH_NONE && !sc->truststore_location) {
		fprintf(stderr, "kaasd: ssl.client.auth needs ssl.truststore.location (the CA "
				"certificates that sign client certificates)\n");
		return -EINVAL;
	}
	return 0;
}

void kaas_config_security_free(struct kaas_config *c)
{
	struct kaas_security_cfg *sc = &c->sec;
	free(sc->listeners);
	free(sc->advertised);
	free(sc->protocol_map);
	free(sc->keystore_location);
	free(sc->truststore_location);
	free(sc->cipher_suites);
	sc->cipher_suites = NULL;
	sc->listeners = sc->advertised = sc->protocol_map = NULL;
	sc->keystore_location = sc->truststore_location = NULL;
}

void kaas_config_advertised(const struct kaas_config *c, struct kaas_broker_info *me)
{
	const struct kaas_security_cfg *sc = &c->sec;
	snprintf(me->host, sizeof(me->host), "%s", c->advertise_host);
	me->port = c->advertise_port;
	me->nlisteners = 0;
	/* A lone PLAINTEXT listener from --listen writes no "listeners" field:
	 * the document stays what older brokers wrote. */
	if (!sc->listeners)
		return;
	for (int i = 0; i < sc->n; i++) {
		struct kaas_listener_addr *a = &me->listeners[me->nlisteners++];
		snprintf(a->name, sizeof(a->name), "%s", sc->l[i].name);
		snprintf(a->host, sizeof(a->host), "%s", sc->l[i].adv_host);
		a->port = sc->l[i].adv_port;
	}
}
