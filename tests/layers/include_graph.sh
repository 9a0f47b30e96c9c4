#!/usr/bin/env bash
# tests/layers/include_graph.sh [TOP] — the layers point only down.
#
# Reads every `#include "dir/file.h"` in src/, backends/ and faultfs/, maps
# the including file and the included header to their layers (lowest
# first):
#   1 util       src/util
#   2 substrate  src/substrate, backends, faultfs
#   3 contract   src/contract
#   4 log        src/log, src/cluster (the on-volume stores)
#   5 broker     src/broker
#   6 kafka      src/kafka
#   7 server     src/server
#   8 tools      src/tools, src/check
# and fails, naming file:line, when a file includes a header of a higher
# layer than its own — unless that exact (file, header) pair is in ALLOWED
# below.  Includes without a directory (a header beside the file) and
# headers of no layer (config.h) are not checked.
set -euo pipefail
top=${1:-${KAAS_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
cd "$top"

# Pairs "file header" allowed to point up, each with the reason it is there.
ALLOWED=(
)

layer_of() { # path-or-header -> its layer number in $layer (0: none); no
	# subshell, so the thousand includes cost no forks
	case "$1" in
	src/util/* | util/*) layer=1 ;;
	src/substrate/* | substrate/* | backends/* | faultfs/*) layer=2 ;;
	src/contract/* | contract/*) layer=3 ;;
	src/log/* | log/* | src/cluster/* | cluster/*) layer=4 ;;
	src/broker/* | broker/*) layer=5 ;;
	src/kafka/* | kafka/*) layer=6 ;;
	src/server/* | server/*) layer=7 ;;
	src/tools/* | tools/* | src/check/* | check/*) layer=8 ;;
	*) layer=0 ;;
	esac
}
names=(none util substrate contract log broker kafka server tools)

allowed() {
	local a
	for a in "${ALLOWED[@]}"; do
		[ "$a" = "$1 $2" ] && return 0
	done
	return 1
}

bad=0
checked=0
used_allowed=()
while IFS=: read -r file line text; do
	[[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]*)\" ]] || continue
	hdr=${BASH_REMATCH[1]}
	case "$hdr" in */*) ;; *) continue ;; esac
	layer_of "$file"; from=$layer
	layer_of "$hdr"; to=$layer
	[ "$from" -gt 0 ] && [ "$to" -gt 0 ] || continue
	checked=$((checked + 1))
	[ "$to" -le "$from" ] && continue
	if allowed "$file" "$hdr"; then
		used_allowed+=("$file $hdr")
		continue
	fi
	echo "$file:$line: includes $hdr (layer ${names[$to]}) from layer ${names[$from]}" >&2
	bad=$((bad + 1))
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.c' --include='*.h' \
	src backends faultfs | sort -t: -k1,1 -k2,2n)

# An allowed pair that no longer occurs must leave the list.
for a in "${ALLOWED[@]}"; do
	found=0
	for u in "${used_allowed[@]+"${used_allowed[@]}"}"; do
		[ "$u" = "$a" ] && found=1
	done
	if [ $found = 0 ]; then
		echo "include_graph: allowed pair no longer needed, remove it from ALLOWED: $a" >&2
		bad=$((bad + 1))
	fi
done

if [ $bad -gt 0 ]; then
	echo "include_graph: $bad include(s) against the layers (of $checked checked)" >&2
	exit 1
fi
echo "include_graph: $checked includes point down or sideways; ${#used_allowed[@]} allowed exception(s)"
