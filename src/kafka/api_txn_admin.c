/*
 * api_txn_admin.c — the operators' view of transactions:
 * DescribeTransactions 0 and ListTransactions 0 (flexible), on the work
 * queue.  Each broker answers for the transactional ids it coordinates
 * (the admin client asks every broker for a list, and each id's
 * coordinator for its description), as Kafka does.
 */
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/txn/txn.h"
#include "kafka/authz.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/txn_wire.h"
#include "util/status.h"

static void write_description(struct kaas_kw *w, int f, struct kaas_kslice id, int16_t err,
			      const struct kaas_txn_doc *d)
{
	kaas_kw_i16(w, err);
	kaas_kw_strn(w, f, id.p, id.len);
	kaas_kw_str(w, f, d ? kaas_txn_state_name(d->state) : "");
	kaas_kw_i32(w, d ? d->timeout_ms : 0);
	kaas_kw_i64(w, d && d->state == KAAS_TXN_ONGOING ? d->start_ms : -1);
	kaas_kw_i64(w, d ? d->producer_id : -1);
	kaas_kw_i16(w, d ? d->producer_epoch : -1);
	/* Topics: the partitions in the transaction, grouped by topic in
	 * first-seen order; none once it is complete (or before one began),
	 * as Kafka answers.  kafka-transactions.sh find-hanging takes a
	 * partition listed here for one whose marker is still to come, so a
	 * complete transaction that kept its partitions hid every hanging
	 * transaction of its producer. */
	size_t n = d && (d->state == KAAS_TXN_ONGOING || d->state == KAAS_TXN_PREPARE_COMMIT ||
			 d->state == KAAS_TXN_PREPARE_ABORT) ? d->nparts : 0;
	int32_t ntopics = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && strcmp(d->parts[j].topic, d->parts[i].topic))
			j++;
		ntopics += j == i;
	}
	kaas_kw_array(w, f, ntopics);
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && strcmp(d->parts[j].topic, d->parts[i].topic))
			j++;
		if (j < i)
			continue;
		int32_t np = 0;
		for (size_t k = i; k < n; k++)
			np += !strcmp(d->parts[k].topic, d->parts[i].topic);
		kaas_kw_str(w, f, d->parts[i].topic);
		kaas_kw_array(w, f, np);
		for (size_t k = i; k < n; k++)
			if (!strcmp(d->parts[k].topic, d->parts[i].topic))
				kaas_kw_i32(w, d->parts[k].partition);
		kaas_kw_tags(w, f);
	}
	kaas_kw_tags(w, f);
}

int kaas_api_describe_transactions(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	(void)v;
	struct kaas_kr ids = *r; /* read again below, as they are answered */
	int32_t n = kaas_kr_array(r, f, 1);
	for (int32_t i = 0; i < n && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, f);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r) || n < 0)
		return KAAS_REQ_CLOSE;
	(void)kaas_kr_array(&ids, f, 1);
	kaas_kw_i32(w, 0);
	kaas_kw_array(w, f, n);
	for (int32_t i = 0; i < n; i++) {
		struct kaas_kslice s = kaas_kr_str(&ids, f);
		char *id = kaas_txn_id_dup(s);
		struct kaas_txn_doc d;
		if (!kaas_req_allowed_slice(req, KAAS_OP_DESCRIBE, KAAS_RES_TRANSACTIONAL_ID, s)) {
			/* ACLs: nothing read */
			write_description(w, f, s, KAAS_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, NULL);
			free(id);
			continue;
		}
		int rc = id ? kaas_txns_describe(req->broker->txns, id, &d) : KAAS_ETXN_UNKNOWN;
		write_description(w, f, s, kaas_txn_kerr(rc, 1, 0), rc == 0 ? &d : NULL);
		if (rc == 0)
			kaas_txn_doc_free(&d);
		free(id);
	}
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}

struct list_filter {
	struct kaas_req *req;          /* ACLs: only the ids it may DESCRIBE */
	struct kaas_kr states;
	int32_t nstates;
	struct kaas_kr pids;
	int32_t npids;
	int f;
	struct kaas_kw body;           /* the listed entries, written as found */
	int32_t count;
};

static int wanted(struct list_filter *lf, const struct kaas_txn_doc *d)
{
	int ok = lf->nstates <= 0;
	struct kaas_kr s = lf->states;
	for (int32_t i = 0; !ok && i < lf->nstates; i++)
		ok = kaas_kslice_eq(kaas_kr_str(&s, lf->f), kaas_txn_state_name(d->state));
	int okp = lf->npids <= 0;
	struct kaas_kr p = lf->pids;
	for (int32_t i = 0; !okp && i < lf->npids; i++)
		okp = kaas_kr_i64(&p) == d->producer_id;
	return ok && okp;
}

static void list_each(void *ctx, const struct kaas_txn_doc *d)
{
	struct list_filter *lf = ctx;
	if (!wanted(lf, d) ||
	    !kaas_req_allowed(lf->req, KAAS_OP_DESCRIBE, KAAS_RES_TRANSACTIONAL_ID, d->txn_id,
			      strlen(d->txn_id)))
		return;
	lf->count++;
	kaas_kw_str(&lf->body, lf->f, d->txn_id);
	kaas_kw_i64(&lf->body, d->producer_id);
	kaas_kw_str(&lf->body, lf->f, kaas_txn_state_name(d->state));
	kaas_kw_tags(&lf->body, lf->f);
}

/* Is s one of Kafka's state names? */
static int known_state(struct kaas_kslice s)
{
	for (int st = KAAS_TXN_EMPTY; st <= KAAS_TXN_COMPLETE_ABORT; st++)
		if (kaas_kslice_eq(s, kaas_txn_state_name((enum kaas_txn_state)st)))
			return 1;
	return kaas_kslice_eq(s, "Dead") || kaas_kslice_eq(s, "PrepareEpochFence");
}

int kaas_api_list_transactions(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	(void)v;
	struct list_filter lf = { .req = req, .f = f };
	lf.nstates = kaas_kr_array(r, f, 1);
	lf.states = *r;
	for (int32_t i = 0; i < lf.nstates && kaas_kr_ok(r); i++)
		(void)kaas_kr_str(r, f);
	lf.npids = kaas_kr_array(r, f, 8);
	lf.pids = *r;
	for (int32_t i = 0; i < lf.npids && kaas_kr_ok(r); i++)
		(void)kaas_kr_i64(r);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	kaas_kw_i32(w, 0);
	kaas_kw_i16(w, 0);
	int32_t unknown = 0;
	struct kaas_kr s = lf.states;
	for (int32_t i = 0; i < lf.nstates; i++)
		unknown += !known_state(kaas_kr_str(&s, f));
	kaas_kw_array(w, f, unknown);
	s = lf.states;
	for (int32_t i = 0; i < lf.nstates; i++) {
		struct kaas_kslice st = kaas_kr_str(&s, f);
		if (!known_state(st))
			kaas_kw_strn(w, f, st.p, st.len);
	}
	kaas_kw_init(&lf.body);
	(void)kaas_txns_list(req->broker->txns, list_each, &lf);
	kaas_kw_array(w, f, lf.count);
	kaas_kw_raw(w, lf.body.buf, lf.body.len);
	kaas_kw_free(&lf.body);
	kaas_kw_tags(w, f);
	return KAAS_REQ_RESPOND;
}
