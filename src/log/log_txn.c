/* log_txn.c — transactions on the partition: markers, the last stable
 * offset, the aborted transactions a read must know of (log.h).
 * FIRST COMMIT: stubs answering -ENOSYS; the implementation follows. */
#include <errno.h>
#include <stdlib.h>

#include "log/log_internal.h"

int kaas_log_append_marker(struct kaas_log *log, int64_t producer_id, int16_t producer_epoch,
			   int commit, int32_t coordinator_epoch, kaas_log_append_cb cb,
			   void *arg)
{
	(void)log; (void)producer_id; (void)producer_epoch; (void)commit;
	(void)coordinator_epoch; (void)cb; (void)arg;
	return -ENOSYS;
}

int64_t kaas_log_append_marker_sync(struct kaas_log *log, int64_t producer_id,
				    int16_t producer_epoch, int commit,
				    int32_t coordinator_epoch)
{
	return kaas_log_append_marker(log, producer_id, producer_epoch, commit,
				      coordinator_epoch, NULL, NULL);
}

int64_t kaas_log_last_stable_offset(struct kaas_log *log)
{
	return kaas_log_high_watermark(log);
}

int kaas_log_aborted_txns(struct kaas_log *log, int64_t from, int64_t to,
			  struct kaas_log_aborted_txn **out)
{
	(void)log; (void)from; (void)to;
	*out = NULL;
	return 0;
}
