"""Show output that IOS 12.2 and IOS-XE print alike, as pure functions: ``show privilege``,
``show hosts``, ``show memory statistics``, ``show monitor [session N]`` (local SPAN sessions),
``show [ip] access-lists [NAME]``, ``show startup-config``, and IOS's short interface names.

Formats: Catalyst 3750 Command Reference 12.2(55)SE and Cisco IOS Configuration Fundamentals
Command Reference 12.2 (the same on IOS-XE 17.x for these commands); samples and sources in
tests/data/ios-samples/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def render_privilege(level: int) -> str:
    """``show privilege``."""
    return f"Current privilege level is {level}\n"


def short_name(name: str) -> str:
    """``GigabitEthernet1/0/1`` -> ``Gi1/0/1`` (``Fa``, ``Te`` likewise), as IOS lists ports in tables."""
    return name.replace("GigabitEthernet", "Gi").replace("FastEthernet", "Fa").replace("TenGigabitEthernet", "Te")


def render_hosts() -> str:
    """``show hosts`` of a switch without ``ip domain-name`` and name servers."""
    return ("Default domain is not set\nName/address lookup uses domain service\n"
            "Name servers are 255.255.255.255\n\nCodes: UN - unknown, EX - expired, OK - OK, ?? - revalidate\n"
            "       temp - temporary, perm - permanent\n       NA - Not Applicable None - Not defined\n\n"
            "Host                      Port  Flags      Age Type   Address(es)\n")


def render_memory_statistics(total: int, used: int) -> str:
    """``show memory statistics`` (processor pool, bytes)."""
    free = total - used
    return ("                Head    Total(b)     Used(b)     Free(b)   Lowest(b)  Largest(b)\n"
            f"Processor    2A5BC2C {total:11d} {used:11d} {free:11d} {free:11d} {free:11d}\n"
            "      I/O    6800000    12582920     4855540     7727380     7637260     7701436\n\n")


@dataclass
class MonitorSession:
    """One local SPAN session: source ports per direction (short names), destination ports and
    their encapsulation (``replicate``, ``dot1q`` or None: native)."""

    number: int
    both: list[str] = field(default_factory=list)
    rx: list[str] = field(default_factory=list)
    tx: list[str] = field(default_factory=list)
    destinations: list[str] = field(default_factory=list)
    encapsulation: str | None = None


def port_list(ports: list[str]) -> str:
    """IOS port list: ``Gi1/0/1-3,Gi1/0/5`` (consecutive ports of a module as a range)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1].rsplit('/', 1)[1]}")
            run.clear()

    for p in ports:
        if run and p.rsplit("/", 1)[0] == run[-1].rsplit("/", 1)[0] \
                and p.rsplit("/", 1)[1].isdigit() and int(p.rsplit("/", 1)[1]) == int(run[-1].rsplit("/", 1)[1]) + 1:
            run.append(p)
        else:
            flush()
            run.append(p)
    flush()
    return ",".join(out)


def render_monitor(sessions: list[MonitorSession]) -> str:
    """``show monitor [session N]`` of local SPAN sessions (the 3750's format: type, source ports
    by direction, destination ports with their encapsulation and ingress setting)."""
    blocks = []
    for s in sessions:
        out = [f"Session {s.number}", "---------", "Type                   : Local Session"]
        srcs = [(label, ps) for label, ps in (("Both", s.both), ("RX Only", s.rx), ("TX Only", s.tx)) if ps]
        if srcs:
            out.append("Source Ports           :")
            out += [f"    {label:<19}: {port_list(ps)}" for label, ps in srcs]
        if s.destinations:
            enc = {"replicate": "Replicate", "dot1q": "DOT1Q"}.get(s.encapsulation or "", "Native")
            out += [f"Destination Ports      : {port_list(s.destinations)}", f"    Encapsulation      : {enc}",
                    "          Ingress      : Disabled"]
        blocks.append("\n".join(out) + "\n")
    return "\n".join(blocks) + ("\n" if blocks else "")


def render_access_lists(acls: dict[str, list[str]], name: str | None = None, ip_only: bool = False,
                        matches: dict[tuple[str, int], int] | None = None) -> str | None:
    """``show [ip] access-lists [NAME]``: ``acls`` = {name: [ACE text]}; sequence numbers 10, 20 ...;
    ``matches[(name, seq)]`` adds ``(N matches)``. None when NAME is not an ACL."""
    if name is not None and name not in acls:
        return None
    matches = matches or {}
    out = []
    for n, aces in acls.items():
        if name is not None and n != name:
            continue
        out.append(f"Extended IP access list {n}")
        for i, a in enumerate(aces, 1):
            m = matches.get((n, 10 * i))
            out.append(f"    {10 * i} {a}" + (f" ({m} matches)" if m else ""))
    return "\n".join(out) + ("\n" if out else "")


#: NVRAM of a WS-C3750G-24T (``show version``: 512K bytes of flash-simulated NVRAM).
NVRAM_BYTES = 524288


def render_startup(saved: str, nvram_bytes: int = NVRAM_BYTES) -> str:
    """``show startup-config``: ``Using N out of NVRAM bytes`` and the saved configuration (as
    NVRAM holds it: without ``show running-config``'s ``Building configuration...`` and ``Current
    configuration`` lines)."""
    lines = saved.split("\n")
    while lines and (not lines[0].strip() or lines[0].startswith(("Building configuration", "Current configuration"))):
        lines.pop(0)
    body = "\n".join(lines)
    return f"Using {len(body.encode())} out of {nvram_bytes} bytes\n" + body
