# tests/nfs/nfs-lib.sh — start a private NFS server for one test (sourced
# after tests/lib.sh).  nfs_start DIR [DIR2...] picks a free port pair,
# starts nfs-ganesha through scripts/nfs-server, registers its stop at exit
# (even on failure) and sets NFS_PORT, NFS_URL (NFSv3 URL of DIR) and
# NFS_URL4 (NFSv4 URL of DIR).  A missing ganesha or root is a skip (a
# failure under CI=true, see kaas_skip).

NFS_SERVER="$KAAS_TOP_SRCDIR/scripts/nfs-server"

# libnfs 4.0.0 leaks the default NFSv4 client name it replaces (see lsan.supp).
export LSAN_OPTIONS="suppressions=$KAAS_TOP_SRCDIR/tests/nfs/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

nfs_port_free() {
	! ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && ! ss -Hltn "sport = :$(($1 + 1))" 2>/dev/null | grep -q .
}

nfs_start() {
	local dir=$1 tries out rc
	shift
	for tries in 1 2 3 4 5 6 7 8; do
		NFS_PORT=$((21000 + (RANDOM % 400) * 100 + ($$ % 50) * 2))
		nfs_port_free "$NFS_PORT" || continue
		kaas_on_exit "'$NFS_SERVER' stop '$dir' $NFS_PORT"
		out=$("$NFS_SERVER" start "$dir" "$NFS_PORT" "$@" 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			NFS_URL=$(head -1 <<<"$out")
			NFS_URL2=$(sed -n 2p <<<"$out") # the second export, if one was asked for
			NFS_URL4="nfs://127.0.0.1/export?version=4&nfsport=$NFS_PORT"
			export NFS_PORT NFS_URL NFS_URL2 NFS_URL4
			echo "NFS server on 127.0.0.1:$NFS_PORT: $NFS_URL"
			return 0
		fi
		[ $rc -eq 77 ] && kaas_skip "$out"
		grep -q "already in use" <<<"$out" && continue
		echo "$out" >&2
		kaas_fail "cannot start the NFS server"
	done
	kaas_fail "no free port pair for the NFS server after 8 tries"
}
