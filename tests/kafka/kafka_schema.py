"""kafka_schema.py — an independent Kafka wire encoder/decoder for the tests.

Written from Apache Kafka's message definitions (the JSON files under
clients/src/main/resources/common/message), not from kaas's C codec: each
message is a list of fields with the versions they exist in, and one
encoder/decoder walks it for any version, classic or flexible (compact
lengths, tagged-field sections).  A decoder that does not consume every
byte of a response, or runs past its end, raises.
"""
import struct


class Short(Exception):
    pass


def F(name, typ, ver="0+", nullable=None, fields=None):
    """A field: name, type, versions ("N+" or "N-M"), nullable versions."""
    return (name, typ, _range(ver), _range(nullable) if nullable else None, fields)


def _range(spec):
    if spec.endswith("+"):
        return (int(spec[:-1]), 1 << 15)
    if "-" in spec:
        lo, hi = spec.split("-")
        return (int(lo), int(hi))
    return (int(spec), int(spec))


def _in(r, v):
    return r is not None and r[0] <= v <= r[1]


# ------------------------------------------------------------ primitives

def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(n):
    return uvarint((n << 1) ^ (n >> 63))


class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise Short("short read at %d (+%d of %d)" % (self.pos, n, len(self.buf)))
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def fixed(self, fmt):
        return struct.unpack(">" + fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self):
        n = shift = 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7
            if shift > 28:
                raise Short("uvarint too long")

    def length(self, flex, wide):
        """A length: compact (uvarint N+1, 0 = null) or int16/int32 (-1 = null)."""
        if flex:
            return self.uvarint() - 1
        return self.fixed("i" if wide else "h")

    def tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()                 # tag
            self.take(self.uvarint())      # its data: skipped, unknown to us

    def done(self):
        if self.pos != len(self.buf):
            raise Short("%d bytes left over" % (len(self.buf) - self.pos))


FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "bool": "?", "float64": "d"}


def encode(fields, values, v, flex, out=None):
    out = bytearray() if out is None else out
    for name, typ, ver, nullable, sub in fields:
        if not _in(ver, v):
            continue
        val = values.get(name)
        if typ in FIXED:
            out += struct.pack(">" + FIXED[typ], val if val is not None else 0)
        elif typ == "uuid":
            out += val or bytes(16)
        elif typ in ("string", "bytes", "records"):
            if val is None:
                assert _in(nullable, v) or typ == "records", name + " is not nullable"
                out += uvarint(0) if flex else struct.pack(">h" if typ == "string" else ">i", -1)
            else:
                b = val.encode() if isinstance(val, str) else val
                out += uvarint(len(b) + 1) if flex else struct.pack(
                    ">h" if typ == "string" else ">i", len(b))
                out += b
        elif typ == "struct":  # a nullable struct: int8 -1 (null) or 1, then it
            if val is None:
                assert _in(nullable, v), name + " is not nullable"
                out += struct.pack(">b", -1)
                continue
            out += struct.pack(">b", 1)
            encode(sub, val, v, flex, out)
            if flex:
                out += uvarint(0)
        elif typ.startswith("[]"):
            if val is None:
                assert _in(nullable, v), name + " is not nullable"
                out += uvarint(0) if flex else struct.pack(">i", -1)
                continue
            out += uvarint(len(val) + 1) if flex else struct.pack(">i", len(val))
            for e in val:
                if typ == "[]":
                    encode(sub, e, v, flex, out)
                    if flex:
                        out += uvarint(0)
                else:
                    encode([F("x", typ[2:])], {"x": e}, v, flex, out)
        else:
            raise ValueError(typ)
    return out


def decode(fields, r, v, flex):
    d = {}
    for name, typ, ver, nullable, sub in fields:
        if not _in(ver, v):
            continue
        if typ in FIXED:
            d[name] = r.fixed(FIXED[typ])
        elif typ == "uuid":
            d[name] = r.take(16)
        elif typ in ("string", "bytes", "records"):
            n = r.length(flex, typ != "string")
            if n < 0:
                if not _in(nullable, v) and typ != "records":
                    raise Short("null %s in v%d" % (name, v))
                d[name] = None
            else:
                b = r.take(n)
                d[name] = b.decode() if typ == "string" else b
        elif typ == "struct":
            if r.fixed("b") < 0:
                if not _in(nullable, v):
                    raise Short("null struct %s in v%d" % (name, v))
                d[name] = None
                continue
            d[name] = decode(sub, r, v, flex)
            if flex:
                r.tags()
        elif typ.startswith("[]"):
            n = r.length(flex, True)
            if n < 0:
                if not _in(nullable, v):
                    raise Short("null array %s in v%d" % (name, v))
                d[name] = None
                continue
            lst = []
            for _ in range(n):
                if typ == "[]":
                    lst.append(decode(sub, r, v, flex))
                    if flex:
                        r.tags()
                else:
                    lst.append(decode([F("x", typ[2:])], r, v, flex)["x"])
            d[name] = lst
        else:
            raise ValueError(typ)
    return d
