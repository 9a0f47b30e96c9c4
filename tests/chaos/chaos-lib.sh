# tests/chaos/chaos-lib.sh — sourced by the short chaos runs after
# tests/lib.sh.  chaos_preflight: a sanitizer build passes at once with a
# message (chaos runs belong to the normal build); a missing FUSE, fuse3 or
# kcat is a skip (a failure under CI=true, see kaas_skip).
chaos_preflight() {
	# scripts/setup passes --enable-sanitizers=no to the normal build: match
	# only the option that turns them on (config.status may quote it).
	if "$KAAS_TOP_BUILDDIR/config.status" --config 2>/dev/null | tr -d "'" | tr ' ' '\n' |
		grep -Eqx -- '--enable-sanitizers(=yes)?'; then
		echo "PASS (sanitizer build: chaos runs belong to the normal build)"
		exit 0
	fi
	[ -c /dev/fuse ] || kaas_skip "no /dev/fuse: FUSE is not available here"
	command -v fusermount3 >/dev/null 2>&1 || kaas_skip "fusermount3 is not installed (package fuse3)"
	command -v kcat >/dev/null 2>&1 || kaas_skip "kcat is not installed"
}
