#!/bin/bash
# Replay the request-decoder fuzz corpus (and every prefix of each seed).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
exec "$KAAS_TOP_BUILDDIR/tests/kafka/fuzz_replay" "$KAAS_TOP_SRCDIR/tests/kafka/fuzz-corpus"
