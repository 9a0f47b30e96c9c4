/*
 * membership.h — broker registration, heartbeats and liveness.
 *
 *   <cluster>/brokers/<id>.json    written only by broker <id> (replace)
 *
 * Each broker rewrites its document every heartbeat with an increasing
 * counter.  Liveness never compares clocks across hosts: an observer notes,
 * on its OWN monotonic clock, when it last saw a broker's counter change,
 * and calls the broker dead when that is older than the liveness timeout.
 * The document also carries the broker's incarnation (random per process
 * start) so a restarted broker is told apart from its previous life, and the
 * controller epoch it holds (if it won a controller claim), which is how
 * everyone learns who the controller is without trusting a claim file's
 * content.
 *
 * Listeners (issue 17): a broker with named listeners also writes
 *   "listeners": [{"name": "<NAME>", "host": "<host>", "port": <port>}, ...]
 * (its advertised listeners, in configuration order, at most
 * KAAS_MAX_LISTENERS); the top-level "host"/"port" stay the first of them,
 * so a reader that does not know the field sees the same broker address as
 * before.  The format version stays 1: the field is additive, and a
 * document without it (an older broker) has one unnamed address.
 *
 * Lost epochs (issue 33): a broker that was handed a slot's leader epoch and
 * could not claim it in the fence it guards (contract/epoch_fence.h, "lost
 * epochs": the claim exists and is not known to be ours, e.g. a create
 * whose reply was lost) writes
 *   "lost_epochs": [{"topic": "<topic>", "partition": <p>, "epoch": <E>}, ...]
 * (coordinator slots as topic "__coordinator"), at most
 * KAAS_BROKER_LOST_MAX, while the assignment still gives it that slot at
 * that epoch; the controller then hands it the slot again with a new epoch.
 * Additive too: an older controller ignores it (the slot stays unserved, as
 * before).
 */
#ifndef KAAS_MEMBERSHIP_H
#define KAAS_MEMBERSHIP_H

#include <stddef.h>
#include <stdint.h>

#include "substrate/substrate.h"

#define KAAS_BROKERS_DIR "brokers"

/* Listeners per broker, and the longest listener name (Kafka's names are
 * upper-case words such as PLAINTEXT, SSL, INTERNAL). */
#define KAAS_MAX_LISTENERS 4
#define KAAS_LISTENER_NAME_MAX 32

/* One advertised listener: where clients of listener `name` connect. */
struct kaas_listener_addr {
	char name[KAAS_LISTENER_NAME_MAX];
	char host[256];
	int32_t port;
};

/* A slot's leader epoch its leader could not claim (see "Lost epochs"). */
#define KAAS_BROKER_LOST_MAX 8
struct kaas_lost_epoch {
	char topic[256];
	int32_t partition;
	uint32_t epoch;
};

struct kaas_broker_info {
	int32_t id;
	char host[256];             /* the first listener's address */
	int32_t port;
	int nlisteners;             /* 0: a document without "listeners" */
	struct kaas_listener_addr listeners[KAAS_MAX_LISTENERS];
	uint64_t incarnation;
	uint64_t counter;           /* heartbeat counter, increasing within an incarnation */
	uint64_t controller_epoch;  /* controller epoch this broker holds, 0 if none */
	int stopped;                /* written by a clean shutdown: the process is
	                               gone (its id may start again at once) */
	int nlost;                  /* "lost_epochs" (0..KAAS_BROKER_LOST_MAX) */
	struct kaas_lost_epoch lost[KAAS_BROKER_LOST_MAX];
};

/* Write this broker's document (replace).  0 or -errno. */
int kaas_broker_publish(struct kaas_substrate *cluster, const struct kaas_broker_info *b);

/* Where a client that came in on listener `name` reaches broker b: 0 and
 * host and port; name NULL (no named listener) or a document without
 * listeners: the top-level address; -ENOENT when b has named listeners but
 * none called `name` (Kafka then leaves the broker out of its answer). */
int kaas_broker_address(const struct kaas_broker_info *b, const char *name, const char **host,
			int32_t *port);

/* Read one broker's document: 0, -ENOENT, -EBADMSG (corrupt), -errno. */
int kaas_broker_read(struct kaas_substrate *cluster, int32_t id, struct kaas_broker_info *b);

/* Read every broker document.  *out is malloc'd (free()); corrupt or
 * foreign files are skipped (and counted in *skipped if not NULL).
 * 0 or -errno. */
int kaas_broker_list(struct kaas_substrate *cluster, struct kaas_broker_info **out, size_t *n,
		     size_t *skipped);

/* An observer's view of liveness, on its own monotonic clock. */
struct kaas_liveness_entry {
	struct kaas_broker_info info;
	uint64_t changed_ms;        /* observer's clock when the counter last moved */
	int seen;                   /* present in the last observation */
};

struct kaas_liveness {
	uint64_t timeout_ms;
	size_t n;
	struct kaas_liveness_entry *e;
};

/* Fold a fresh listing into the view at observer time now_ms.  A broker
 * seen for the first time counts as changed now (it gets a full timeout to
 * prove itself), so a restarted observer never declares everyone dead.
 * 0 or -ENOMEM. */
int kaas_liveness_observe(struct kaas_liveness *lv, const struct kaas_broker_info *list, size_t n,
			  uint64_t now_ms);

/* Is broker id alive at now_ms?  Unknown brokers are not. */
int kaas_liveness_alive(const struct kaas_liveness *lv, int32_t id, uint64_t now_ms);

/* The ids alive at now_ms, sorted ascending, into ids (capacity max);
 * returns how many. */
size_t kaas_liveness_alive_ids(const struct kaas_liveness *lv, uint64_t now_ms, int32_t *ids,
			       size_t max);

void kaas_liveness_free(struct kaas_liveness *lv);

/* The process's monotonic clock in milliseconds. */
uint64_t kaas_mono_ms(void);

#endif
