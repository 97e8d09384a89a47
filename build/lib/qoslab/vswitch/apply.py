"""Applying a compiled tc plan, nftables ruleset and the SVI address to the switch namespace."""

from __future__ import annotations

import ipaddress
import re
import subprocess

from ..errors import QoslabError
from ..topology import TESTBED_NETWORK
from .nftcompile import NftPlan
from .tccompile import TcPlan


def apply_plan(plan: TcPlan, ns: str, devs: list[str]) -> None:
    """Replace the qdiscs of ``devs`` in namespace ``ns`` by the plan's. Raises QoslabError naming
    the failing tc line."""
    reset = "".join(f"qdisc del dev {d} root\nqdisc del dev {d} clsact\n" for d in devs)
    subprocess.run(["tc", "-n", ns, "-force", "-batch", "-"], input=reset, capture_output=True, text=True)
    lines = [l for d in devs for l in plan.ports.get(d, [])]
    p = subprocess.run(["tc", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        m = re.search(r"Command failed -:(\d+)", p.stderr)
        bad = lines[int(m.group(1)) - 1] if m else "?"
        first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else "no error output"
        raise QoslabError(f"tc in {ns} failed on `{bad}`: {first}")


def apply_nft(plan: NftPlan, ns: str) -> None:
    """Replace table ``bridge qoslab`` in namespace ``ns`` by the plan's, in one nft transaction
    (the old table stays when the new one is refused). Raises QoslabError naming the failing
    ruleset line."""
    try:
        p = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=plan.text, capture_output=True,
                           text=True)
    except FileNotFoundError:
        raise QoslabError("ip (iproute2) is not installed") from None
    if p.returncode != 0:
        m = re.search(r":(\d+):\d+-\d+: Error: (.*)", p.stderr)
        lines = plan.text.splitlines()
        where = f"`{lines[int(m.group(1)) - 1].strip()}`: {m.group(2)}" if m and int(m.group(1)) <= len(lines) \
            else (p.stderr.strip().splitlines() or ["no error output (is nftables installed? make setup)"])[0]
        raise QoslabError(f"nft in {ns} failed on {where}")


def apply_svi(ns: str, bridge: str, addr: ipaddress.IPv4Interface | None) -> None:
    """Give the switch namespace's bridge the SVI's address (``interface Vlan1`` / ``ip address``):
    the source of the switch's ping and traceroute; None removes it. Raises QoslabError for an
    address outside the testbed's 198.18.0.0/15 (not applied: the testbed sends nothing else)."""
    if addr is not None and addr.ip not in TESTBED_NETWORK:
        raise QoslabError(f"interface Vlan1 address {addr} is outside the testbed's {TESTBED_NETWORK}: not applied")
    cmds = [["ip", "-n", ns, "addr", "flush", "dev", bridge]]
    if addr is not None:
        cmds.append(["ip", "-n", ns, "addr", "add", str(addr), "dev", bridge])
    for cmd in cmds:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise QoslabError(f"`{' '.join(cmd)}` failed: {p.stderr.strip()[:160]}")
