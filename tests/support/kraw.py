"""kraw.py — one raw Kafka request over a socket, for test scripts that
send what their client library cannot (an old or a new API version):
request header v1, no retries, bounded by the socket timeout."""
import socket
import struct


def string(x):
    """A Kafka STRING (int16 length), or a null one for None."""
    if x is None:
        return struct.pack(">h", -1)
    b = x.encode()
    return struct.pack(">h", len(b)) + b


def request(broker, api_key, version, body, correlation=7, timeout=20):
    """Send one request to broker ("host:port") and return the response
    body after its correlation id (which must match).  Raises on a closed
    connection or a mismatch."""
    host, port = broker.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        hdr = struct.pack(">hhi", api_key, version, correlation) + string("kraw")
        s.sendall(struct.pack(">i", len(hdr) + len(body)) + hdr + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise IOError("connection closed by the broker (api %d v%d)" % (api_key, version))
            data += chunk
    finally:
        s.close()
    (corr,) = struct.unpack(">i", data[4:8])
    if corr != correlation:
        raise IOError("correlation id %d, want %d" % (corr, correlation))
    return data[8:]
