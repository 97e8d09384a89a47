"""The capture classes built from tshark's own dissection, with the precedence rules of
capture/README.md, for per-packet agreement tests (crafted captures and testbed captures).

tshark runs with IP reassembly off (``ip.defragment`` / ``ipv6.defragment`` FALSE) so every
fragment is dissected as it is on the wire: a first fragment by its transport header. Rules, in
order, for one frame (fields of the innermost IP header, ``-E occurrence=l``; with
``tunnel="outer"`` a frame whose outermost IP header carries a tunnel is ``other``):

- ICMP/ICMPv6 anywhere in the frame -> ``other`` (tshark dissects the IP/TCP header quoted in an
  ICMP error; the classes count the ICMP packet itself);
- a later fragment (``ip.frag_offset`` / ``ipv6.fraghdr.offset`` > 0) has no transport fields: it
  takes the class tshark gave the first fragment of its datagram (addresses, identification,
  protocol) when that frame is in the capture, else TCP -> data, UDP -> udp, other -> other;
- ``tcp.len == 0`` control/ack; TCP port 22 ssh; ``rmi`` in ``frame.protocols`` (tshark's JRMP
  dissector took the segment; its ``rmi`` filter misses segments shorter than the 7-byte JRMP
  header): rmi; a first fragment counts as TCP payload (tshark omits tcp.len on fragments); ``frame.cap_len <
  frame.len`` short-frame; ``tcp.len > 0`` data; ``udp`` udp; anything else other (short-frame
  applies to later fragments, UDP and other as well, as the precedence says).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

FIELDS = ["frame.number", "frame.cap_len", "frame.len", "frame.protocols", "tcp.len", "tcp.srcport", "tcp.dstport",
          "udp.srcport", "ip.proto", "ip.frag_offset", "ip.id", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
          "ipv6.fraghdr.offset", "ipv6.fraghdr.ident", "ipv6.fraghdr.nxt", "ip.dsfield.dscp", "ipv6.tclass.dscp",
          "ip.flags.mf", "ipv6.fraghdr.more", "tcp.hdr_len"]
NO_DEFRAG = ["-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE"]
TUNNEL_TOKENS = {"ip", "ipv6", "gre"}
IPV6_EXT = {"ipv6.hopopts", "ipv6.routing", "ipv6.dstopts", "ipv6.fraghdr", "ah"}


@functools.lru_cache(maxsize=64)
def tshark_rows(pcap: Path) -> list[dict[str, str]]:
    """One dict per frame with FIELDS (innermost occurrence) as tshark prints them (cached per path:
    callers must not change the file)."""
    out = subprocess.run(["tshark", "-r", str(pcap), *NO_DEFRAG, "-T", "fields", "-E", "separator=\t",
                          "-E", "occurrence=l", *[a for f in FIELDS for a in ("-e", f)]],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(FIELDS, (line.split("\t") + [""] * len(FIELDS))[:len(FIELDS)], strict=True)) for line in out.splitlines()]


def outer_tunnel(protocols: str) -> bool:
    """True when the outermost IP header of a frame carries IP-in-IP or GRE."""
    toks = protocols.split(":")
    first = next((i for i, t in enumerate(toks) if t in ("ip", "ipv6")), None)
    if first is None:
        return False
    rest = [t for t in toks[first + 1:] if t not in IPV6_EXT]
    return bool(rest) and rest[0] in TUNNEL_TOKENS


def _base(r: dict[str, str], first_fragment: bool) -> str:
    tcplen, sp, dp = r["tcp.len"], r["tcp.srcport"], r["tcp.dstport"]
    if tcplen == "" and first_fragment and r["tcp.hdr_len"] != "":
        tcplen = "1"  # tshark leaves tcp.len out on a fragment; a fragmented segment carries payload
    if tcplen != "" and int(tcplen) == 0:
        return "control/ack"
    if tcplen != "" and "22" in (sp, dp):
        return "ssh"
    if "rmi" in r["frame.protocols"].split(":"):
        return "rmi"
    if tcplen != "":
        return "data"
    if r["udp.srcport"] != "":
        return "udp"
    return "other"


def tshark_classes(pcap: Path, tunnel: str = "inner") -> dict[int, str]:
    """Frame number -> class from tshark's dissection (rules in the module docstring)."""
    first_of: dict[tuple, str] = {}
    classes: dict[int, str] = {}
    for r in tshark_rows(pcap):
        n = int(r["frame.number"])
        protos = r["frame.protocols"].split(":")
        later = (r["ip.frag_offset"] not in ("", "0")) or (r["ipv6.fraghdr.offset"] not in ("", "0"))
        v6 = r["ipv6.fraghdr.ident"] != ""
        key = (r["ipv6.src"], r["ipv6.dst"], r["ipv6.fraghdr.ident"], r["ipv6.fraghdr.nxt"]) if v6 else \
            (r["ip.src"], r["ip.dst"], r["ip.id"], r["ip.proto"])
        if tunnel == "outer" and outer_tunnel(r["frame.protocols"]):
            base = "other"
        elif "icmp" in protos or "icmpv6" in protos:
            base = "other"
        elif later:
            proto = r["ipv6.fraghdr.nxt"] if v6 else r["ip.proto"]
            base = first_of.get(key) or {"6": "data", "17": "udp"}.get(proto, "other")
        else:
            first = r["ip.flags.mf"] in ("1", "True") or r["ipv6.fraghdr.more"] in ("1", "True")
            base = _base(r, first)
            if first:
                first_of[key] = base
        cut = int(r["frame.cap_len"]) < int(r["frame.len"])
        classes[n] = base if base in ("control/ack", "ssh", "rmi") or not cut else "short-frame"
    return classes


def tshark_dscp(pcap: Path) -> dict[int, int]:
    """Frame number -> DSCP of the innermost IP header (IPv4 DS field or IPv6 traffic class), for
    frames with an IP header and no ICMP (whose quoted header tshark dissects as well)."""
    out = {}
    for r in tshark_rows(pcap):
        toks = r["frame.protocols"].split(":")
        ips = [t for t in toks if t in ("ip", "ipv6")]
        if not ips or "icmp" in toks or "icmpv6" in toks:
            continue
        v = r["ipv6.tclass.dscp"] if ips[-1] == "ipv6" else r["ip.dsfield.dscp"]
        if v != "":
            out[int(r["frame.number"])] = int(v)
    return out


def retransmissions(pcap: Path) -> set[int]:
    """Frames Wireshark's TCP analysis flags as retransmissions: it does not hand them to the RMI
    dissector (so tshark shows a retransmitted JRMP segment on port 1099 as plain TCP), while the
    classifier, which does no sequence analysis, classifies them by port like the original."""
    out = subprocess.run(["tshark", "-r", str(pcap), *NO_DEFRAG, "-Y", "tcp.analysis.retransmission || "
                          "tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission",
                          "-T", "fields", "-e", "frame.number"], capture_output=True, text=True).stdout
    return {int(x) for x in out.split()}
