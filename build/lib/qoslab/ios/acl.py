"""IP access lists as a Catalyst keeps them: entries (:class:`Ace`) with sequence numbers and
remarks in an :class:`AccessList`, and their text as ``show running-config`` and ``show
access-lists`` print it (pure). The entry grammar is :mod:`.aclparse`.

Sources: Catalyst 3750 Software Configuration Guide 12.2(55)SE, "Configuring Network Security with
ACLs" (standard lists 1-99 and 1300-1999, extended 100-199 and 2000-2699, named lists, the entry
keywords); Cisco IOS Security Configuration Guide, "IP Access List Entry Sequence Numbering"
(12.2(14)S and later, IOS-XE): an entry without a number gets 10 more than the last one (the first
10), an entry equal to an existing one but for its number changes nothing, a number already
present is refused with ``% Duplicate sequence number``, ``ip access-list resequence NAME START
STEP`` renumbers, ``no NUMBER`` removes one entry; "sequence numbers are not nvgened" on IOS
12.2 (``show running-config`` of a 3750 prints named-list entries without them, ``show
access-lists`` with them), while IOS-XE 16 and later print them in the running-config too, and
print a numbered list as a section (``ip access-list standard 10`` / `` 10 permit ...``; real
IOS-XE running-configs: tests/data/acl-recordings/ and public IOS-XE router/switch configs; the
Ansible ``cisco.ios`` ACL parser reads both forms).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from .aclnames import ICMP_NAMES, PRECEDENCE_NAMES, PROTOCOL_NAMES, TOS_NAMES, port_text
from .grammar import DSCP_NAMES

ALL_ONES = 0xFFFFFFFF
#: The largest sequence number IOS takes ("IP Access List Entry Sequence Numbering").
MAX_SEQ = 2147483647
#: IOS's replies to a sequence-number conflict (same document).
DUPLICATE_SEQ = "% Duplicate sequence number"
EXCEEDED_SEQ = "% Exceeded maximum sequence number."


@dataclass(frozen=True)
class Addr:
    """An ACE address: ``ip`` and ``wildcard`` as 32-bit integers (a 1 bit is "don't care"); the
    address is kept masked, as IOS shows it (``10.4.4.2 0.0.255.255`` -> ``10.4.0.0``)."""

    ip: int
    wildcard: int

    @classmethod
    def of(cls, ip: str, wildcard: str = "0.0.0.0") -> Addr:
        w = int(ipaddress.IPv4Address(wildcard))
        return cls(int(ipaddress.IPv4Address(ip)) & ~w & ALL_ONES, w)

    @property
    def is_any(self) -> bool:
        return self.wildcard == ALL_ONES

    @property
    def is_host(self) -> bool:
        return self.wildcard == 0

    @property
    def network(self) -> ipaddress.IPv4Network | None:
        """The address as a prefix when its wildcard is contiguous (``0.0.0.255``), else None."""
        inv = self.wildcard + 1
        if inv & (inv - 1):
            return None
        return ipaddress.IPv4Network((self.ip, 32 - inv.bit_length() + 1))

    def text(self) -> str:
        """``any``, ``host A`` or ``A WILDCARD`` (extended entries)."""
        if self.is_any:
            return "any"
        if self.is_host:
            return f"host {ipaddress.IPv4Address(self.ip)}"
        return f"{ipaddress.IPv4Address(self.ip)} {ipaddress.IPv4Address(self.wildcard)}"


ANY = Addr(0, ALL_ONES)


@dataclass(frozen=True)
class Ports:
    """A TCP/UDP port match: ``op`` eq | neq | gt | lt | range; ``lo`` the port (``range``: the
    first), ``hi`` the last of a ``range`` (inclusive, lo <= hi), else None."""

    op: str
    lo: int
    hi: int | None = None

    def text(self, proto: str) -> str:
        if self.op == "range":
            return f"range {port_text(self.lo, proto)} {port_text(self.hi or self.lo, proto)}"
        return f"{self.op} {port_text(self.lo, proto)}"


@dataclass(frozen=True)
class Ace:
    """One access-control entry. ``proto``: ``ip`` (any), a protocol keyword (``tcp``, ``gre``)
    or a protocol number as text; ``dst`` None = an entry of a standard list (source only);
    ``icmp``: (type, code or None); ``log``: ``log`` | ``log-input`` | None; TCP flags: the
    single-flag keywords (each must be set) and ``match-all|match-any +FLAG|-FLAG ...``."""

    action: str
    proto: str
    src: Addr
    dst: Addr | None = None
    sport: Ports | None = None
    dport: Ports | None = None
    icmp: tuple[int, int | None] | None = None
    established: bool = False
    dscp: int | None = None
    precedence: int | None = None
    log: str | None = None
    #: the type of service 0-15 (RFC 1349: the four bits after the precedence), or None
    tos: int | None = None
    #: ``fragments``: the entry matches non-initial fragments only
    fragments: bool = False
    #: TCP flags that must be set (``ack``, ``psh`` ...: the single-flag keywords)
    flags: tuple[str, ...] = ()
    #: ``match-all|match-any`` over signed flags (``("match-all", ("+ack", "-fin"))``), or None
    flag_match: tuple[str, tuple[str, ...]] | None = None

    @property
    def standard(self) -> bool:
        return self.dst is None


def _action(a: Ace, pad: bool) -> str:
    """``permit``; ``deny`` padded to the width of ``permit`` where IOS pads it."""
    return f"{a.action:<6}" if pad else a.action


def ace_text(a: Ace, pad: bool = False) -> str:
    """IOS text of an entry (without sequence number or ``access-list N``); ``pad``: ``deny``
    padded as ``show running-config`` prints it (``deny   ip any any``)."""
    if a.dst is None:
        src = "any" if a.src.is_any else str(ipaddress.IPv4Address(a.src.ip)) if a.src.is_host else \
            f"{ipaddress.IPv4Address(a.src.ip)} {ipaddress.IPv4Address(a.src.wildcard)}"
        return " ".join([_action(a, pad), src] + ([a.log] if a.log else []))
    parts = [_action(a, pad), a.proto, a.src.text()]
    if a.sport:
        parts.append(a.sport.text(a.proto))
    parts.append(a.dst.text())
    if a.dport:
        parts.append(a.dport.text(a.proto))
    if a.icmp is not None:
        parts.append(ICMP_NAMES.get(a.icmp) or " ".join(str(x) for x in a.icmp if x is not None))
    if a.established:
        parts.append("established")
    parts += list(a.flags)
    if a.flag_match is not None:
        parts += [a.flag_match[0], *a.flag_match[1]]
    if a.precedence is not None:
        parts.append(f"precedence {PRECEDENCE_NAMES[a.precedence]}")
    if a.tos is not None:
        parts.append(f"tos {TOS_NAMES.get(a.tos, str(a.tos))}")
    if a.dscp is not None:
        parts.append(f"dscp {DSCP_NAMES.get(a.dscp, str(a.dscp))}")
    if a.fragments:
        parts.append("fragments")
    if a.log:
        parts.append(a.log)
    return " ".join(parts)


def show_text(a: Ace) -> str:
    """An entry as ``show access-lists`` prints it: a standard entry's network as ``A, wildcard
    bits W`` and ``deny`` padded; an extended entry unpadded."""
    if a.dst is None and not a.src.is_any and not a.src.is_host:
        net = f"{ipaddress.IPv4Address(a.src.ip)}, wildcard bits {ipaddress.IPv4Address(a.src.wildcard)}"
        return " ".join([_action(a, True), net] + ([a.log] if a.log else []))
    return ace_text(a, pad=a.dst is None)


def protocol_name(number: int) -> str:
    """How IOS prints protocol ``number`` in an entry: its keyword, else the number."""
    return PROTOCOL_NAMES.get(number, str(number))


@dataclass
class AccessList:
    """An IP access list: ``kind`` standard | extended, ``named`` (``ip access-list ...``; else
    numbered ``access-list N``), entries by sequence number, remarks by the sequence number of
    the entry they precede (a remark typed without a number goes before the next entry)."""

    name: str
    kind: str
    named: bool
    entries: dict[int, Ace] = field(default_factory=dict)
    remarks: dict[int, list[str]] = field(default_factory=dict)

    def aces(self) -> list[Ace]:
        """The entries in sequence order (the order IOS evaluates them)."""
        return [self.entries[s] for s in sorted(self.entries)]

    def next_seq(self) -> int:
        """The number an entry typed without one gets: 10 more than the last (the first: 10)."""
        return max(self.entries, default=0) + 10

    def add(self, ace: Ace, seq: int | None = None) -> str | None:
        """Add ``ace`` (at ``seq`` or the next number). Returns IOS's error text, or None: a number
        already present is refused, even for the same entry (re-pasting a numbered list gives
        ``% Duplicate sequence number`` on IOS); otherwise an entry equal to an existing one (but
        for its number) changes nothing."""
        if seq is not None and seq in self.entries:
            return DUPLICATE_SEQ
        if ace in self.entries.values():
            return None
        if seq is None:
            seq = self.next_seq()
            if seq > MAX_SEQ:
                return EXCEEDED_SEQ
        self.entries[seq] = ace
        return None

    def remove(self, seq: int) -> None:
        """``no SEQ``: the entry and its remarks go (nothing happens for a number not present)."""
        self.entries.pop(seq, None)
        self.remarks.pop(seq, None)

    def remove_ace(self, ace: Ace) -> None:
        """``no ENTRY``: the equal entry goes, with its remarks."""
        for s, a in list(self.entries.items()):
            if a == ace:
                self.remove(s)

    def add_remark(self, text: str, seq: int | None = None) -> None:
        at = self.remarks.setdefault(self.next_seq() if seq is None else seq, [])
        if text not in at:
            at.append(text)

    def remove_remarks(self, seq: int | None) -> None:
        """``no [SEQ] remark``: the remarks before entry SEQ, or every remark of the list."""
        if seq is None:
            self.remarks.clear()
        else:
            self.remarks.pop(seq, None)

    def remove_remark(self, text: str) -> None:
        for s in list(self.remarks):
            self.remarks[s] = [r for r in self.remarks[s] if r != text]
            if not self.remarks[s]:
                del self.remarks[s]

    def resequence(self, start: int, step: int) -> None:
        """``ip access-list resequence NAME START STEP``: entries renumbered START, START+STEP ...
        in their order; a remark goes with the entry it precedes (one after the last entry
        stays after it)."""
        old = sorted(self.entries)
        new = {s: start + i * step for i, s in enumerate(old)}
        after = start + len(old) * step
        self.entries = {new[s]: a for s, a in self.entries.items()}
        remarks: dict[int, list[str]] = {}
        for k in sorted(self.remarks):
            to = next((new[s] for s in old if s >= k), after)
            remarks.setdefault(to, []).extend(r for r in self.remarks[k] if r not in remarks.get(to, []))
        self.remarks = remarks

    def config_lines(self, seqs: bool) -> list[str]:
        """The list as ``show running-config`` prints it. ``seqs`` (IOS-XE 16 and later): every
        list as ``ip access-list standard|extended NAME`` with numbered entries, numbered lists
        too; else (IOS 12.2) named lists without numbers and numbered lists as ``access-list N``
        lines."""
        section = self.named or seqs
        out = [f"ip access-list {self.kind} {self.name}"] if section else []
        for s in sorted(set(self.entries) | set(self.remarks)):
            pre = f" {s} " if seqs else " " if section else f"access-list {self.name} "
            out += [f"{pre}remark {r}" for r in self.remarks.get(s, [])]
            if s in self.entries:
                out.append(pre + ace_text(self.entries[s], pad=True))
        return out

    def show_header(self) -> str:
        """``Standard IP access list NAME`` / ``Extended IP access list NAME``."""
        return f"{self.kind.capitalize()} IP access list {self.name}"

    def show_entries(self) -> list[tuple[int, str]]:
        """(sequence number, text) of each entry as ``show access-lists`` prints them (no remarks)."""
        return [(s, show_text(self.entries[s])) for s in sorted(self.entries)]


def numbered_kind(name: str) -> str | None:
    """``standard`` for 1-99 and 1300-1999, ``extended`` for 100-199 and 2000-2699 (the IP
    ranges of ``access-list``), else None."""
    if not name.isdigit():
        return None
    n = int(name)
    if 1 <= n <= 99 or 1300 <= n <= 1999:
        return "standard"
    if 100 <= n <= 199 or 2000 <= n <= 2699:
        return "extended"
    return None
