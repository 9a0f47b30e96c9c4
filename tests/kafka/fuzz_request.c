/*
 * fuzz_request.c — libFuzzer target for kaasd's request decoder.
 *
 * Each input is one request frame body (header + API body, without the
 * size prefix).  It is parsed by the header parser and handed to the API's
 * handler against a broker with an empty topic registry in a scratch
 * directory (auto-creation off, "draining" so Fetch never parks); the
 * bytes after the header are also fed to the RecordBatch validator.
 * Create/Delete/CreatePartitions and AlterUserScramCredentials are left
 * out: they would write to the volume on every input.
 *
 * SASL: one connection's security state lives across inputs, as on a
 * SASL_PLAINTEXT listener: every request passes the gate
 * (kaas_security_admit, the requests before authentication; its answer is
 * not enforced, so the other handlers stay reachable), a SaslHandshake
 * starts a fresh exchange, and SaslAuthenticate continues it against a
 * stored user "fuzz" (password "fuzz-pw", SCRAM-SHA-256 and PLAIN), so an
 * input sequence can reach each step of PLAIN and SCRAM.
 *
 * It links the protocol and broker libraries but no server: the request
 * seam's few functions are defined here.
 *
 * Built two ways:
 *   - with clang -fsanitize=fuzzer (make fuzz-request; CI runs it for a
 *     bounded time over tests/kafka/fuzz-corpus);
 *   - with -DKAAS_FUZZ_REPLAY as a normal check program that replays the
 *     seed corpus (so the target and its seeds stay working in make check).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/credentials.h"
#include "cluster/credential_store.h"
#include "broker/groups/groups.h"
#include "util/logger.h"
#include "kafka/batch.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/sasl.h"
#include "kafka/security.h"
#include "testdir.h"

/* ---- the request seam (kafka/request.h) without a server: the fuzzer
 * links no server library, so these are the only definitions ---- */

void kaas_req_finish(struct kaas_req *req, int status)
{
	req->done = 1;
	req->status = status;
}

/* Work runs on libuv's queue of the broker's loop, as in the server. */
struct fuzz_job {
	uv_work_t w;
	kaas_pool_work_fn work;
	kaas_pool_done_fn done;
	void *arg;
};

static void fuzz_job_work(uv_work_t *w)
{
	struct fuzz_job *j = w->data;
	j->work(j->arg);
}

static void fuzz_job_done(uv_work_t *w, int status)
{
	struct fuzz_job *j = w->data;
	if (j->done)
		j->done(j->arg, status);
	free(j);
}

int kaas_pool_queue(struct kaas_broker *b, kaas_pool_work_fn work, kaas_pool_done_fn done,
		    void *arg)
{
	struct fuzz_job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->w.data = j;
	j->work = work;
	j->done = done;
	j->arg = arg;
	int rc = uv_queue_work(b->loop, &j->w, fuzz_job_work, fuzz_job_done);
	if (rc < 0)
		free(j);
	return rc;
}

/* Completions run at once, but one after another, never nested: the
 * server runs them from its loop, so a completion that queues another one
 * (OffsetFetch v8, group after group) must not recurse here either. */
void kaas_broker_complete(struct kaas_broker *b, struct kaas_completion *c)
{
	static struct kaas_completion **queue;
	static size_t n, cap, running;
	(void)b;
	if (n == cap) {
		size_t ncap = cap ? cap * 2 : 64;
		struct kaas_completion **q = realloc(queue, ncap * sizeof(*q));
		if (!q)
			abort();
		queue = q;
		cap = ncap;
	}
	queue[n++] = c;
	if (running)
		return;
	running = 1;
	for (size_t i = 0; i < n; i++)
		queue[i]->fn(queue[i]);
	n = 0;
	running = 0;
}

void kaas_broker_park(struct kaas_broker *b, struct kaas_fetch_waiter *w)
{
	(void)b;
	w->next = w->prev = w;
}

void kaas_broker_unpark(struct kaas_fetch_waiter *w)
{
	w->next = w->prev = NULL;
}

const char *kaas_conn_peer(const struct kaas_conn *c)
{
	(void)c;
	return "";
}

