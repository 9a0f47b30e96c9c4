# scripts/nfs-lab.d/choose.sh — which kernel the lab boots on this host,
# sourced by scripts/nfs-lab after kernel-uml.sh and kernel-qemu.sh.
#
# The choice is made by what boots, not by what is installed:
#   1. User-mode Linux, where a probe boot of it succeeds (fast: a second to
#      boot, near the host's speed);
#   2. otherwise qemu with KVM, where a probe boot proves KVM works (on some
#      hosts /dev/kvm opens but a guest hangs at boot);
#   3. otherwise qemu in software emulation (TCG), which boots anywhere qemu
#      runs, at a fraction of the host's CPU speed.
# A probe boots the kernel with an init that writes a file and powers off,
# bounded in time.  Its outcome is cached per host (kernel release, CPU
# model and flags, the packages' versions), so a host pays for each probe
# once; KAAS_LAB_REPROBE=1 forgets the cache.
#
#   lab_cache_dir            print (and make) the lab's cache directory:
#                            $KAAS_CACHE_DIR/nfs-lab, default ~/.cache/kaas
#   lab_choose FORCE         FORCE '' (choose), uml or qemu; sets
#                            LAB_KERNEL (uml|qemu), LAB_ACCEL (tcg|kvm; - for
#                            uml), LAB_VERSION, LAB_WHY (one line: why this
#                            kernel); returns 1 with LAB_WHY saying why when
#                            no kernel can boot here
#   lab_label                print the chosen kernel as figures should name
#                            it: uml, qemu-kvm or qemu-tcg

lab_cache_dir() {
	local d=${KAAS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaas}/nfs-lab
	mkdir -p "$d" && echo "$d"
}

lab_label() {
	case $LAB_KERNEL in uml) echo uml ;; *) echo "qemu-$LAB_ACCEL" ;; esac
}

# What the probe outcome depends on.
lab_host_key() {
	{ uname -r
	  grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo
	  dpkg-query -W -f='${Package} ${Version}\n' user-mode-linux qemu-system-x86 2>/dev/null
	  echo "$1"; cat "${BASH_SOURCE[0]}"; } | md5sum | cut -c1-12
}

# lab_probe KIND ACCEL V SECS — boot KIND (uml|qemu) once with a probe init;
# 0 if it came up.  Prints a one-line reason when it did not.
lab_probe() {
	local kind=$1 accel=$2 v=$3 secs=$4 p rc i why
	p=$(mktemp -d "${TMPDIR:-/tmp}/kaas-nfslab-probe.XXXXXX") || { echo "no probe directory"; return 1; }
	cat >"$p/init.sh" <<-EOF
	#!/bin/sh
	mount -t proc proc /proc
	echo up >$p/up
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	EOF
	chmod +x "$p/init.sh"
	local -a cmd
	mapfile -t cmd < <("${kind}_boot_cmd" "$accel" "$v" "$p/init.sh" 256 "" "$p")
	[ ${#cmd[@]} -gt 0 ] || { echo "no boot command"; rm -rf "$p"; return 1; }
	setsid timeout -s KILL "$secs" "${cmd[@]}" >"$p/console.log" 2>&1 </dev/null
	rc=$?
	if [ -e "$p/up" ]; then
		rm -rf "$p"; return 0
	fi
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		why="no sign of life within $secs s"
	else
		for i in 'errno' 'Kernel panic' 'failed|error'; do
			why=$(grep -m1 -E "$i" "$p/console.log" | tr -d '\r' | cut -c1-120)
			[ -n "$why" ] && break
		done
		why="exit $rc${why:+: $why}"
	fi
	echo "$why"
	rm -rf "$p"
	return 1
}

# lab_probe_cached KIND ACCEL V SECS — lab_probe, remembered per host.
lab_probe_cached() {
	local cache f out rc
	cache=$(lab_cache_dir) || return 1
	f=$cache/probe-$1-$2-$(lab_host_key "$1 $2 $3")
	[ "${KAAS_LAB_REPROBE:-}" = 1 ] && rm -f "$f"
	if [ ! -s "$f" ]; then
		echo "nfs-lab: probing whether $1$([ "$2" = - ] || echo " ($2)") boots on this host (once; cached in $cache)" >&2
		out=$(lab_probe "$@"); rc=$?
		{ [ $rc = 0 ] && echo ok || echo "fails: $out"; } >"$f.tmp" && mv "$f.tmp" "$f"
	fi
	PROBE_WHY=$(cat "$f")
	[ "$PROBE_WHY" = ok ]
}

lab_choose() {
	local force=$1 umiss qmiss why_uml= why_kvm=
	LAB_KERNEL= LAB_ACCEL= LAB_VERSION= LAB_WHY=
	umiss=$(uml_missing); qmiss=$(qemu_missing)
	case $force in
	uml)
		[ -z "$umiss" ] && LAB_VERSION=$(uml_version) ||
			{ LAB_WHY="--kernel uml: not installed (missing:$umiss)"; return 1; }
		LAB_KERNEL=uml LAB_ACCEL=- LAB_WHY="--kernel uml"
		return 0 ;;
	qemu)
		[ -z "$qmiss" ] && LAB_VERSION=$(qemu_version) ||
			{ LAB_WHY="--kernel qemu: not installed (missing:$qmiss; or no kernel with nfsd in /lib/modules)"; return 1; }
		LAB_KERNEL=qemu LAB_ACCEL=tcg LAB_WHY="--kernel qemu"
		if [ -w /dev/kvm ] && lab_probe_cached qemu kvm "$LAB_VERSION" 20; then
			LAB_ACCEL=kvm LAB_WHY="--kernel qemu; KVM passed its probe boot"
		elif [ -e /dev/kvm ]; then
			LAB_WHY="--kernel qemu; software emulation (KVM's probe boot: ${PROBE_WHY#fails: })"
		fi
		return 0 ;;
	esac
	if [ -z "$umiss" ] && v=$(uml_version); then
		if lab_probe_cached uml - "$v" 60; then
			LAB_KERNEL=uml LAB_ACCEL=- LAB_VERSION=$v LAB_WHY="User-mode Linux passed its probe boot on this host"
			return 0
		fi
		why_uml="User-mode Linux failed its probe boot (${PROBE_WHY#fails: })"
	else
		why_uml="User-mode Linux is not installed (missing:$umiss)"
	fi
	if [ -n "$qmiss" ] || ! LAB_VERSION=$(qemu_version); then
		LAB_WHY="no kernel can boot here: $why_uml; qemu is not installed (missing:${qmiss:- a kernel with nfsd under /lib/modules})"
		return 1
	fi
	LAB_KERNEL=qemu LAB_ACCEL=tcg
	if [ -w /dev/kvm ]; then
		if lab_probe_cached qemu kvm "$LAB_VERSION" 20; then
			LAB_ACCEL=kvm LAB_WHY="$why_uml; KVM passed its probe boot"
			return 0
		fi
		why_kvm="; KVM failed its probe boot (${PROBE_WHY#fails: })"
	else
		why_kvm="; no usable /dev/kvm"
	fi
	LAB_WHY="$why_uml$why_kvm; software emulation (TCG)"
	return 0
}
