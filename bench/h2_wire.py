#!/usr/bin/env python3
"""When each HTTP/2 request went onto the wire, from a pcap of the client's side of lo.

The wire-gap script (wire_gaps.py) takes one TCP segment as one request, which HTTP/2 breaks:
a segment may carry many HEADERS frames, or none (a WINDOW_UPDATE, a SETTINGS ack). This reads
each client connection's bytes in order (by TCP sequence number), skips the connection
preface, walks the frames, and dates every HEADERS frame by the segment that carried its first
byte. The capture needs whole payloads (tcpdump -s 0) of the segments to the server's port.

Usage: h2_wire.py PCAP PORT   prints one line per request: "<unix_ns> <client port> <stream>"
As a module: request_times(pcap, port) returns the sorted unix_ns of the requests.
"""

import struct
import sys

import wire_gaps

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_HEADER = 9
HEADERS = 0x1


def tcp_payload(proto, ip):
    """(src port, dst port, sequence number, payload bytes), or None for what is not TCP."""
    header = wire_gaps.tcp_header(proto, ip)
    if header is None:
        return None
    tcp, payload_len = header
    sport, dport, seq = struct.unpack("!HHI", tcp[:8])
    offset = (tcp[12] >> 4) * 4
    payload = tcp[offset:offset + payload_len]
    if len(payload) != payload_len:
        raise ValueError("the capture cut a segment short: take it with tcpdump -s 0")
    return sport, dport, seq, payload


class client_stream:
    """One connection's bytes towards the server, walked frame by frame."""

    def __init__(self):
        self.next_seq = None
        self.pending = b""
        self.preface_left = len(PREFACE)
        self.frame_left = 0  # payload bytes of the current frame not seen yet
        self.pending_since = 0

    def feed(self, ts, seq, data, found):
        if self.next_seq is not None:
            behind = (self.next_seq - seq) & 0xFFFFFFFF
            if behind >= 1 << 31:  # bytes are missing: the frames cannot be found again
                raise ValueError("the capture dropped part of a connection's bytes")
            data = data[behind:]  # a retransmission: keep only what is new
            seq = self.next_seq
        if not data:
            return
        self.next_seq = (seq + len(data)) & 0xFFFFFFFF
        if self.preface_left:
            taken = min(self.preface_left, len(data))
            self.preface_left -= taken
            data = data[taken:]
        while data:
            if self.frame_left:
                taken = min(self.frame_left, len(data))
                self.frame_left -= taken
                data = data[taken:]
                continue
            if not self.pending:
                self.pending_since = ts  # a frame's first byte dates it
            need = FRAME_HEADER - len(self.pending)
            self.pending += data[:need]
            data = data[need:]
            if len(self.pending) < FRAME_HEADER:
                return
            length = int.from_bytes(self.pending[0:3], "big")
            kind = self.pending[3]
            stream = int.from_bytes(self.pending[5:9], "big") & 0x7FFFFFFF
            if kind == HEADERS:
                found.append((self.pending_since, stream))
            self.pending = b""
            self.frame_left = length


def requests(path, port):
    """(unix_ns, client port, stream id) of every HEADERS frame sent to `port`, in wire order."""
    streams, out = {}, []
    for ts, linktype, frame in wire_gaps.read_pcap(path):
        net = wire_gaps.network_payload(linktype, frame)
        seg = net and tcp_payload(*net)
        if not seg or seg[1] != port or not seg[3]:
            continue
        sport, _, seq, payload = seg
        found = []
        streams.setdefault(sport, client_stream()).feed(ts, seq, payload, found)
        out.extend((t, sport, s) for t, s in found)
    out.sort()
    return out


def request_times(path, port):
    return [t for t, _, _ in requests(path, port)]


def main(argv):
    if len(argv) != 3:
        print("usage: h2_wire.py PCAP PORT", file=sys.stderr)
        return 2
    found = requests(argv[1], int(argv[2]))
    for t, sport, stream in found:
        print(t, sport, stream)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
