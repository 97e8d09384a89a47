"""``ping`` and ``traceroute`` on the virtual switch: real ICMP from the switch's namespace of the
embedded testbed, with the switch's SVI address (``interface Vlan1`` / ``ip address``,
:mod:`qoslab.ios.svi`) as the source, answered in IOS's form.

IOS's form (Cisco IOS Configuration Fundamentals Command Reference, ``ping`` and ``traceroute``;
real IOS-XE outputs in genieparser's ``Ping`` and ``Traceroute`` test data, tests/data/ios-ping/):
``Type escape sequence to abort.``, ``Sending N, S-byte ICMP Echos to A, timeout is T seconds:``,
one ``!`` per reply, ``.`` per timeout, ``U`` per unreachable (70 a line), ``Success rate is P
percent (r/N), round-trip min/avg/max = a/b/c ms`` (whole milliseconds, rounded up: a LAN reply
reads 1); ``Tracing the route to A`` then per hop ``  H ADDRESS R msec R msec R msec`` (`` * `` for
a probe without answer: ``1 msec * ``, ``351 msec *  8 msec``, ``  2  *  *  * ``; IOS-XE prints
``VRF info: ...`` before the hops). NAPALM's ``ios``
driver parses both (``ping()`` / ``traceroute()``).

Safety (the testbed's rule): packets go only to 198.18.0.0/15 and only from a testbed (a switch
run with ``--no-apply`` has no namespace); any other destination, or none of them possible, is
answered as IOS answers a destination it has no route to (``% No valid route for destination``,
nothing sent). A name that is not an address: ``% Unrecognized host or address, or protocol not
running.`` (there is no DNS in the testbed).
"""

from __future__ import annotations

import ipaddress
import math
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from ..ios import IosError
from ..ios.grammar import is_ip
from ..ios.svi import svi_address
from ..testbedplan import switch_namespace
from ..topology import TESTBED_NETWORK

UNKNOWN_HOST = "% Unrecognized host or address, or protocol not running.\n"
NO_ROUTE = "% No valid route for destination"
#: ping: IOS's defaults and ranges (repeat count, datagram size in bytes, timeout in seconds).
PING_OPTIONS = {"repeat": (5, 1, 2147483647), "size": (100, 36, 18024), "timeout": (2, 0, 3600)}
#: traceroute: probes per hop, timeout (s), minimum and maximum TTL (IOS: 3, 3, 1, 30).
TRACE_DEFAULTS = {"probe": 3, "timeout": 3, "ttl": (1, 30)}
#: How many probes a ping of the virtual switch sends at most (a repeat count beyond it is cut to
#: this many: the testbed is shared; IOS takes up to 2147483647).
MAX_REPEAT = 1000


@dataclass
class Probe:
    """One probe's answer: ``kind`` ``!`` (reply), ``.`` (none), ``U`` (unreachable); ``src`` the
    answering address; ``rtt_ms``."""

    kind: str
    src: str | None = None
    rtt_ms: float | None = None


def _options(text: str, allowed: dict[str, int]) -> dict[str, Any]:
    """``KEYWORD VALUE ...`` after the destination (``allowed``: keyword -> number of values;
    ``source`` takes an address or interface). Raises IosError at the first bad token."""
    out: dict[str, Any] = {}
    toks = [(m.group(0), m.start()) for m in re.finditer(r"\S+", text)][2:]  # after COMMAND DEST
    i = 0
    while i < len(toks):
        word, col = toks[i]
        key = next((k for k in allowed if k.startswith(word.lower()) and len(word) >= 2), None)
        n = allowed.get(key or "", 0)
        vals = [t for t, _ in toks[i + 1:i + 1 + n]]
        if key is None or key in out:
            raise IosError(text, col)
        if len(vals) < n:
            raise IosError(text, len(text), "incomplete")
        if key != "source" and not all(v.isdigit() for v in vals):
            raise IosError(text, next(c for t, c in toks[i + 1:i + 1 + n] if not t.isdigit()))
        out[key] = vals[0] if key == "source" else [int(v) for v in vals] if n > 1 else int(vals[0])
        i += 1 + n
    return out


def _ms(x: float) -> int:
    return max(1, math.ceil(x))


def render_ping(dest: str, count: int, size: int, timeout: int, probes: list[Probe], source: str | None,
                no_route: bool = False) -> str:
    """IOS's ping output (see the module doc). Pure."""
    out = ["Type escape sequence to abort.",
           f"Sending {count}, {size}-byte ICMP Echos to {dest}, timeout is {timeout} seconds:"]
    if source:
        out.append(f"Packet sent with a source address of {source}")
    if no_route:
        return "\n".join(out + ["", NO_ROUTE, "Success rate is 0 percent (0/1)"]) + "\n"
    marks = "".join(p.kind for p in probes)
    out += [marks[i:i + 70] for i in range(0, len(marks), 70)]
    got = [p.rtt_ms for p in probes if p.kind == "!" and p.rtt_ms is not None]
    rate = f"Success rate is {100 * len(got) // max(1, count)} percent ({len(got)}/{count})"
    if got:
        rate += f", round-trip min/avg/max = {_ms(min(got))}/{_ms(sum(got) / len(got))}/{_ms(max(got))} ms"
    return "\n".join(out + [rate]) + "\n"


