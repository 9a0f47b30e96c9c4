#!/bin/bash
# tests/kafka/fuzz.sh [SECONDS] — build the libFuzzer target for kaasd's
# request decoder with clang and run it for a bounded time over the seed
# corpus (new inputs go to a scratch corpus, the tree's seeds stay as they
# are).  Run from a configured build directory; CI calls it with 60.
set -euo pipefail
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${KAAS_TOP_BUILDDIR:-$PWD}
command -v clang >/dev/null || { echo "clang is required (apt-get install clang)" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/kaas-fuzz.XXXXXX")
trap 'rm -rf "$out"' EXIT
# Library sources the decoder needs (server.c and programs with a main()
# left out: the fuzz target stands in for the loop).
srcs=$(cd "$top" && grep -L '^int main(' src/kafka/*.c src/broker/topics.c src/broker/logging.c \
	src/broker/config.c src/broker/worker.c src/log/*.c src/contract/*.c src/substrate/*.c \
	src/util/*.c backends/*.c tests/support/testdir.c | tr '\n' ' ')
(cd "$top" && clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-I src -I . -I "$build" -I tests/support $(pkg-config --cflags libcjson libnfs) \
	tests/kafka/fuzz_request.c $srcs -o "$out/fuzz_request" \
	$(pkg-config --libs libcjson liblz4 libzstd zlib snappy libuv libnfs) -lpthread -lm)
mkdir -p "$out/corpus"
"$out/fuzz_request" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 \
	"$out/corpus" "$top/tests/kafka/fuzz-corpus"
