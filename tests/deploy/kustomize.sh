#!/bin/bash
# kaas-test-timeout: 120
# deploy/kubernetes renders with kustomize (kubectl kustomize), as is and
# with the cluster-dir component on:
#  1. every object lands in namespace kaas; the StatefulSet mounts the
#     generated ConfigMap (hash-suffixed name) and the kaas-data claim, and
#     its serviceName is the headless Service; the PDB and both Services
#     select the pods;
#  2. with the component, a second ReadWriteMany claim is mounted where
#     KAAS_CLUSTER_DIR points, and the base container keeps its env.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
kaas_scratch
. "$KAAS_TOP_SRCDIR/tests/deploy/deploy-lib.sh"
deploy_load
command -v kubectl >/dev/null 2>&1 || kaas_skip "kubectl is not installed (it renders the kustomization)"
kubectl kustomize "$DEPLOY_DIR" >"$KAAS_SCRATCH/base.yaml" || kaas_fail "kubectl kustomize deploy/kubernetes failed"
cp -r "$DEPLOY_DIR" "$KAAS_SCRATCH/k"
sed -i -e 's/^# components:/components:/' -e 's/^#   - cluster-dir/  - cluster-dir/' "$KAAS_SCRATCH/k/kustomization.yaml"
grep -q '^  - cluster-dir' "$KAAS_SCRATCH/k/kustomization.yaml" || kaas_fail "kustomization.yaml has no commented cluster-dir component to turn on"
kubectl kustomize "$KAAS_SCRATCH/k" >"$KAAS_SCRATCH/cd.yaml" || kaas_fail "kustomize with the cluster-dir component failed"
python3 - "$KAAS_SCRATCH/base.yaml" "$KAAS_SCRATCH/cd.yaml" <<'PY' || kaas_fail "the rendered manifests are inconsistent"
import sys, yaml
def load(p):
    return [d for d in yaml.safe_load_all(open(p)) if d]
def check(docs, component):
    by = {}
    for d in docs:
        by.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
        if d["kind"] != "Namespace":
            assert d["metadata"].get("namespace") == "kaas", d["metadata"]
    sts = by["StatefulSet"]["kaas"]
    spec = sts["spec"]["template"]["spec"]
    labels = sts["spec"]["template"]["metadata"]["labels"]
    vols = {v["name"]: v for v in spec["volumes"]}
    cm = vols["config"]["configMap"]["name"]
    assert cm in by["ConfigMap"] and cm.startswith("kaasd-config-"), cm
    assert "kaasd.conf" in by["ConfigMap"][cm]["data"]
    assert vols["data"]["persistentVolumeClaim"]["claimName"] in by["PersistentVolumeClaim"]
    assert by["Service"][sts["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"
    for s in by["Service"].values():
        assert all(labels.get(k) == v for k, v in s["spec"]["selector"].items()), s
    pdb = by["PodDisruptionBudget"]["kaas"]["spec"]["selector"]["matchLabels"]
    assert all(labels.get(k) == v for k, v in pdb.items())
    for pvc in by["PersistentVolumeClaim"].values():
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"], pvc
    c = spec["containers"][0]
    env = {e["name"]: e for e in c["env"]}
    assert "POD_NAMESPACE" in env and "CLUSTER_DOMAIN" in env, env
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert set(mounts) >= {"data", "config", "tmp"}, mounts
    if component:
        assert vols["cluster"]["persistentVolumeClaim"]["claimName"] == "kaas-cluster"
        assert "kaas-cluster" in by["PersistentVolumeClaim"]
        assert env["KAAS_CLUSTER_DIR"]["value"] == mounts["cluster"], (env, mounts)
    else:
        assert "cluster" not in vols and "KAAS_CLUSTER_DIR" not in env
    return len(docs)
print("rendered: %d objects, %d with the cluster-dir component"
      % (check(load(sys.argv[1]), False), check(load(sys.argv[2]), True)))
PY
