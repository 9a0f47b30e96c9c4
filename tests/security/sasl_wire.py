#!/usr/bin/env python3
"""sasl_wire.py PORT — the SASL exchange on a SASL_PLAINTEXT listener,
spoken byte by byte (kafka_messages.py), for what no packaged client
shows: what an unauthenticated connection may send, the answers and the
closes after a failure, SCRAM's server signature, KIP-368
re-authentication and the session's end, and a credential stored with
AlterUserScramCredentials used at once.

Expects users alice (password alice-pw-7Qx, SCRAM-SHA-512 and -256) and
the broker's connections.max.reauth.ms = 2000.  Exit 0, or 1 with FAIL
lines."""
import base64
import hashlib
import hmac
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kafka"))
from api_versions_wire import Conn, FAILS, fail  # noqa: E402

HP = "127.0.0.1:" + sys.argv[1]
PW = "alice-pw-7Qx"
H = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}


def closed(c):
    """The connection is closed by the broker (EOF, not a timeout)."""
    c.s.settimeout(10)
    try:
        return c.s.recv(1) == b""
    except ConnectionError:
        return True


def auth(c, v, tok):
    return c.call("SaslAuthenticate", v, {"AuthBytes": tok})


def scram(c, mech, user, pw, v=2, hs=1):
    """A whole SCRAM exchange: (error code, session lifetime) of its end."""
    d = c.call("SaslHandshake", hs, {"Mechanism": mech})
    if not d or d["ErrorCode"]:
        return (d and d["ErrorCode"], None)
    h = H[mech]
    cnonce = base64.b64encode(os.urandom(18)).decode()
    bare = "n=%s,r=%s" % (user.replace("=", "=3D").replace(",", "=2C"), cnonce)
    d = auth(c, v, ("n,," + bare).encode())
    if not d or d["ErrorCode"]:
        return (d and d["ErrorCode"], None)
    sfirst = d["AuthBytes"].decode()
    a = dict(x.split("=", 1) for x in sfirst.split(","))
    if not a["r"].startswith(cnonce) or len(a["r"]) <= len(cnonce):
        fail("server nonce does not extend the client's: %s" % sfirst)
    salted = hashlib.pbkdf2_hmac(h().name, pw.encode(), base64.b64decode(a["s"]), int(a["i"]))
    ck = hmac.new(salted, b"Client Key", h).digest()
    wo = "c=biws,r=" + a["r"]
    am = (bare + "," + sfirst + "," + wo).encode()
    proof = bytes(x ^ y for x, y in zip(ck, hmac.new(h(ck).digest(), am, h).digest()))
    d = auth(c, v, (wo + ",p=" + base64.b64encode(proof).decode()).encode())
    if not d:
        return (None, None)
    if d["ErrorCode"] == 0:
        sk = hmac.new(salted, b"Server Key", h).digest()
        want = b"v=" + base64.b64encode(hmac.new(sk, am, h).digest())
        if d["AuthBytes"] != want:
            fail("server signature %r, want %r" % (d["AuthBytes"], want))
    return (d["ErrorCode"], d.get("SessionLifetimeMs"))


def metadata(c):
    return c.call("Metadata", 1, {"Topics": [], "AllowAutoTopicCreation": False})


def check(cond, why):
    if not cond:
        fail(why)


# Before authentication: ApiVersions yes, anything else closes.
c = Conn(HP)
d = c.call("ApiVersions", 3, {"ClientSoftwareName": "w", "ClientSoftwareVersion": "1"})
check(d and d["ErrorCode"] == 0, "ApiVersions before authentication")
check(metadata(c) is None, "Metadata before authentication was answered")
check(closed(c), "connection open after Metadata before authentication")

# Each mechanism, each SaslAuthenticate version; the session lifetime.
for mech in ("SCRAM-SHA-512", "SCRAM-SHA-256"):
    for v in (0, 1, 2):
        c = Conn(HP)
        err, life = scram(c, mech, "alice", PW, v=v)
        check(err == 0, "%s SaslAuthenticate v%d: error %r" % (mech, v, err))
        check(v == 0 or life == 2000, "%s v%d: session_lifetime_ms %r" % (mech, v, life))
        d = metadata(c)
        check(d is not None and d["Brokers"], "%s v%d: Metadata after authentication" % (mech, v))

# PLAIN.
c = Conn(HP)
check(c.call("SaslHandshake", 1, {"Mechanism": "PLAIN"})["ErrorCode"] == 0, "PLAIN handshake")
d = auth(c, 2, b"\0alice\0" + PW.encode())
check(d["ErrorCode"] == 0 and d["SessionLifetimeMs"] == 2000, "PLAIN: %r" % d)
check(metadata(c) is not None, "Metadata after PLAIN")