const struct kaas_conn_security *kaas_conn_security(const struct kaas_conn *c)
{
	(void)c;
	return NULL;
}

/* The one SASL connection (see the top). */
static struct kaas_conn_security sasl_sec = { .listener = "SASL",
					      .protocol = KAAS_SEC_SASL_PLAINTEXT };

struct kaas_conn_security *kaas_conn_security_rw(struct kaas_conn *c)
{
	(void)c;
	return &sasl_sec;
}

static struct kaas_broker broker;
static char *scratch;

static void setup(void)
{
	if (broker.topics)
		return;
	kaas_logger_set_level(KAAS_LOGGER_ERROR + 1);
	scratch = kaas_testdir_make("fuzz");
	if (!scratch || kaas_substrate_open(scratch, &broker.data) < 0 ||
	    kaas_sub_mkdirs(broker.data, "__cluster", 0755) < 0)
		abort();
	char url[4200];
	snprintf(url, sizeof(url), "%s/__cluster", scratch);
	if (kaas_substrate_open(url, &broker.cluster) < 0)
		abort();
	if (kaas_topics_open(broker.data, broker.cluster, NULL, NULL, &broker.topics) < 0)
		abort();
	broker.loop = uv_default_loop();
	broker.cfg.auto_create = 0;
	broker.cfg.num_partitions = 1;
	broker.cfg.message_max_bytes = 1 << 20;
	broker.cfg.max_request_bytes = 100 << 20;
	strcpy(broker.cfg.advertise_host, "127.0.0.1");
	broker.cfg.advertise_port = 9092;
	broker.draining = 1;
	/* Groups: memory only; "draining" answers before any volume work. */
	if (kaas_groups_init(&broker, &broker.groups) < 0)
		abort();
	strcpy(broker.cluster_id, "fuzz");
	broker.cfg.sec.sasl_mechanisms = KAAS_SASL_PLAIN | KAAS_SASL_SCRAM_SHA_256 |
					 KAAS_SASL_SCRAM_SHA_512;
	struct kaas_scram_cred cred = { 0 };
	if (!(broker.creds = kaas_creds_new(broker.cluster, 1000)) ||
	    kaas_scram_from_password(KAAS_SCRAM_SHA_256, "fuzz-pw", 7, 4096, &cred) < 0 ||
	    kaas_cred_put(broker.cluster, "fuzz", &cred) < 0 || !(sasl_sec.sasl = kaas_sasl_new()))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	struct kaas_req *req = calloc(1, sizeof(*req));
	if (!req)
		return 0;
	req->frame = malloc(size ? size : 1);
	if (!req->frame) {
		free(req);
		return 0;
	}
	if (size)
		memcpy(req->frame, data, size);
	req->frame_len = size;
	req->broker = &broker;
	kaas_kr_init(&req->r, req->frame, size);
	kaas_kw_init(&req->w);
	if (kaas_req_header_parse(&req->r, &req->hdr) == 0) {
		struct kaas_batch_summary sum;
		(void)kaas_batch_validate(req->r.p, kaas_kr_left(&req->r), 1 << 20, &sum, NULL);
		int answered = kaas_api_answered(req->hdr.api_key, req->hdr.api_version);
		(void)kaas_security_admit(&sasl_sec, req);
		if (answered && req->hdr.api_key == KAAS_API_SASL_HANDSHAKE) {
			kaas_sasl_free(sasl_sec.sasl);
			sasl_sec.authenticated = 0;
			sasl_sec.session_end_ms = 0;
			if (!(sasl_sec.sasl = kaas_sasl_new()))
				abort();
		}
		switch (answered ? req->hdr.api_key : -1) {
		case KAAS_API_SASL_HANDSHAKE: kaas_api_sasl_handshake(req); break;
		case KAAS_API_SASL_AUTHENTICATE: kaas_api_sasl_authenticate(req); break;
		case KAAS_API_DESCRIBE_USER_SCRAM_CREDENTIALS:
			kaas_api_describe_user_scram_credentials(req);
			break;
		case KAAS_API_API_VERSIONS: kaas_api_versions(req); break;
		case KAAS_API_METADATA: kaas_api_metadata(req); break;
		case KAAS_API_LIST_OFFSETS: kaas_api_list_offsets(req); break;
		case KAAS_API_FIND_COORDINATOR: kaas_api_find_coordinator(req); break;
		case KAAS_API_DESCRIBE_CONFIGS: kaas_api_describe_configs(req); break;
		case KAAS_API_PRODUCE: kaas_api_produce(req); break;
		case KAAS_API_JOIN_GROUP: kaas_api_join_group(req); break;
		case KAAS_API_SYNC_GROUP: kaas_api_sync_group(req); break;
		case KAAS_API_HEARTBEAT: kaas_api_heartbeat(req); break;
		case KAAS_API_LEAVE_GROUP: kaas_api_leave_group(req); break;
		case KAAS_API_OFFSET_COMMIT: kaas_api_offset_commit(req); break;
		case KAAS_API_OFFSET_FETCH: kaas_api_offset_fetch(req); break;
		case KAAS_API_DESCRIBE_GROUPS: kaas_api_describe_groups(req); break;
		case KAAS_API_LIST_GROUPS: kaas_api_list_groups(req); break;
		/* issue 15: admin APIs (the work queue's; no topics here) */
		case KAAS_API_DESCRIBE_CLUSTER: kaas_api_describe_cluster(req); break;
		case KAAS_API_DESCRIBE_LOG_DIRS: kaas_api_describe_log_dirs(req); break;
		case KAAS_API_DELETE_RECORDS: kaas_api_delete_records(req); break;
		case KAAS_API_OFFSET_FOR_LEADER_EPOCH: kaas_api_offset_for_leader_epoch(req); break;
		case KAAS_API_DESCRIBE_PRODUCERS: kaas_api_describe_producers(req); break;
		case KAAS_API_DESCRIBE_TOPIC_PARTITIONS: kaas_api_describe_topic_partitions(req); break;
		case KAAS_API_CREATE_ACLS: kaas_api_create_acls(req); break;
		case KAAS_API_DESCRIBE_ACLS: kaas_api_describe_acls(req); break;
		case KAAS_API_DELETE_ACLS: kaas_api_delete_acls(req); break;
		case KAAS_API_DESCRIBE_CLIENT_QUOTAS: kaas_api_describe_client_quotas(req); break;
		case KAAS_API_ALTER_CLIENT_QUOTAS: kaas_api_alter_client_quotas(req); break;
		case KAAS_API_FETCH:
			kaas_api_fetch(req);
			uv_run(broker.loop, UV_RUN_DEFAULT);
			break;
		default: break;
		}
	}
	if (req->ctx_free)
		req->ctx_free(req->ctx);
	uv_run(broker.loop, UV_RUN_NOWAIT);
	kaas_kw_free(&req->w);
	free(req->frame);
	free(req);
	return 0;
}

