/* verify.c — a transactional batch checked against the coordinator's
 * record before it opens a transaction on a partition.  See verify.h. */
#include "broker/txn/verify.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/txn_store.h"
#include "util/status.h"

int kaas_txn_verify_partition(struct kaas_substrate *cluster, const char *txn_id, size_t id_len,
			      int64_t pid, int16_t epoch, const char *topic, size_t topic_len,
			      int32_t partition)
{
	assert(cluster && txn_id && id_len > 0 && pid >= 0 && topic);
	char *id = malloc(id_len + 1);
	if (!id)
		return -ENOMEM;
	memcpy(id, txn_id, id_len);
	id[id_len] = '\0';
	struct kaas_txn_doc d;
	int rc = kaas_txn_peek(cluster, id, &d);
	free(id);
	if (rc == -ENOENT)
		return KAAS_ETXN_PID_MAPPING; /* no coordinator ever knew the id */
	if (rc < 0)
		return rc;
	if (d.producer_id != pid)
		rc = KAAS_ETXN_PID_MAPPING;
	else if (d.producer_epoch != epoch)
		rc = KAAS_ETXN_FENCED;
	else if (d.state == KAAS_TXN_PREPARE_COMMIT || d.state == KAAS_TXN_PREPARE_ABORT)
		rc = KAAS_ETXN_CONCURRENT;
	else if (d.state != KAAS_TXN_ONGOING)
		rc = KAAS_ETXN_STATE;
	else {
		rc = KAAS_ETXN_STATE;
		for (size_t i = 0; i < d.nparts; i++)
			if (d.parts[i].partition == partition &&
			    strlen(d.parts[i].topic) == topic_len &&
			    !memcmp(d.parts[i].topic, topic, topic_len)) {
				rc = 0;
				break;
			}
	}
	kaas_txn_doc_free(&d);
	return rc;
}