# A wrong password: SASL_AUTHENTICATION_FAILED with a message, then closed.
for mech in ("SCRAM-SHA-512", "PLAIN"):
    c = Conn(HP)
    if mech == "PLAIN":
        c.call("SaslHandshake", 1, {"Mechanism": "PLAIN"})
        d = auth(c, 2, b"\0alice\0wrong-pw")
        err = d["ErrorCode"]
        check(d["ErrorMessage"] and "Authentication failed" in d["ErrorMessage"],
              "no message: %r" % d)
    else:
        err, _ = scram(c, mech, "alice", "wrong-pw")
    check(err == 58, "%s wrong password: error %r, not SASL_AUTHENTICATION_FAILED" % (mech, err))
    check(closed(c), "%s: connection open after a failed authentication" % mech)
# An unknown user; a mechanism not enabled (UNSUPPORTED_SASL_MECHANISM, the
# list, closed); SaslAuthenticate without a handshake (ILLEGAL_SASL_STATE).
c = Conn(HP)
check(scram(c, "SCRAM-SHA-512", "nobody", "x")[0] == 58, "unknown user")
c = Conn(HP)
d = c.call("SaslHandshake", 1, {"Mechanism": "GSSAPI"})
check(d["ErrorCode"] == 33 and "SCRAM-SHA-512" in d["Mechanisms"], "GSSAPI: %r" % d)
check(closed(c), "open after UNSUPPORTED_SASL_MECHANISM")
c = Conn(HP)
d = auth(c, 2, b"n,,n=alice,r=abc")
check(d["ErrorCode"] == 34, "SaslAuthenticate first: %r" % d)
check(closed(c), "open after ILLEGAL_SASL_STATE")
# Garbage SCRAM messages: failed, closed, broker still answering.
for tok in (b"", b"p=tls-unique,,n=alice,r=x", b"n,,n=alice", b"n,,n=al=ice,r=x",
            b"n,a=bob,n=alice,r=x", b"n,,n=alice,r=x,tokenauth=true", b"\xff" * 300):
    c = Conn(HP)
    c.call("SaslHandshake", 1, {"Mechanism": "SCRAM-SHA-256"})
    d = auth(c, 2, tok)
    check(d and d["ErrorCode"] == 58, "token %r: %r" % (tok, d))
    check(closed(c), "token %r: connection open" % tok)

# KIP-368: the session ends after 2 s; a re-authentication before then
# keeps it; after the end only a re-authentication is admitted.
c = Conn(HP)
check(scram(c, "SCRAM-SHA-512", "alice", PW)[0] == 0, "session A")
time.sleep(1.2)
check(scram(c, "SCRAM-SHA-512", "alice", PW)[0] == 0, "re-authentication")
time.sleep(1.2)  # 2.4 s after the first, 1.2 s after the second
check(metadata(c) is not None, "Metadata after a re-authentication (session extended)")
time.sleep(1.2)
check(metadata(c) is None, "Metadata after the session ended was answered")
check(closed(c), "open after the session ended")
# Re-authentication as another user, or with another mechanism: refused.
c = Conn(HP)
scram(c, "SCRAM-SHA-512", "alice", PW)
err, _ = scram(c, "SCRAM-SHA-256", "alice", PW)
check(err == 34, "re-authentication with another mechanism: %r" % err)

# SaslHandshake v0: the tokens then come bare, [size][token], and so do
# the answers; a wrong one closes the connection with no answer.
import struct  # noqa: E402
c = Conn(HP)
check(c.call("SaslHandshake", 0, {"Mechanism": "PLAIN"})["ErrorCode"] == 0, "v0 handshake")
tok = b"\0alice\0" + PW.encode()
c.s.sendall(struct.pack(">i", len(tok)) + tok)
check(c.recv(4) == b"\0\0\0\0", "raw PLAIN: not an empty token")
check(metadata(c) is not None, "Metadata after a raw PLAIN exchange")
c = Conn(HP)
c.call("SaslHandshake", 0, {"Mechanism": "PLAIN"})
tok = b"\0alice\0wrong"
c.s.sendall(struct.pack(">i", len(tok)) + tok)
check(closed(c), "raw PLAIN with a wrong password: not closed (or answered)")

# A credential stored over the wire is used at once on this broker.
c = Conn(HP)
scram(c, "SCRAM-SHA-512", "alice", PW)
salt = os.urandom(16)
salted = hashlib.pbkdf2_hmac("sha512", b"carol-pw-2Zr", salt, 4096)
d = c.call("AlterUserScramCredentials", 0, {"Deletions": [], "Upsertions": [
    {"Name": "carol", "Mechanism": 2, "Iterations": 4096, "Salt": salt,
     "SaltedPassword": salted}]})
check(d["Results"][0]["ErrorCode"] == 0, "upsert carol: %r" % d)
check(scram(Conn(HP), "SCRAM-SHA-512", "carol", "carol-pw-2Zr")[0] == 0, "carol logs in")
d = c.call("AlterUserScramCredentials", 0, {"Deletions": [{"Name": "carol", "Mechanism": 2}],
                                            "Upsertions": []})
check(d["Results"][0]["ErrorCode"] == 0, "delete carol: %r" % d)
check(scram(Conn(HP), "SCRAM-SHA-512", "carol", "carol-pw-2Zr")[0] == 58, "carol deleted")

print("FAILED" if FAILS else "ok")
sys.exit(1 if FAILS else 0)
