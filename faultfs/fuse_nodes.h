/*
 * fuse_nodes.h — the inode table of one FUSE session (one host view):
 * node ids handed to the kernel, each with its parent and name, so a path
 * can be rebuilt for the path-based fault model, renames and removals
 * tracked, and the open handles on a node found (fstat of an open,
 * silly-renamed file).  No FUSE in here; thread-safe (one mutex).
 */
#ifndef KAAS_FAULTFS_FUSE_NODES_H
#define KAAS_FAULTFS_FUSE_NODES_H

#include <stdint.h>

#define KAAS_LL_ROOT 1 /* the root's id (FUSE_ROOT_ID) */

struct kaas_ll_nodes;

/* A new table holding only the root.  NULL when out of memory. */
struct kaas_ll_nodes *kaas_ll_nodes_new(void);
void kaas_ll_nodes_free(struct kaas_ll_nodes *t);

/* The node named `name` in directory `parent`, created if new; its lookup
 * count goes up by one (the kernel now holds a reference).  Returns its id,
 * or 0 (parent unknown or out of memory). */
uint64_t kaas_ll_ref(struct kaas_ll_nodes *t, uint64_t parent, const char *name);
/* The kernel dropped n references; the node goes when none are left and no
 * handle is open on it. */
void kaas_ll_forget(struct kaas_ll_nodes *t, uint64_t id, uint64_t n);

/* The model path of a node ("" for the root), malloc'd in *path.  0; or
 * -ESTALE when the node (or a parent) was removed, with *path then set to
 * the path it had when removed (re-opening by that name is what an NFS
 * client does after ESTALE); -ENOMEM. */
int kaas_ll_path(struct kaas_ll_nodes *t, uint64_t id, char **path);
/* The model path of `name` in directory `parent`, malloc'd; NULL if the
 * parent is gone. */
char *kaas_ll_child_path(struct kaas_ll_nodes *t, uint64_t parent, const char *name);

/* The entry `name` in `parent` now lives at `newname` in `newparent`. */
void kaas_ll_move(struct kaas_ll_nodes *t, uint64_t parent, const char *name, uint64_t newparent,
		  const char *newname);
/* The entry `name` in `parent` is gone (unlinked, rmdir'ed, replaced). */
void kaas_ll_remove(struct kaas_ll_nodes *t, uint64_t parent, const char *name);

/* Open handles on a node: attach and detach an opaque handle; kaas_ll_any
 * returns one attached handle (or NULL) and calls use(handle, arg) with the
 * table locked, so the handle cannot be detached meanwhile. */
void kaas_ll_attach(struct kaas_ll_nodes *t, uint64_t id, void *handle);
void kaas_ll_detach(struct kaas_ll_nodes *t, uint64_t id, void *handle);
int kaas_ll_with_handle(struct kaas_ll_nodes *t, uint64_t id, int (*use)(void *handle, void *arg),
			void *arg);

#endif
