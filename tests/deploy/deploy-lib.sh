# tests/deploy/deploy-lib.sh — what the deploy tests read from deploy/
# (sourced after tests/lib.sh).  python3 with its yaml module comes with
# yamllint (scripts/setup installs it).
#
#   deploy_load             skip unless python3 can import yaml; read the
#                           StatefulSet once (one python3 run) into:
#     DEPLOY_SCRIPT           the kaasd container's `sh -c` script
#     DEPLOY_ENV              its literal environment, NAME=VALUE words
#     DEPLOY_SERVICE          spec.serviceName
#     DEPLOY_KAFKA_PORT, DEPLOY_HTTP_PORT   the named container ports
#     DEPLOY_READY_PATH, DEPLOY_READY_PORT, DEPLOY_LIVE_PATH, DEPLOY_LIVE_PORT
#     DEPLOY_CONFIG_MOUNT     where the ConfigMap volume is mounted
#     DEPLOY_RUN_AS_USER      the pod's runAsUser
#   deploy_kaasd_args H NS  the kaasd arguments the script runs on pod H in
#                           namespace NS, one per line (a stand-in kaasd on
#                           PATH prints them)
DEPLOY_DIR="$KAAS_TOP_SRCDIR/deploy/kubernetes"
KAASD="$KAAS_TOP_BUILDDIR/kaasd"

deploy_load() {
	command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed (apt-get install yamllint)"
	python3 -c 'import yaml' 2>/dev/null || kaas_skip "python3-yaml is not installed (apt-get install yamllint)"
	local vars
	vars=$(python3 - "$DEPLOY_DIR/statefulset.yaml" <<'PY'
import shlex, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
sts = next(d for d in docs if d.get("kind") == "StatefulSet")
spec = sts["spec"]["template"]["spec"]
c = next(x for x in spec["containers"] if x["name"] == "kaasd")
if c["command"][:2] != ["/bin/sh", "-c"] or len(c["command"]) != 3:
    sys.exit("the kaasd container's command is not /bin/sh -c SCRIPT")
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
v = {
    "SCRIPT": c["command"][2],
    "ENV": " ".join("%s=%s" % (e["name"], e["value"]) for e in c.get("env", []) if "value" in e),
    "SERVICE": sts["spec"]["serviceName"],
    "KAFKA_PORT": ports["kafka"], "HTTP_PORT": ports["http"],
    "READY_PATH": c["readinessProbe"]["httpGet"]["path"],
    "READY_PORT": c["readinessProbe"]["httpGet"]["port"],
    "LIVE_PATH": c["livenessProbe"]["httpGet"]["path"],
    "LIVE_PORT": c["livenessProbe"]["httpGet"]["port"],
    "CONFIG_MOUNT": next(m["mountPath"] for m in c["volumeMounts"] if m["name"] == "config"),
    "RUN_AS_USER": spec["securityContext"]["runAsUser"],
}
for k, x in v.items():
    print("DEPLOY_%s=%s" % (k, shlex.quote(str(x))))
PY
	) || kaas_fail "cannot read deploy/kubernetes/statefulset.yaml"
	eval "$vars"
}

deploy_kaasd_args() {
	local host=$1 ns=$2 bin rc=0
	bin=$(mktemp -d "${TMPDIR:-/tmp}/kaas-deploy.XXXXXX")
	printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' >"$bin/kaasd"
	chmod +x "$bin/kaasd"
	# The container's literal environment (CLUSTER_DOMAIN...), then what
	# Kubernetes gives every pod.
	# shellcheck disable=SC2086 # one NAME=VALUE per word
	env -i $DEPLOY_ENV PATH="$bin:/usr/bin:/bin" HOSTNAME="$host" POD_NAMESPACE="$ns" \
		/bin/sh -c "$DEPLOY_SCRIPT" || rc=$?
	rm -rf "$bin"
	return $rc
}
