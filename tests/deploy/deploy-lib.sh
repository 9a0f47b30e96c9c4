# tests/deploy/deploy-lib.sh — what the deploy tests read from deploy/
# (sourced after tests/lib.sh).  python3 with its yaml module comes with
# yamllint (scripts/setup installs it).
#
#   deploy_python              skip unless python3 can import yaml
#   deploy_command_script      the StatefulSet container's sh -c script
#   deploy_kaasd_args H NS     the kaasd arguments that script runs on pod H
#                              in namespace NS, one per line (a stand-in
#                              kaasd on PATH prints them)
#   deploy_manifest_field EXPR a Python expression over `c` (the kaasd
#                              container) and `sts` (the StatefulSet)
DEPLOY_DIR="$KAAS_TOP_SRCDIR/deploy/kubernetes"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"

deploy_python() {
	command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed (apt-get install yamllint)"
	python3 -c 'import yaml' 2>/dev/null || kaas_skip "python3-yaml is not installed (apt-get install yamllint)"
}

deploy_manifest_field() {
	python3 - "$DEPLOY_DIR/statefulset.yaml" "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
sts = next(d for d in docs if d.get("kind") == "StatefulSet")
c = next(x for x in sts["spec"]["template"]["spec"]["containers"] if x["name"] == "kaasd")
v = eval(sys.argv[2])
print("\n".join(map(str, v)) if isinstance(v, list) else v)
PY
}

deploy_command_script() {
	deploy_manifest_field 'c["command"][-1] if c["command"][:2] == ["/bin/sh", "-c"] else sys.exit("kaasd container command is not /bin/sh -c SCRIPT")'
}

deploy_kaasd_args() {
	local host=$1 ns=$2 bin
	bin=$(mktemp -d "${TMPDIR:-/tmp}/kaas-deploy.XXXXXX")
	printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' >"$bin/kaasd"
	chmod +x "$bin/kaasd"
	local script envs rc=0
	script=$(deploy_command_script) || { rm -rf "$bin"; return 1; }
	# The container's literal environment (CLUSTER_DOMAIN...), then what
	# Kubernetes gives every pod.
	envs=$(deploy_manifest_field '["%s=%s" % (e["name"], e["value"]) for e in c.get("env", []) if "value" in e]') ||
		{ rm -rf "$bin"; return 1; }
	# shellcheck disable=SC2086 # one NAME=VALUE per word
	env -i $envs PATH="$bin:/usr/bin:/bin" HOSTNAME="$host" POD_NAMESPACE="$ns" \
		/bin/sh -c "$script" || rc=$?
	rm -rf "$bin"
	return $rc
}