#ifdef KAAS_FUZZ_REPLAY
/* Replay every file of the given directories (the seed corpus). */
int main(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		struct kaas_substrate *dir = NULL;
		struct kaas_dirlist l = { 0 };
		if (kaas_substrate_open(argv[i], &dir) < 0 || kaas_sub_list(dir, "", &l) < 0) {
			fprintf(stderr, "cannot list %s\n", argv[i]);
			return 1;
		}
		for (size_t k = 0; k < l.n; k++) {
			char *buf = NULL;
			size_t len = 0;
			if (l.names[k][0] == '.' ||
			    kaas_sub_read_all(dir, l.names[k], 1u << 20, &buf, &len) < 0)
				continue;
			LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
			/* Every prefix too: truncated requests. */
			for (size_t j = 0; j < len; j += 1 + len / 64)
				LLVMFuzzerTestOneInput((const uint8_t *)buf, j);
			free(buf);
			n++;
		}
		kaas_dirlist_free(&l);
		kaas_substrate_close(dir);
	}
	kaas_sasl_free(sasl_sec.sasl);
	kaas_creds_free(broker.creds);
	kaas_topics_close(broker.topics);
	kaas_substrate_close(broker.cluster);
	kaas_substrate_close(broker.data);
	uv_loop_close(uv_default_loop());
	kaas_testdir_remove(scratch);
	printf("replayed %d corpus file(s)\n", n);
	return n > 0 ? 0 : 1;
}
#endif
