#!/bin/bash
# kaas-test-timeout: 120
# deploy/grafana/kaas-dashboard.json is a Grafana dashboard that parses, has
# a Prometheus datasource variable every panel uses, and queries only
# metrics kaasd serves (tests/deploy/metric-names.txt); it covers
# throughput, request rate, errors and latency, fsync, group commit, lag,
# the substrate, partitions, readiness and peer liveness.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || kaas_skip "python3 is not installed"
python3 - "$KAAS_TOP_SRCDIR/deploy/grafana/kaas-dashboard.json" \
	"$KAAS_TOP_SRCDIR/tests/deploy/metric-names.txt" <<'PY' || kaas_fail "the Grafana dashboard does not match kaasd's metrics"
import json, re, sys
dash = json.load(open(sys.argv[1]))
names, hist = set(), set()
for line in open(sys.argv[2]):
    w = line.split("#")[0].split()
    if w:
        names.add(w[0])
        if w[1:] == ["histogram"]:
            hist.add(w[0])
errors = []
vars_ = {v["name"]: v for v in dash["templating"]["list"]}
ds = [v for v in vars_.values() if v["type"] == "datasource"]
if len(ds) != 1 or ds[0]["query"] != "prometheus":
    errors.append("expected one datasource variable of type prometheus")
dsref = "${%s}" % ds[0]["name"] if ds else None

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))

exprs = []
for p in panels(dash["panels"]):
    if p["type"] == "row":
        continue
    if p.get("datasource", {}).get("uid") != dsref:
        errors.append("panel %r does not use the datasource variable" % p["title"])
    if not p.get("targets"):
        errors.append("panel %r has no query" % p["title"])
    for t in p.get("targets", []):
        exprs.append((p["title"], t["expr"]))
for v in vars_.values():
    if v["type"] == "query":
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        exprs.append(("variable " + v["name"], q))

used = set()
for title, e in exprs:
    found = re.findall(r"\bkaas_[a-z0-9_]+", e)
    if not found:
        errors.append("%r queries no kaas metric: %s" % (title, e))
    for m in found:
        base = m
        for suf in ("_bucket", "_sum", "_count"):
            if m.endswith(suf) and m[: -len(suf)] in hist:
                base = m[: -len(suf)]
        if base not in names:
            errors.append("%r queries %s, which kaasd does not serve" % (title, m))
        elif base in hist and base == m:
            errors.append("%r queries histogram %s without _bucket/_sum/_count" % (title, m))
        used.add(base)
    if "histogram_quantile" in e and "_bucket" not in e:
        errors.append("%r: histogram_quantile over no _bucket series" % title)
    if "histogram_quantile" in e and not re.search(r"by \(le\b", e):
        errors.append("%r: histogram_quantile without sum by (le...)" % title)
    if e.count("(") != e.count(")") or e.count("{") != e.count("}"):
        errors.append("%r: unbalanced expression %s" % (title, e))

must = ["kaas_produce_bytes_total", "kaas_fetch_bytes_total", "kaas_produce_records_total",
        "kaas_fetch_records_total", "kaas_requests_total", "kaas_request_duration_seconds",
        "kaas_log_fsync_duration_seconds", "kaas_log_group_commit_records", "kaas_group_lag",
        "kaas_substrate_errors_total", "kaas_substrate_op_duration_seconds",
        "kaas_partitions_led", "kaas_partitions_offline", "kaas_ready", "kaas_peer_alive"]
for m in must:
    if m not in used:
        errors.append("the dashboard shows nothing of %s" % m)
ids = [p["id"] for p in panels(dash["panels"])]
if len(ids) != len(set(ids)):
    errors.append("panel ids are not unique")
for e in errors:
    print("grafana:", e, file=sys.stderr)
print("grafana: %d queries over %d of %d metrics" % (len(exprs), len(used), len(names)))
sys.exit(1 if errors else 0)
PY
