/* nfs_rpc.c — NFSv3 WRITE, COMMIT, exclusive CREATE and SETATTR sent on a
 * libnfs context's RPC connection; see nfs_rpc.h. */
#include "backends/nfs_rpc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

struct nfs_fh_view { /* libnfs's private struct nfs_fh */
	int len;
	char *val;
};

int kaas_nfs_fh3(struct nfsfh *fh, nfs_fh3 *out)
{
	struct nfs_fh_view *v = (struct nfs_fh_view *)nfs_get_fh(fh);
	if (!v || v->len <= 0 || v->len > NFS3_FHSIZE || !v->val)
		return -1;
	out->data.data_len = (u_int)v->len;
	out->data.data_val = v->val;
	return 0;
}

static void note(struct kaas_nfs_call *r, int status, void *data)
{
	r->done = 1;
	r->rpc_status = status;
	if (status == RPC_STATUS_ERROR)
		snprintf(r->err, sizeof r->err, "%s", data ? (const char *)data : "RPC error");
	else if (status == RPC_STATUS_TIMEOUT)
		snprintf(r->err, sizeof r->err, "command timed out");
	else if (status == RPC_STATUS_CANCEL)
		snprintf(r->err, sizeof r->err, "command cancelled");
}

static void write_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct kaas_nfs_call *r = priv;
	note(r, status, data);
	if (status != RPC_STATUS_SUCCESS)
		return;
	WRITE3res *res = data;
	r->nfs_status = (int)res->status;
	if (res->status == NFS3_OK) {
		r->count = res->WRITE3res_u.resok.count;
		r->committed = (int)res->WRITE3res_u.resok.committed;
		memcpy(r->verf, res->WRITE3res_u.resok.verf, sizeof r->verf);
	}
}

static void commit_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct kaas_nfs_call *r = priv;
	note(r, status, data);
	if (status != RPC_STATUS_SUCCESS)
		return;
	COMMIT3res *res = data;
	r->nfs_status = (int)res->status;
	if (res->status == NFS3_OK)
		memcpy(r->verf, res->COMMIT3res_u.resok.verf, sizeof r->verf);
}

static void create_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct kaas_nfs_call *r = priv;
	note(r, status, data);
	if (status != RPC_STATUS_SUCCESS)
		return;
	CREATE3res *res = data;
	r->nfs_status = (int)res->status;
	if (res->status != NFS3_OK)
		return;
	CREATE3resok *ok = &res->CREATE3res_u.resok;
	if (ok->obj_attributes.attributes_follow) {
		r->fileid = ok->obj_attributes.post_op_attr_u.attributes.fileid;
		r->have_fileid = 1;
	}
	if (ok->obj.handle_follows && ok->obj.post_op_fh3_u.handle.data.data_len <= NFS3_FHSIZE) {
		r->fh_len = ok->obj.post_op_fh3_u.handle.data.data_len;
		memcpy(r->fh, ok->obj.post_op_fh3_u.handle.data.data_val, r->fh_len);
	}
}

static void setattr_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
	(void)rpc;
	struct kaas_nfs_call *r = priv;
	note(r, status, data);
	if (status == RPC_STATUS_SUCCESS)
		r->nfs_status = (int)((SETATTR3res *)data)->status;
}

/* Drive the connection until the call completes.  rpc_service also times
 * calls out, so it runs at least every 100 ms. */
static void wait_call(struct rpc_context *rpc, struct kaas_nfs_call *r)
{
	while (!r->done) {
		struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};
		int n = poll(&p, 1, 100);
		if (n < 0 && errno != EINTR) {
			r->done = 1;
			r->rpc_status = RPC_STATUS_ERROR;
			snprintf(r->err, sizeof r->err, "poll: %s", strerror(errno));
			break;
		}
		if (rpc_service(rpc, n > 0 ? p.revents : 0) < 0 && !r->done) {
			r->done = 1;
			r->rpc_status = RPC_STATUS_ERROR;
			snprintf(r->err, sizeof r->err, "%s", rpc_get_error(rpc));
		}
	}
}

int kaas_nfs_write3(struct nfs_context *nfs, const nfs_fh3 *fh, const void *buf, size_t len, uint64_t off,
		    struct kaas_nfs_call *r)
{
	struct rpc_context *rpc = nfs_get_rpc_context(nfs);
	WRITE3args a;
	memset(&a, 0, sizeof a);
	memset(r, 0, sizeof *r);
	a.file = *fh;
	a.offset = off;
	a.count = (count3)len;
	a.stable = UNSTABLE;
	a.data.data_len = (u_int)len;
	a.data.data_val = (char *)buf;
	if (rpc_nfs3_write_async(rpc, write_cb, &a, r) != 0)
		return -ENOMEM;
	wait_call(rpc, r);
	return 0;
}

int kaas_nfs_commit3(struct nfs_context *nfs, const nfs_fh3 *fh, struct kaas_nfs_call *r)
{
	struct rpc_context *rpc = nfs_get_rpc_context(nfs);
	COMMIT3args a;
	memset(&a, 0, sizeof a);
	memset(r, 0, sizeof *r);
	a.file = *fh;
	if (rpc_nfs3_commit_async(rpc, commit_cb, &a, r) != 0)
		return -ENOMEM;
	wait_call(rpc, r);
	return 0;
}

int kaas_nfs_create3_exclusive(struct nfs_context *nfs, const nfs_fh3 *dir, const char *name,
			       const char verf[NFS3_CREATEVERFSIZE], struct kaas_nfs_call *r)
{
	struct rpc_context *rpc = nfs_get_rpc_context(nfs);
	CREATE3args a;
	memset(&a, 0, sizeof a);
	memset(r, 0, sizeof *r);
	a.where.dir = *dir;
	a.where.name = (char *)name;
	a.how.mode = EXCLUSIVE;
	memcpy(a.how.createhow3_u.verf, verf, NFS3_CREATEVERFSIZE);
	if (rpc_nfs3_create_async(rpc, create_cb, &a, r) != 0)
		return -ENOMEM;
	wait_call(rpc, r);
	return 0;
}

int kaas_nfs_setattr3_mode_now(struct nfs_context *nfs, const char *fh, unsigned fh_len, uint32_t mode,
			       struct kaas_nfs_call *r)
{
	struct rpc_context *rpc = nfs_get_rpc_context(nfs);
	SETATTR3args a;
	memset(&a, 0, sizeof a);
	memset(r, 0, sizeof *r);
	a.object.data.data_len = fh_len;
	a.object.data.data_val = (char *)fh;
	a.new_attributes.mode.set_it = 1;
	a.new_attributes.mode.set_mode3_u.mode = (mode3)(mode & 07777);
	a.new_attributes.atime.set_it = SET_TO_SERVER_TIME;
	a.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
	if (rpc_nfs3_setattr_async(rpc, setattr_cb, &a, r) != 0)
		return -ENOMEM;
	wait_call(rpc, r);
	return 0;
}

int kaas_nfs_call_errno(const struct kaas_nfs_call *r)
{
	if (r->rpc_status == RPC_STATUS_TIMEOUT)
		return ETIMEDOUT;
	if (r->rpc_status != RPC_STATUS_SUCCESS)
		return ECONNRESET;
	int e = r->nfs_status;
	if (e == NFS3_OK)
		return 0;
	if (e == NFS3ERR_BADHANDLE)
		return ESTALE;
	if (e == NFS3ERR_JUKEBOX)
		return EAGAIN;
	if (e <= 0 || e >= 1000)
		return EIO;
	return e;
}
