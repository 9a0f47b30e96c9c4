/* fuse_front.h — the FUSE front: one libfuse session per simulated host. */
#ifndef KAAS_FAULTFS_FUSE_FRONT_H
#define KAAS_FAULTFS_FUSE_FRONT_H

#include "faultfs/model.h"

struct kaas_fuse_front;

/* Mount host h of model m at mountpoints[h] for h in 0..nhosts-1 and start
 * a multi-threaded loop for each.  Mount options: direct_io, zero entry,
 * attribute and negative timeouts, no writeback cache, hard_remove.
 * Returns 0 and *out, or -errno (already-mounted sessions are unmounted). */
int kaas_fuse_front_start(struct kaas_fault_model *m, int nhosts, char **mountpoints,
			  struct kaas_fuse_front **out);
/* Unmount every session, join its thread, free. */
void kaas_fuse_front_stop(struct kaas_fuse_front *f);

#endif
