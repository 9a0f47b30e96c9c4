#!/usr/bin/env python3
"""acl_follow.py BROKER1 BROKER2 HEARTBEAT_MS — ACLs through kafka-python's
admin client (create_acls, describe_acls, delete_acls) on broker 1, enforced
by broker 2 within a heartbeat or so (its authorizer re-reads the bindings
every heartbeat interval).  Plaintext: every client is User:ANONYMOUS and
allow.everyone.if.no.acl.found is true, so a DENY is what changes things.
Prints the delays measured; exit 1 with FAIL lines otherwise."""
import os
import sys
import threading
import time

from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType,
                         ACLResourcePatternType, KafkaAdminClient, NewTopic,
                         ResourcePattern, ResourcePatternFilter, ResourceType)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kafka"))
from api_versions_wire import Conn  # noqa: E402

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, flush=True)


def metadata_error(conn, topic):
    d = conn.call("Metadata", 9, {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False,
                                  "IncludeTopicAuthorizedOperations": False})
    return d["Topics"][0]["ErrorCode"]


def wait_for(conn, topic, want, limit_s):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if metadata_error(conn, topic) == want:
            return (time.monotonic() - t0) * 1000
        time.sleep(0.01)
    return None


def main(b1, b2, heartbeat_ms):
    admin = KafkaAdminClient(bootstrap_servers=b1, request_timeout_ms=10000)
    admin.create_topics([NewTopic("af", 1, 1)])
    other = Conn(b2)
    t0 = time.monotonic()
    while metadata_error(other, "af") != 0 and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    deny = ACL("User:ANONYMOUS", "*", ACLOperation.DESCRIBE, ACLPermissionType.DENY,
               ResourcePattern(ResourceType.TOPIC, "af", ACLResourcePatternType.LITERAL))
    allow = ACL("User:ANONYMOUS", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.TOPIC, "a", ACLResourcePatternType.PREFIXED))
    res = admin.create_acls([deny, allow])
    if res["failed"] or len(res["succeeded"]) != 2:
        fail("create_acls: %r" % res)
    ms = wait_for(other, "af", 29, 10)
    if ms is None:
        fail("broker 2 never enforced the DENY made through broker 1")
    else:
        print("DENY enforced by broker 2 after %.0f ms (heartbeat %d ms)" % (ms, heartbeat_ms))
        if ms > 5 * heartbeat_ms + 1000:
            fail("broker 2 took %.0f ms, more than a few heartbeats" % ms)
    flt = ACLFilter("User:ANONYMOUS", None, ACLOperation.ANY, ACLPermissionType.ANY,
                    ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY))
    acls, err = admin.describe_acls(flt)
    got = sorted((a.resource_pattern.resource_name, a.operation.name, a.permission_type.name,
                  a.resource_pattern.pattern_type.name) for a in acls)
    want = [("a", "WRITE", "ALLOW", "PREFIXED"), ("af", "DESCRIBE", "DENY", "LITERAL")]
    if got != want or err.errno != 0:
        fail("describe_acls: %r %r" % (got, err))
    # Broker 2 answers DescribeAcls from the same documents.
    d = other.call("DescribeAcls", 1, {"ResourceTypeFilter": 2, "ResourceNameFilter": "af",
                                       "PatternTypeFilter": 2, "PrincipalFilter": None,
                                       "HostFilter": None, "Operation": 1, "PermissionType": 1})
    names = sorted(r["ResourceName"] for r in d["Resources"])
    if d["ErrorCode"] or names != ["a", "af"]:
        fail("DescribeAcls (MATCH af) on broker 2: %r" % d)
    dflt = ACLFilter("User:ANONYMOUS", "*", ACLOperation.DESCRIBE, ACLPermissionType.DENY,
                     ResourcePatternFilter(ResourceType.TOPIC, "af", ACLResourcePatternType.LITERAL))
    out = admin.delete_acls([dflt])
    if len(out) != 1 or len(out[0][1]) != 1 or out[0][2].errno != 0:
        fail("delete_acls: %r" % out)
    ms = wait_for(other, "af", 0, 10)
    if ms is None:
        fail("broker 2 never saw the DENY removed")
    else:
        print("removal followed by broker 2 after %.0f ms" % ms)
    acls, err = admin.describe_acls(flt)
    if len(acls) != 1:
        fail("after delete_acls: %r" % acls)
    admin.close()
    concurrent(b1, b2)


def concurrent(b1, b2):
    """CreateAcls on both brokers at once, 8 rounds of 10 bindings each
    (one shared by both in every round): nothing is lost, nothing doubled."""
    def binding(name):
        return {"ResourceType": 3, "ResourceName": name, "ResourcePatternType": 3,
                "Principal": "User:c", "Host": "*", "Operation": 3, "PermissionType": 3}

    def run(broker, tag, errors):
        c = Conn(broker)
        for r in range(8):
            names = ["%s-%d-%d" % (tag, r, i) for i in range(9)] + ["both-%d" % r]
            d = c.call("CreateAcls", 3, {"Creations": [binding(n) for n in names]})
            errors.extend(x["ErrorCode"] for x in d["Results"] if x["ErrorCode"])
    errors = []
    threads = [threading.Thread(target=run, args=(b, t, errors)) for b, t in ((b1, "x"), (b2, "y"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    d = Conn(b1).call("DescribeAcls", 3, {"ResourceTypeFilter": 3, "ResourceNameFilter": None,
                                          "PatternTypeFilter": 1, "PrincipalFilter": "User:c",
                                          "HostFilter": None, "Operation": 1, "PermissionType": 1})
    names = sorted(r["ResourceName"] for r in d["Resources"] for _ in r["Acls"])
    want = sorted(["%s-%d-%d" % (t, r, i) for t in "xy" for r in range(8) for i in range(9)] +
                  ["both-%d" % r for r in range(8)])
    if errors or names != want:
        fail("concurrent CreateAcls: errors %r, %d bindings (want %d), missing %r, extra %r"
             % (errors, len(names), len(want), sorted(set(want) - set(names))[:5],
                sorted(set(names) - set(want))[:5]))
    else:
        print("concurrent CreateAcls on two brokers: all %d bindings, none doubled" % len(want))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    sys.exit(1 if FAILS else 0)