def render_traceroute(dest: str, hops: list[list[Probe]], vrf_info: bool) -> str:
    """IOS's traceroute output: one line per hop (see the module doc). Pure."""
    out = ["Type escape sequence to abort.", f"Tracing the route to {dest}",
           "VRF info: (vrf in name/id, vrf out name/id)" if vrf_info else ""]
    for n, probes in enumerate(hops, 1):
        line, shown = f"{n:>3} ", None
        for p in probes:
            if p.kind == "!" and p.rtt_ms is not None:
                if p.src != shown:
                    line += ("" if line.endswith(" ") else " ") + str(p.src)
                    shown = p.src
                line += f" {round(p.rtt_ms)} msec"
            else:
                line += " * "
        out.append(line)
    return "\n".join(out) + "\n"


_REPLY = re.compile(r"^\d+ bytes from ([\d.]+): icmp_seq=(\d+) ttl=\d+ time=([\d.]+) ms")
_ERROR = re.compile(r"^From ([\d.]+) icmp_seq=(\d+) (Destination \w+ Unreachable|Time to live exceeded)")


def linux_ping(ns: str, dest: str, count: int, payload: int, timeout: float, ttl: int | None = None) -> list[Probe]:
    """Send ``count`` echo requests (``payload`` data bytes) to ``dest`` from namespace ``ns``
    (iputils ``ping``, 0.2 s apart), each waited for ``timeout`` seconds: a Probe per request."""
    cmd = ["ip", "netns", "exec", ns, "ping", "-n", "-c", str(count), "-s", str(payload), "-W",
           str(max(timeout, 0.001)), "-i", "0.2"] + (["-t", str(ttl)] if ttl else []) + [dest]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=count * (timeout + 0.2) + 5)
    probes = {k: Probe(".") for k in range(1, count + 1)}
    for line in p.stdout.splitlines():
        if m := _REPLY.match(line):
            probes[int(m.group(2))] = Probe("!", m.group(1), float(m.group(3)))
        elif m := _ERROR.match(line):
            ttl_hop = m.group(3).startswith("Time")
            probes[int(m.group(2))] = Probe("!" if ttl_hop else "U", m.group(1), None)
    return [probes[k] for k in sorted(probes)]


def _route(sw: Any, dest: str) -> tuple[str | None, str | None]:
    """(namespace, source address) to send from, or (None, None) when nothing may be sent."""
    svi = svi_address(sw.running)
    ip = ipaddress.IPv4Address(dest)
    if not getattr(sw, "apply_enabled", False) or svi is None or svi.ip not in TESTBED_NETWORK \
            or ip not in TESTBED_NETWORK:
        return None, None
    return switch_namespace(sw.topo.name), str(svi.ip)


def ping(sw: Any, text: str, dest: str) -> str:
    """``ping DEST [repeat N] [size S] [timeout T] [source A]`` (see the module doc). Raises
    IosError for a bad option."""
    opts = _options(text, {"repeat": 1, "size": 1, "timeout": 1, "source": 1})
    count, size, timeout = (opts.get(k, PING_OPTIONS[k][0]) for k in ("repeat", "size", "timeout"))
    for k in ("repeat", "size", "timeout"):
        lo, hi = PING_OPTIONS[k][1:]
        if not lo <= opts.get(k, PING_OPTIONS[k][0]) <= hi:
            raise IosError(text, text.rindex(str(opts[k])))
    if not is_ip(dest):
        return UNKNOWN_HOST
    ns, src = _route(sw, dest)
    if ns is None:
        return render_ping(dest, count, size, timeout, [], opts.get("source"), no_route=True)
    probes = linux_ping(ns, dest, min(count, MAX_REPEAT), size - 28, timeout)
    probes += [Probe(".")] * (count - len(probes))
    return render_ping(dest, count, size, timeout, probes, opts.get("source"))


def traceroute(sw: Any, text: str, dest: str, vrf_info: bool) -> str:
    """``traceroute DEST [timeout T] [probe N] [ttl MIN MAX] [source A] [numeric]``: probes with
    TTL MIN..MAX, each hop's probes until the destination answers. Raises IosError for a bad
    option."""
    opts = _options(text, {"timeout": 1, "probe": 1, "ttl": 2, "source": 1, "numeric": 0})
    timeout, count = opts.get("timeout", TRACE_DEFAULTS["timeout"]), opts.get("probe", TRACE_DEFAULTS["probe"])
    lo, hi = opts.get("ttl", TRACE_DEFAULTS["ttl"])
    if not (0 <= lo <= hi <= 255 and 1 <= count <= 65535 and 0 <= timeout <= 3600):
        raise IosError(text, len(text) - 1)
    if not is_ip(dest):
        return UNKNOWN_HOST
    ns, _ = _route(sw, dest)
    hops: list[list[Probe]] = []
    for ttl in range(max(1, lo), hi + 1):
        if ns is None:
            hops.append([Probe(".")] * count)
            break  # no route: IOS gives up at once too
        hop = []
        for _ in range(count):
            t0 = time.monotonic()
            p = linux_ping(ns, dest, 1, 36, timeout, ttl)[0]
            if p.kind == "!" and p.rtt_ms is None:
                p.rtt_ms = (time.monotonic() - t0) * 1000  # a router's time exceeded: the probe's time
            hop.append(p)
        hops.append(hop)
        if any(p.kind == "!" and p.src == dest for p in hop):
            break
    return render_traceroute(dest, hops, vrf_info)
