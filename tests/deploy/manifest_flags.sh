#!/bin/bash
# kaas-test-timeout: 120
# Every kaasd option the Kubernetes deployment uses exists in this kaasd:
#  1. The StatefulSet's entrypoint script, run as pod kaas-2 (a stand-in
#     kaasd prints its arguments), derives --broker-id 2 from the pod's
#     ordinal and advertises the pod's DNS name under the headless Service
#     on the Kafka container port.
#  2. Each --option it passes, and each key of the --config file the
#     ConfigMap carries, is one `kaasd --help` lists.
#  3. The probes use the http port, which is --http-listen's port; the
#     optional cluster-dir component sets KAAS_CLUSTER_DIR to its mount.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
. "$KAAS_TOP_SRCDIR/tests/deploy/deploy-lib.sh"
deploy_load
[ -x "$KAASD" ] || kaas_fail "no kaasd binary at $KAASD"
help=$("$KAASD" --help) || kaas_fail "kaasd --help failed"

# 1. The entrypoint script on pod kaas-2 in namespace ns1.
args=$(deploy_kaasd_args kaas-2 ns1) || kaas_fail "the StatefulSet's command script failed: $args"
echo "kaasd arguments on pod kaas-2:" $args
arg_after() { echo "$args" | sed -n "/^$1\$/{n;p;q}"; }
[ "$(arg_after --broker-id)" = 2 ] || kaas_fail "pod kaas-2 is not broker 2: $(arg_after --broker-id)"
kport=$DEPLOY_KAFKA_PORT
want="kaas-2.$DEPLOY_SERVICE.ns1.svc.cluster.local:$kport"
[ "$(arg_after --advertise)" = "$want" ] || kaas_fail "advertise $(arg_after --advertise), expected $want"
[ "$(arg_after --listen)" = "0.0.0.0:$kport" ] || kaas_fail "listen $(arg_after --listen) is not the kafka port $kport"
# A host name without an ordinal is refused, not started as broker 0.
if out=$(deploy_kaasd_args kaas ns1 2>&1); then kaas_fail "host name 'kaas' started kaasd: $out"; fi
args0=$(deploy_kaasd_args kaas-10 ns1) || kaas_fail "pod kaas-10 failed"
[ "$(echo "$args0" | sed -n '/^--broker-id$/{n;p;q}')" = 10 ] || kaas_fail "pod kaas-10 is not broker 10"

# 2. Options and config keys against kaasd --help.
has_option() { echo "$help" | grep -q -E -- "(^|[^a-z-])$1([^a-z-]|\$)"; }
bad=
for o in $(echo "$args" | grep -- '^--' | sed 's/=.*//'); do
	has_option "$o" || bad="$bad $o"
done
[ -z "$bad" ] || kaas_fail "the StatefulSet passes options kaasd --help does not list:$bad"
conf=$(arg_after --config)
[ "$conf" = /etc/kaas/kaasd.conf ] || kaas_fail "unexpected --config $conf"
[ "$conf" = "$DEPLOY_CONFIG_MOUNT/kaasd.conf" ] || kaas_fail "the ConfigMap is mounted at $DEPLOY_CONFIG_MOUNT, not where --config points"
keys=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=.*//' "$DEPLOY_DIR/kaasd.conf")
[ -n "$keys" ] || kaas_fail "no keys in deploy/kubernetes/kaasd.conf"
for k in $keys; do
	has_option "--$k" || bad="$bad $k"
done
[ -z "$bad" ] || kaas_fail "kaasd.conf sets keys kaasd --help does not list:$bad"
grep -q 'kaasd.conf' "$DEPLOY_DIR/kustomization.yaml" || kaas_fail "kustomization.yaml does not carry kaasd.conf"

# 3. Probes on --http-listen's port; paths are checked live by probes.sh.
http=$(arg_after --http-listen)
hport=$DEPLOY_HTTP_PORT
[ "$http" = "0.0.0.0:$hport" ] || kaas_fail "--http-listen $http is not the http port $hport"
for port in "$DEPLOY_READY_PORT" "$DEPLOY_LIVE_PORT"; do
	[ "$port" = http ] || [ "$port" = "$hport" ] || kaas_fail "a probe on port $port, not $hport"
done
python3 - "$DEPLOY_DIR/cluster-dir/statefulset-patch.yaml" <<'PY' || kaas_fail "the cluster-dir component is inconsistent"
import sys, yaml
sts = yaml.safe_load(open(sys.argv[1]))
c = sts["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
assert env["KAAS_CLUSTER_DIR"] == mounts["cluster"], (env, mounts)
PY
grep -q '"KAAS_CLUSTER_DIR"' "$KAAS_TOP_SRCDIR/src/broker/config.c" || kaas_fail "kaasd no longer reads KAAS_CLUSTER_DIR"
echo "manifest flags: every option and key exists in kaasd --help"
