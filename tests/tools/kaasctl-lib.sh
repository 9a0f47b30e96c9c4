# tests/tools/kaasctl-lib.sh — helpers for the kaasctl tests (sourced after
# tests/lib.sh).
#
#   kctl ARGS...           run kaasctl (bounded), stdout to stdout
#   kctl_expect RC ARGS... run kaasctl, fail unless it exits RC; its stdout
#                          is in $KCTL_OUT, stderr in $KCTL_ERR
#   kctl_has PATTERN       fail unless $KCTL_OUT matches the grep -E PATTERN
#   flip_record_byte FILE  flip one bit in the last byte of the first batch
#                          of segment FILE (a record byte the CRC covers)
KAASCTL="$KAAS_TOP_BUILDDIR/kaasctl"
[ -x "$KAASCTL" ] || kaas_fail "no kaasctl binary at $KAASCTL"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"

kctl() {
	timeout 60 "$KAASCTL" "$@"
}

kctl_expect() {
	local want=$1 rc=0
	shift
	KCTL_OUT=$(timeout 60 "$KAASCTL" "$@" 2>"$KAAS_SCRATCH/kctl.err") || rc=$?
	KCTL_ERR=$(cat "$KAAS_SCRATCH/kctl.err")
	if [ "$rc" != "$want" ]; then
		printf '%s\n' "$KCTL_OUT" "$KCTL_ERR" >&2
		kaas_fail "kaasctl $*: exit $rc, expected $want"
	fi
}

kctl_has() {
	grep -Eq -- "$1" <<<"$KCTL_OUT" || { printf '%s\n' "$KCTL_OUT" >&2; kaas_fail "kaasctl output lacks /$1/"; }
}

flip_record_byte() {
	python3 - "$1" <<'PY' || kaas_fail "cannot flip a byte in $1"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    head = f.read(12)
    end = 12 + struct.unpack(">i", head[8:12])[0]
    f.seek(end - 1)
    b = f.read(1)[0]
    f.seek(end - 1)
    f.write(bytes([b ^ 0x20]))
PY
}
