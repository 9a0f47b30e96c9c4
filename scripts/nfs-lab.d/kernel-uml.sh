# scripts/nfs-lab.d/kernel-uml.sh — the lab's guest as a User-mode Linux
# kernel (Debian's user-mode-linux package, knfsd and the NFS client as its
# modules), sourced by scripts/nfs-lab.  The host's root is the guest's root
# over hostfs.  UML is the lab's first choice where it boots: it starts in
# a second and runs at nearly the host's speed.  It does not boot on every
# host (Debian's 6.1 UML panics on CPUs with AMX state); scripts/nfs-lab.d/
# choose.sh finds out by a probe boot.
#
# The same functions as kernel-qemu.sh (see there for their contracts):
#   uml_missing, uml_version, uml_modprobe_root W, uml_disk_dev,
#   uml_disk_modules, uml_boot_cmd ACCEL V INIT MEM DISK W (ACCEL ignored)

uml_missing() {
	PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH command -v linux.uml >/dev/null 2>&1 || echo " linux.uml"
}

uml_version() { # the modules directory matching the kernel
	local v
	v=$(linux.uml --version 2>/dev/null | head -n1)
	if [ -n "$v" ] && [ -d "/usr/lib/uml/modules/$v" ]; then echo "$v"; return 0; fi
	v=$(ls /usr/lib/uml/modules 2>/dev/null | head -n1)
	[ -n "$v" ] && echo "$v"
}

# The UML package keeps its modules outside /lib/modules: a root directory
# in the work directory W links them where modprobe -d looks.
uml_modprobe_root() {
	local w=$1 v
	v=$(uml_version) || return 1
	mkdir -p "$w/modroot/lib/modules" && ln -sfn "/usr/lib/uml/modules/$v" "$w/modroot/lib/modules/$v" &&
		echo "$w/modroot"
}

uml_disk_dev() { echo /dev/ubdb; }
uml_disk_modules() { :; }

uml_boot_cmd() {
	local v=$2 init=$3 mem=$4 disk=$5 w=$6
	mkdir -p "$w/uml" || return 1
	printf '%s\n' linux.uml "mem=${mem}M" root=/dev/root rootfstype=hostfs rootflags=/ rw \
		"init=$init" con=null con0=null,fd:1 "uml_dir=$w/uml" umid=nfs-lab quiet
	[ -n "$disk" ] && echo "ubd1=$disk"
	return 0
}
