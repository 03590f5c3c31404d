#!/usr/bin/env python3
"""Request send times as seen on the wire, from a tcpdump capture.

Reads a classic pcap file (microsecond or nanosecond timestamps) holding the client->server
segments of a load test, e.g. captured with

    tcpdump -i lo -s 128 -B 65536 --time-stamp-precision=nano -w FILE \
        'tcp dst port PORT and tcp[tcpflags] & tcp-push != 0'

and reports how far the gaps between consecutive requests stray from the ideal gap 1/rate.
The wire is the only place where every tool can be judged by the same clock: a tool's own
view of its lateness cannot show bursts that it does not know it makes.

Each TCP segment with a payload is taken as one request. That holds for HTTP/1.1 without
pipelining (one request in flight per connection), which is how every tool is run here.

Prints one JSON object. Standard library only.
"""

import argparse
import json
import struct
import sys

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
LINKTYPE_RAW_ALT = 12


def read_pcap(path):
    """Yields (timestamp_ns, linktype, frame bytes) for every record."""
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            raise ValueError(f"{path}: not a pcap file (too short)")
        for endian in ("<", ">"):
            magic = struct.unpack(endian + "I", header[:4])[0]
            if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
                break
        else:
            raise ValueError(f"{path}: not a classic pcap file (pcapng is not supported)")
        frac_to_ns = 1 if magic == PCAP_MAGIC_NS else 1000
        linktype = struct.unpack(endian + "I", header[20:24])[0]
        record = struct.Struct(endian + "IIII")
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, incl, _orig = record.unpack(rh)
            data = f.read(incl)
            if len(data) < incl:
                return  # truncated last record: tcpdump was stopped mid-write
            yield sec * 1_000_000_000 + frac * frac_to_ns, linktype, data


def network_payload(linktype, frame):
    """Returns (ethertype-like protocol, bytes from the IP header on) or None."""
    if linktype == LINKTYPE_ETHERNET:
        if len(frame) < 14:
            return None
        proto = struct.unpack("!H", frame[12:14])[0]
        offset = 14
        while proto == 0x8100 and len(frame) >= offset + 4:  # VLAN tags
            proto = struct.unpack("!H", frame[offset + 2:offset + 4])[0]
            offset += 4
        return proto, frame[offset:]
    if linktype == LINKTYPE_LINUX_SLL:
        return (struct.unpack("!H", frame[14:16])[0], frame[16:]) if len(frame) >= 16 else None
    if linktype == LINKTYPE_LINUX_SLL2:
        return (struct.unpack("!H", frame[0:2])[0], frame[20:]) if len(frame) >= 20 else None
    if linktype == LINKTYPE_NULL:
        if len(frame) < 4:
            return None
        family = struct.unpack("=I", frame[:4])[0]
        return (0x0800 if family == 2 else 0x86DD), frame[4:]
    if linktype in (LINKTYPE_RAW, LINKTYPE_RAW_ALT):
        if not frame:
            return None
        return (0x0800 if frame[0] >> 4 == 4 else 0x86DD), frame
    return None


def tcp_header(proto, ip):
    """Returns (the TCP header and what follows it, payload length) from an IP packet, or None
    for what is not TCP.

    The payload length comes from the headers, not from the captured bytes, because the
    capture may be cut at a small snap length.
    """
    if proto == 0x0800 and len(ip) >= 20:
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        if ip[9] != 6 or len(ip) < ihl + 13:
            return None
        tcp = ip[ihl:]
        return tcp, total - ihl - (tcp[12] >> 4) * 4
    if proto == 0x86DD and len(ip) >= 40:
        if ip[6] != 6 or len(ip) < 40 + 13:  # extension headers are not expected on lo
            return None
        tcp = ip[40:]
        return tcp, struct.unpack("!H", ip[4:6])[0] - (tcp[12] >> 4) * 4
    return None


def tcp_segment(proto, ip):
    """Returns (src port, dst port, payload length) from the IP and TCP headers."""
    header = tcp_header(proto, ip)
    if header is None:
        return None
    tcp, payload_len = header
    sport, dport = struct.unpack("!HH", tcp[:4])
    return sport, dport, payload_len


def request_times(path, port):
    times = []
    for ts, linktype, frame in read_pcap(path):
        net = network_payload(linktype, frame)
        if net is None:
            continue
        seg = tcp_segment(*net)
        if seg is None:
            continue
        _sport, dport, payload_len = seg
        if payload_len > 0 and (port is None or dport == port):
            times.append(ts)
    times.sort()
    return times


def percentile(sorted_values, p):
    """Nearest-rank percentile, p in [0, 100]."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))  # ceil without floats
    return sorted_values[int(min(rank, len(sorted_values))) - 1]


def analyse(times, rate, skip_ns, keep_ns):
    if times and skip_ns > 0:
        start = times[0] + skip_ns
        times = [t for t in times if t >= start]
    if times and keep_ns is not None:
        end = times[0] + keep_ns
        times = [t for t in times if t < end]
    ideal = 1e9 / rate
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    deviations = sorted(abs(g - ideal) for g in gaps)
    span = (times[-1] - times[0]) if len(times) > 1 else 0
    # The i-th request on the wire against an ideal grid i/rate, shifted by the median
    # residual: the wire cannot tell the intended times, but a constant offset does not
    # distort results, so only what differs from it counts. A tool that falls behind its
    # rate shows as a growing residual.
    residuals = sorted(t - times[0] - i * ideal for i, t in enumerate(times))
    offset = percentile(residuals, 50) if residuals else 0
    schedule_errors = sorted(abs(r - offset) for r in residuals)
    return {
        "requests": len(times),
        "span_ns": span,
        "rate_on_wire_per_s": (len(times) - 1) * 1e9 / span if span > 0 else None,
        "ideal_gap_ns": ideal,
        "gap_ns": {str(p): percentile(gaps, p) for p in (1, 50, 99)},
        "abs_gap_error_ns": {
            "50": percentile(deviations, 50),
            "99": percentile(deviations, 99),
            "mean": sum(deviations) / len(deviations) if deviations else None,
        },
        "abs_schedule_error_ns": {
            "50": percentile(schedule_errors, 50),
            "99": percentile(schedule_errors, 99),
        },
        # Gaps under 10 us are sends that went out back to back, i.e. in a burst.
        "burst_share": (sum(1 for g in gaps if g < 10_000) / len(gaps)) if gaps else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pcap")
    ap.add_argument("--rate", type=float, required=True, help="intended requests per second")
    ap.add_argument("--port", type=int, help="count only segments sent to this port")
    ap.add_argument("--skip-ms", type=float, default=200.0,
                    help="ignore the first MS after the first request (start-up)")
    ap.add_argument("--keep-ms", type=float,
                    help="analyse only MS after the skipped start (drops the tail)")
    args = ap.parse_args()
    if args.rate <= 0:
        ap.error("--rate must be positive")
    try:
        times = request_times(args.pcap, args.port)
    except (OSError, ValueError) as e:
        print(f"wire_gaps: {e}", file=sys.stderr)
        return 1
    keep_ns = args.keep_ms * 1e6 if args.keep_ms is not None else None
    result = analyse(times, args.rate, args.skip_ms * 1e6, keep_ns)
    result["source"] = args.pcap
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0 if result["requests"] > 1 else 1


if __name__ == "__main__":
    sys.exit(main())
