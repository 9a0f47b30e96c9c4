/* kaasctl_verify_modes.c — `kaasctl verify`: the secrets of the cluster
 * directory (credentials/ and its mechanism directories, acls/, and their
 * documents) readable only by their owner: a warning for a directory
 * looser than 0700 or a document looser than 0600 (issue 35; kaasd writes
 * them so since then, earlier ones keep the modes they were made with).
 * A backend that keeps no modes (mode 0) is not judged. */
#include <stdio.h>
#include <stdlib.h>

#include "cluster/acl_store.h"
#include "cluster/credential_store.h"
#include "tools/kaasctl_verify.h"

/* Warn when `path` grants its group or others anything. */
static void check_mode(struct kv_report *r, const char *path, int dir)
{
	struct kaas_stat st;
	if (kaas_sub_stat(r->k->cluster, path, &st) < 0 || st.mode == 0)
		return;
	if (!(st.mode & 077))
		return;
	kv_add(r, KV_WARNING, "cluster", path, dir ? "secret-dir-mode" : "secret-file-mode",
	       "mode %04o: %s holds secrets (salted password hashes, ACLs) and should be %04o; "
	       "kaas does not change it (chmod %s it)",
	       (unsigned)(st.mode & 07777), dir ? "this directory" : "this document",
	       dir ? KAAS_SECRET_DIR_MODE : KAAS_SECRET_FILE_MODE, dir ? "-R go-rwx" : "go-rwx");
}

/* `dir` and what is in it, `depth` levels down. */
static void walk(struct kv_report *r, const char *dir, int depth)
{
	struct kaas_dirlist l;
	if (kaas_sub_list(r->k->cluster, dir, &l) < 0)
		return; /* absent: nothing to judge */
	check_mode(r, dir, 1);
	for (size_t i = 0; i < l.n; i++) {
		char *path = kaas_path_join(dir, l.names[i]);
		if (!path)
			break;
		struct kaas_stat st;
		if (kaas_sub_stat(r->k->cluster, path, &st) == 0) {
			if (st.type == KAAS_FT_DIR && depth > 0)
				walk(r, path, depth - 1);
			else if (st.type != KAAS_FT_DIR)
				check_mode(r, path, 0);
		}
		free(path);
	}
	kaas_dirlist_free(&l);
}

void kv_secret_modes(struct kv_report *r)
{
	walk(r, KAAS_CRED_DIR, 1);
	walk(r, KAAS_ACLS_DIR, 0);
}
