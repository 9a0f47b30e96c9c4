#!/bin/bash
# kaas-test-timeout: 180
# The Containerfile builds as the README says kaas is built:
#  1. The README's first command is scripts/run, which runs scripts/setup
#     and then make -C build; the Containerfile's build stage RUNs the same
#     two (scripts/setup with --broker-only) and nothing else that builds.
#  2. Both stages are Debian 12 slim; the image runs as a non-root user and
#     exposes the Kafka port and the HTTP port of the Kubernetes manifests.
#  3. deploy/container/runtime-packages names, for this build's kaasd and
#     kaasctl, installed packages that hold every library they link.
#  4. scripts/setup --broker-only would install the build's libraries but
#     no test peer (dry run: --help-free parse of the package list).
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/deploy/deploy-lib.sh"
deploy_load
top=$KAAS_TOP_SRCDIR
cf=$top/Containerfile
[ -f "$cf" ] || kaas_fail "no Containerfile"

# 1. The README's first command and what it runs.
first=$(sed -n 's/^    \(scripts\/[a-z-]*\).*/\1/p' "$top/README.md" | head -n1)
[ "$first" = scripts/run ] || kaas_fail "the README's first command is '$first', expected scripts/run"
grep -q '"$top/scripts/setup"' "$top/$first" || kaas_fail "$first no longer runs scripts/setup"
grep -q 'make -C "$top/build"' "$top/$first" || kaas_fail "$first no longer runs make -C build"
# The RUN instructions, continuation lines joined.
runs=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$cf" | sed -n 's/^RUN[[:space:]]*//p')
build_runs=$(sed -n '/^FROM .* AS build/,/^FROM /p' "$cf" | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' | sed -n 's/^RUN[[:space:]]*//p')
echo "build stage RUN: $build_runs"
echo "$build_runs" | grep -q '^scripts/setup --broker-only && make -C build ' ||
	kaas_fail "the build stage does not start with the README's steps (scripts/setup, make -C build)"
if echo "$build_runs" | grep -E -q '(^|[ ;&|])(\./configure|autoreconf|gcc|cc)( |$)'; then
	kaas_fail "the build stage builds by other means than scripts/setup and make"
fi

# 2. Base images, user, ports.
bases=$(sed -n 's/^FROM \([^ ]*\).*/\1/p' "$cf" | sort -u)
[ "$bases" = docker.io/library/debian:12-slim ] || kaas_fail "base images are not Debian 12 slim: $bases"
user=$(sed -n 's/^USER \(.*\)/\1/p' "$cf" | tail -n1)
case "$user" in ''|0|0:*|root|root:*) kaas_fail "the image runs as '$user'" ;; esac
uid=${user%%:*}
[ "$DEPLOY_RUN_AS_USER" = "$uid" ] || kaas_fail "the StatefulSet runs as uid $DEPLOY_RUN_AS_USER, the image's user is $uid"
echo "$runs" | grep -q "useradd .*--uid $uid " || kaas_fail "no user $uid is created"
expose=$(sed -n 's/^EXPOSE //p' "$cf")
[ "$expose" = "9092 9644" ] || kaas_fail "EXPOSE '$expose', expected 9092 9644"
grep -q -- '--http-listen 0.0.0.0:9644' "$top/deploy/kubernetes/statefulset.yaml" || kaas_fail "the manifests' HTTP port is not 9644"
grep -q '^COPY --from=build /out/kaasd /out/kaasctl ' "$cf" || kaas_fail "the runtime stage does not take kaasd and kaasctl"

# The build context keeps every file of the source tree and what autoreconf
# generates beside it: no .dockerignore pattern matches a tracked file, the
# autotools' outputs, or one of their directories (build-* once left out
# build-aux/ while configure came along, and configure failed).
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	{ git -C "$top" ls-files; printf '%s\n' configure Makefile.in aclocal.m4 \
		build-aux/install-sh build-aux/compile build-aux/missing build-aux/ar-lib \
		build-aux/test-driver build-aux/depcomp; } >"$KAAS_SCRATCH/files"
	python3 - "$top/.dockerignore" "$KAAS_SCRATCH/files" <<'PY' || kaas_fail ".dockerignore leaves out source files"
import fnmatch, sys
pats = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
bad = set()
files = open(sys.argv[2]).read().split()
assert len(files) > 100, "too few files listed"
for f in files:
    parts = f.split("/")
    for i in range(1, len(parts) + 1):
        pre = "/".join(parts[:i])
        for p in pats:
            if fnmatch.fnmatchcase(pre, p) or fnmatch.fnmatchcase(pre, p.replace("**/", "")):
                bad.add("%s (%s)" % (pre, p))
for b in sorted(bad)[:10]:
    print(".dockerignore leaves out", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
fi

# 3. runtime-packages on this build.
pk=$("$top/deploy/container/runtime-packages" "$KAAS_TOP_BUILDDIR/kaasd" "$KAAS_TOP_BUILDDIR/kaasctl") ||
	kaas_fail "runtime-packages failed"
echo "runtime packages:" $pk
echo "$pk" | grep -qx libc6 || kaas_fail "runtime-packages misses libc6"
echo "$pk" | grep -qx 'libuv1' || kaas_fail "runtime-packages misses libuv1"
echo "$pk" | grep -q -- "-dev$" && kaas_fail "runtime-packages names a -dev package: $pk"
# shellcheck disable=SC2086 # one package per word
n=$(dpkg-query -W -f='${Status}\n' $pk 2>/dev/null | grep -c '^install ok installed$')
[ "$n" = "$(echo "$pk" | wc -l)" ] || kaas_fail "runtime-packages names packages that are not installed"

# 4. scripts/setup --broker-only's package list: every build library, no
# test peer.  (Its package step is run with dpkg-query and apt-get stubbed.)
mkdir -p "$KAAS_SCRATCH/bin"
printf '#!/bin/sh\nexit 1\n' >"$KAAS_SCRATCH/bin/dpkg-query"
printf '#!/bin/sh\necho "$@" >>"%s"\n' "$KAAS_SCRATCH/apt.log" >"$KAAS_SCRATCH/bin/apt-get"
printf '#!/bin/sh\n"$@"\n' >"$KAAS_SCRATCH/bin/sudo"
chmod +x "$KAAS_SCRATCH/bin/"*
PATH="$KAAS_SCRATCH/bin:$PATH" "$top/scripts/setup" --broker-only --packages-only >/dev/null ||
	kaas_fail "scripts/setup --broker-only --packages-only failed"
installed=$(grep '^install' "$KAAS_SCRATCH/apt.log" | tr ' ' '\n' | grep -v '^-' | sed 1d)
echo "broker-only packages:" $installed
for p in gcc make libuv1-dev libnfs-dev libcjson-dev; do
	echo "$installed" | grep -qx "$p" || kaas_fail "scripts/setup --broker-only does not install $p"
done
for p in libfuse3-dev fuse3 kcat nfs-ganesha clang user-mode-linux fio yamllint libcmocka-dev librdkafka-dev; do
	echo "$installed" | grep -qx "$p" && kaas_fail "scripts/setup --broker-only installs $p"
done
echo "containerfile: the build stage runs scripts/setup and make -C build; runtime packages:" $pk
