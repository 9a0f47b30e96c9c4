/* ctl_socket.h — the control socket of a faultfs daemon and its client. */
#ifndef KAAS_FAULTFS_CTL_SOCKET_H
#define KAAS_FAULTFS_CTL_SOCKET_H

#include "faultfs/model.h"

/* The control socket's path for a mount directory: DIR/.faultfs.sock
 * (malloc'd). */
char *kaas_ctl_socket_path(const char *dir);

struct kaas_ctl_server;
/* Listen on path (an old socket there is replaced) and serve JSON commands
 * to m from a thread: one command per connection, the client writes it and
 * shuts down its write side, the server answers and closes.  0 and *out,
 * or -errno (-ENAMETOOLONG if path does not fit a socket address). */
int kaas_ctl_server_start(struct kaas_fault_model *m, const char *path, struct kaas_ctl_server **out);
/* Stop serving, remove the socket. */
void kaas_ctl_server_stop(struct kaas_ctl_server *s);

/* Send one command, return the malloc'd reply in *reply.  0, or -errno
 * (-ECONNREFUSED / -ENOENT: no daemon there; -ETIMEDOUT after 10 s). */
int kaas_ctl_send(const char *path, const char *cmd, char **reply);

#endif
