#!/bin/bash
# The oldest protocol versions (issue 15): a group that commits with
# OffsetCommit v0 and v1 and reads its offsets with OffsetFetch v0 resumes
# where it committed, before and after a restart; Produce v2 and Fetch v3
# (the pre-0.11 message formats) are answered UNSUPPORTED_VERSION on the
# partition without closing the connection; a version past the served
# range closes it.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/kafka/kaasd-lib.sh"
raw() { # raw SECONDS MODE ARGS...: the raw client against this broker
	timeout "$1" "$KAAS_TOP_BUILDDIR/tests/kafka/rawclient" "$BROKER" "${@:2}"
}
kaas_scratch
kaasd_start
raw 60 old-offsets told gold || kaas_fail "old offsets"
raw 30 refused-old told || kaas_fail "refused old versions"
kaasd_stop
kaasd_start
raw 30 old-offsets-check told gold || kaas_fail "old offsets after restart"
kaasd_stop
echo PASS
