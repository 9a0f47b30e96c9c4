/* api_sasl.c — SaslHandshake v0-1 and SaslAuthenticate v0-2 (v2
 * flexible): the wire of kafka/sasl.h.  Both run on the work pool
 * (SaslAuthenticate may read credentials and run PBKDF2). */
#include <stdlib.h>

#include "broker/broker.h"
#include "kafka/protocol.h"
#include "kafka/request.h"
#include "kafka/sasl.h"

int kaas_api_sasl_handshake(struct kaas_req *req)
{
	KAAS_REQ_IO(req);
	char *mech = kaas_kslice_dup(kaas_kr_str(r, f));
	if (!kaas_kr_ok(r) || !mech) {
		free(mech);
		return KAAS_REQ_CLOSE;
	}
	unsigned enabled = req->broker->cfg.sec.sasl_mechanisms;
	int16_t err = kaas_sasl_handshake(kaas_conn_security_rw(req->conn), enabled, mech, v);
	free(mech);
	kaas_kw_i16(w, err);
	int n = 0;
	for (unsigned bit = 1; bit <= KAAS_SASL_SCRAM_SHA_512; bit <<= 1)
		n += (enabled & bit) != 0;
	kaas_kw_array(w, f, n);
	for (unsigned bit = 1; bit <= KAAS_SASL_SCRAM_SHA_512; bit <<= 1)
		if (enabled & bit)
			kaas_kw_str(w, f, kaas_sasl_mech_name(bit));
	/* After v0 the client's tokens come bare (the server reads the next
	 * frame as one: request.h `raw`). */
	return err == KAAS_KERR_NONE ? KAAS_REQ_RESPOND : KAAS_REQ_RESPOND_CLOSE;
}

/* A raw token after SaslHandshake v0: the answer is the server's token
 * alone (the server frames it); a failure closes the connection with no
 * answer, as Kafka does in that framing. */
static int raw_token(struct kaas_req *req)
{
	struct kaas_sasl_step st;
	size_t n = kaas_kr_left(&req->r);
	kaas_sasl_authenticate(kaas_conn_security_rw(req->conn), req->broker,
			       kaas_conn_peer(req->conn), n ? req->r.p : (const uint8_t *)"", n, &st);
	if (st.error) {
		free(st.out);
		return KAAS_REQ_CLOSE;
	}
	if (st.out_len)
		kaas_kw_raw(&req->w, st.out, st.out_len);
	free(st.out);
	return KAAS_REQ_RESPOND;
}

int kaas_api_sasl_authenticate(struct kaas_req *req)
{
	if (req->raw)
		return raw_token(req);
	KAAS_REQ_IO(req);
	struct kaas_kslice tok = kaas_kr_nbytes(r, f);
	kaas_kr_tags(r, f);
	if (!kaas_kr_ok(r))
		return KAAS_REQ_CLOSE;
	struct kaas_sasl_step st;
	const uint8_t *tp = tok.len > 0 ? tok.p : (const uint8_t *)"";
	kaas_sasl_authenticate(kaas_conn_security_rw(req->conn), req->broker,
			       kaas_conn_peer(req->conn), tp, tok.len > 0 ? (size_t)tok.len : 0, &st);
	kaas_kw_i16(w, st.error);
	kaas_kw_str(w, f, st.error ? st.message : NULL);
	kaas_kw_bytes(w, f, st.out, (int32_t)st.out_len);
	if (v >= 1)
		kaas_kw_i64(w, st.session_lifetime_ms);
	kaas_kw_tags(w, f);
	free(st.out);
	return st.close ? KAAS_REQ_RESPOND_CLOSE : KAAS_REQ_RESPOND;
}
