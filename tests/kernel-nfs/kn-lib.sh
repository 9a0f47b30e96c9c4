# tests/kernel-nfs/kn-lib.sh — run a shell test inside the kernel NFS lab
# (scripts/nfs-lab: knfsd and N nosharecache NFS mounts in a Linux guest:
# User-mode Linux where it boots, else qemu, with KVM or in software
# emulation).  Sourced after tests/lib.sh.
#
#   kn_in_lab [nfs-lab run options]
#       Outside the lab: boot it with those options, run the calling script
#       inside it (same environment, same directory), print how long the
#       whole run took, and exit with the script's status.  A lab that cannot
#       start (nfs-lab exit 125, reason printed above) is a skip, which CI
#       (CI=true / KAAS_NO_SKIP=1) counts as a failure; the lab's --timeout
#       (nfs-lab exit 124) is a failure.  Inside the lab: returns at once.
#       Boot wait KN_BOOT_TIMEOUT (default 180 s; about 40 s seen for UML
#       on a loaded 2-core machine, 6-20 s for qemu's TCG); with the tests'
#       --timeout of at most 300 s a run stays under the harness's 600 s
#       per test.  The lab's first line (on stderr) names the kernel;
#       under qemu-tcg the --timeout is doubled (KN_TCG_SCALE), and the
#       tests declare a harness limit of 900 s (# kaas-test-timeout).
#   kn_brokers_on_mounts   mb-lib.sh settings for brokers on the lab's mounts:
#       broker ID keeps its data on mount hostID (MB_HOSTS_DIR), and a
#       heartbeat and liveness timeout fit for a slow guest CPU (UML, or
#       qemu's software emulation)
KN_LAB="$KAAS_TOP_SRCDIR/scripts/nfs-lab"

# Hold one of KAAS_LAB_SLOTS (default 2) lab slots on fd 8 until this
# process ends: make check runs several tests at once, and each lab is a
# guest that takes a CPU to boot (and under qemu's TCG, up to two to run);
# more than two at a time on a two-core machine only slows every one of
# them.  Waits at most 15 min.
kn_lab_slot() {
	local n=${KAAS_LAB_SLOTS:-2} i t
	for ((t = 0; t < 900; t++)); do
		for ((i = 0; i < n; i++)); do
			exec 8>"/tmp/kaas-nfslab.slot$i"
			flock -n 8 && return 0
			exec 8>&-
		done
		sleep 1
	done
	kaas_fail "no kernel NFS lab slot free within 15 min"
}

kn_in_lab() {
	[ "${KAAS_LAB:-}" = 1 ] && return 0
	local self t0=$SECONDS rc
	self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	kn_lab_slot
	# Under qemu's software emulation the guest's CPU is several times
	# slower than UML's: the run's --timeout grows by KN_TCG_SCALE
	# (default 2); what the test checks stays the same.
	local -a args=("$@")
	if "$KN_LAB" check 2>/dev/null | grep -q 'kernel qemu-tcg'; then
		local i
		for ((i = 0; i < ${#args[@]} - 1; i++)); do
			[ "${args[$i]}" = --timeout ] && args[$((i + 1))]=$(( args[i + 1] * ${KN_TCG_SCALE:-2} ))
		done
	fi
	"$KN_LAB" run --boot-timeout "${KN_BOOT_TIMEOUT:-180}" "${args[@]}" -- bash "$self"
	rc=$?
	echo "kernel-nfs: $(basename "$0"): lab run $((SECONDS - t0)) s, exit $rc"
	case $rc in
	125) kaas_skip "the kernel NFS lab could not start (scripts/nfs-lab exit 125; the reason is above)" ;;
	124) kaas_fail "the test did not finish within the lab's --timeout" ;;
	esac
	exit $rc
}

kn_brokers_on_mounts() {
	[ "${KAAS_LAB:-}" = 1 ] || kaas_fail "kn_brokers_on_mounts outside the lab"
	MB_HOSTS_DIR=$KAAS_LAB_WORK/mnt
	: "${MB_HEARTBEAT_MS:=250}"
	: "${MB_LIVENESS_MS:=3000}"
}
