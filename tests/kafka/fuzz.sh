#!/bin/bash
# tests/kafka/fuzz.sh [SECONDS] — build the libFuzzer target for kaasd's
# request decoder with clang and run it for a bounded time over the seed
# corpus (new inputs go to a scratch corpus; the tree's seeds stay as they
# are).  The library is built with clang in a scratch build directory, so
# the target always links whatever the tree contains.  CI calls it with 60.
set -euo pipefail
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v clang >/dev/null || { echo "clang is required (apt-get install clang)" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/kaas-fuzz.XXXXXX")
trap 'rm -rf "$out"' EXIT
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null)
mkdir -p "$out/build"
# Every layer below the server, in link order (Makefile.am: KAAS_LIBS); no
# server: fuzz_request.c defines the request seam itself.
libs="libkaas_kafka.a libkaas_broker.a libkaas_log.a libkaas_stores.a libkaas_contract.a libkaas_substrate.a libkaas_util.a"
san="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -Wno-error"
(cd "$out/build" && "$top/configure" -q CC=clang CFLAGS="$san" >/dev/null &&
	make -s -j2 $libs libkaastest.a >/dev/null)
b="$out/build"
clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-I "$top/src" -I "$top" -I "$b" -I "$top/tests/support" $(pkg-config --cflags libcjson) \
	"$top/tests/kafka/fuzz_request.c" "$b/libkaastest.a" $(for l in $libs; do echo "$b/$l"; done) -o "$out/fuzz_request" \
	$(pkg-config --libs libcjson liblz4 libzstd zlib snappy libuv libnfs fuse3 libcrypto) \
	$(sed -n 's/^CEPHFS_LIBS = //p' "$b/Makefile") -lpthread -lm
mkdir -p "$out/corpus"
"$out/fuzz_request" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 \
	"$out/corpus" "$top/tests/kafka/fuzz-corpus"
