"""Push QoS profiles to a Catalyst 3750 (real, or the virtual one on the embedded testbed) with
Netmiko ``cisco_ios``.

A push: connect (host key checked against a known_hosts file), ``enable``, back up the
running-config to a file, build the intended config (the running-config with its QoS lines
replaced by the profile's), compute the remediation with hier-config, send only that
(``cmd_verify`` on, IOS errors detected), verify with ``show running-config`` that the QoS part
equals the intended one, ``write memory``. On any failure (IOS ``% Invalid input``, a dropped
connection, a timeout, a failed verification) the backup is restored the same way and the
error names the failing line. A re-push of the same profile sends nothing.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .errors import QoslabError
from .topology import Topology

ERROR_PATTERN = r"% ?(Invalid input|Incomplete command|Ambiguous command)"
#: Global config lines that belong to QoS (and SPAN, which qoslab manages with the profile).
_QOS_GLOBAL = re.compile(r"^(mls qos\b|access-list 1\d\d\b|monitor session\b)")
_QOS_SECTIONS = re.compile(r"^(class-map\b|policy-map\b|ip access-list extended\b)")
_QOS_IF_LINES = re.compile(r"^(mls qos trust\b|service-policy\b|srr-queue\b|priority-queue\b|queue-set\b)")


class Device(BaseModel):
    """How to reach a switch. ``credentials_file``: JSON {username, password, secret}, mode 0600
    (or the environment: QOSLAB_SWITCH_USERNAME / _PASSWORD / _SECRET); ``known_hosts``: file
    with the switch's host key (checked; an unknown key refuses the connection)."""

    model_config = ConfigDict(extra="forbid")
    host: str
    port: int = Field(22, ge=1, le=65535)
    credentials_file: Path | None = None
    known_hosts: Path
    timeout_s: float = 20.0


def testbed_device(topology: Topology) -> Device:
    """The virtual Catalyst of an embedded testbed (its credentials and host key in /run/qoslab)."""
    from .vswitch import known_hosts_line, state_dir

    d = state_dir(topology.name)
    mg = topology.switch.management
    kh = d / "known_hosts"
    if not (d / "ssh_host_key.pub").exists():
        raise QoslabError(f"the virtual switch of {topology.name} is not running (run `qoslab testbed up`)")
    kh.write_text(known_hosts_line(d, mg.host, mg.port))
    return Device(host=mg.host, port=mg.port, credentials_file=d / "credentials", known_hosts=kh)


testbed_device.__test__ = False  # a helper, not a pytest test


def _credentials(dev: Device):
    import os

    from .vswitch import Credentials

    env = [os.environ.get(f"QOSLAB_SWITCH_{k}") for k in ("USERNAME", "PASSWORD", "SECRET")]
    if all(env):
        return Credentials(*env)
    if dev.credentials_file is None:
        raise QoslabError("no switch credentials: set QOSLAB_SWITCH_USERNAME/_PASSWORD/_SECRET or credentials_file")
    return Credentials.load(dev.credentials_file)


def connect(dev: Device):
    """Open a Netmiko cisco_ios session in privileged EXEC. Raises QoslabError (auth, host key,
    unreachable) naming the device."""
    from netmiko import ConnectHandler
    from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException

    c = _credentials(dev)
    try:
        conn = ConnectHandler(device_type="cisco_ios", host=dev.host, port=dev.port, username=c.username,
                              password=c.password, secret=c.secret, ssh_strict=True, system_host_keys=False,
                              alt_host_keys=True, alt_key_file=str(dev.known_hosts), timeout=dev.timeout_s,
                              conn_timeout=dev.timeout_s, auth_timeout=dev.timeout_s, allow_agent=False,
                              use_keys=False, read_timeout_override=dev.timeout_s)
        conn.enable()
    except NetmikoAuthenticationException:
        raise QoslabError(f"switch {dev.host}:{dev.port}: authentication failed") from None
    except NetmikoTimeoutException as e:
        m = re.search(r"Host key for server .* does not match[^\n]*", str(e))
        if m:
            raise QoslabError(f"switch {dev.host}:{dev.port}: REFUSED, host key not the one in {dev.known_hosts} "
                              f"({m.group(0)[:120]})") from None
        raise QoslabError(f"switch {dev.host}:{dev.port}: unreachable ({str(e).strip()[:200]})") from None
    except Exception as e:  # paramiko host key errors and the like
        raise QoslabError(f"switch {dev.host}:{dev.port}: cannot connect: {type(e).__name__}: {e}") from None
    return conn


def split_qos(config_text: str) -> tuple[list[str], list[str]]:
    """Split a running-config text into (non-QoS lines, QoS lines), both with their indentation.
    Interface headers go to both sides so their QoS children keep their context. Pure."""
    other, qos = [], []
    section: str | None = None  # "qos" | "if" | "other"
    for raw in config_text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.startswith(("Building configuration", "Current configuration")):
            continue
        if not line.startswith(" "):
            if _QOS_SECTIONS.match(line):
                section = "qos"
                qos.append(line)
            elif line.startswith("interface "):
                section = "if"
                other.append(line)
                qos.append(line)
            else:
                section = "other"
                (qos if _QOS_GLOBAL.match(line) else other).append(line)
            continue
        if section == "qos":
            qos.append(line)
        elif section == "if" and _QOS_IF_LINES.match(line.strip()):
            qos.append(line)
        else:
            other.append(line)
    # drop interface headers without QoS children from the QoS side
    out, i = [], 0
    while i < len(qos):
        if qos[i].startswith("interface ") and (i + 1 == len(qos) or not qos[i + 1].startswith(" ")):
            i += 1
            continue
        out.append(qos[i])
        i += 1
    return other, out


def normalized_qos(config_text: str) -> list[str]:
    """The QoS part of a config as a sorted list of path strings (``policy-map p / class c / set ip
    dscp 40``), for comparing a device's state with the intended one regardless of order and
    indentation width. Pure."""
    _, qos = split_qos(config_text)
    out: set[str] = set()
    stack: list[tuple[int, str]] = []
    for l in qos:
        indent = len(l) - len(l.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = " / ".join([t for _, t in stack] + [l.strip()])
        stack.append((indent, l.strip()))
        if not (indent == 0 and l.startswith("interface ")):
            out.add(path)
    return sorted(out)


def intended_config(running_text: str, profile_lines: list[str]) -> str:
    """The running-config with its QoS lines replaced by the profile's (text). Pure."""
    other, _ = split_qos(running_text)
    other = [l for l in other if l.strip() != "end"]
    # the profile's lines by section; interface children go into the existing interface sections
    extra: dict[str, list[str]] = {}
    tail: list[str] = []
    header = None
    for l in profile_lines:
        if not l.startswith(" "):
            header = l if l.startswith("interface ") else None
            if header is None:
                tail.append(l)
            else:
                extra.setdefault(header, [])
        elif header is not None:
            extra[header].append(" " + l.strip())
        else:
            tail.append(l)
    out = []
    for l in other:
        out.append(l)
        if l in extra:
            out += extra.pop(l)
    for h, children in extra.items():  # interfaces the running-config did not show
        out += [h] + children
    return "\n".join(out + tail) + "\n"


def remediation(running_text: str, intended_text: str) -> list[str]:
    """Config lines that turn the running config into the intended one (hier-config, IOS rules)."""
    from hier_config import Platform, WorkflowRemediation, get_hconfig

    run = get_hconfig(Platform.CISCO_IOS, _for_hier(running_text))
    want = get_hconfig(Platform.CISCO_IOS, _for_hier(intended_text))
    return order_for_ios(list(WorkflowRemediation(run, want).remediation_config.dump_simple()))


_PRIORITY = [("mls qos", 0), ("access-list", 1), ("ip access-list", 1), ("class-map", 2), ("policy-map", 3),
             ("interface", 4), ("monitor session", 5)]


def _prio(header: str) -> int:
    h = header.removeprefix("no ").strip()
    return next((p for k, p in _PRIORITY if h.startswith(k)), 6)


def order_for_ios(lines: list[str]) -> list[str]:
    """Order remediation blocks so every reference exists when it is made and is gone before its
    target is removed: interface blocks that only remove come first, then additions in dependency
    order (mls qos, ACLs, class-maps, policy-maps, interfaces, monitor sessions), then removals of
    global objects in reverse order. Pure."""
    blocks: list[list[str]] = []
    for l in lines:
        if l.startswith(" ") and blocks:
            blocks[-1].append(l)
        else:
            blocks.append([l])
    first = [b for b in blocks if b[0].startswith("interface ") and all(c.strip().startswith("no ") for c in b[1:])]
    adds = [b for b in blocks if b not in first and not b[0].startswith("no ")]
    removes = [b for b in blocks if b[0].startswith("no ")]
    adds.sort(key=lambda b: _prio(b[0]))
    removes.sort(key=lambda b: -_prio(b[0]))
    # a removal whose command is the prefix of an added line is a replacement: remove first, or it
    # would also remove the new line (e.g. a SPAN destination gaining "encapsulation replicate")
    replaced = [b for b in removes if len(b) == 1 and any(a[0].startswith(b[0][3:] + " ") for a in adds)]
    removes = [b for b in removes if b not in replaced]
    return [l for b in first + replaced + adds + removes for l in b]


def _for_hier(text: str) -> str:
    return "\n".join(l for l in text.splitlines()
                     if l.strip() and not l.startswith(("Building configuration", "Current configuration", "end")))


@dataclass
class PushReport:
    """Outcome of a push: lines sent, whether anything changed, seconds per phase, backup file."""

    profile: str
    changed: bool
    lines_sent: list[str]
    backup: Path | None
    seconds: dict[str, float] = field(default_factory=dict)


class PushError(QoslabError):
    """A push failed and was rolled back (``rolled_back``) or could not be (the message says so)."""

    def __init__(self, msg: str, rolled_back: bool):
        super().__init__(msg)
        self.rolled_back = rolled_back


def _send(conn, lines: list[str]) -> None:
    """Send config lines; raises PushError-free QoslabError naming the first rejected line."""
    from netmiko.exceptions import ConfigInvalidException

    try:
        conn.send_config_set(lines, error_pattern=ERROR_PATTERN, cmd_verify=True)
    except ConfigInvalidException as e:
        text = str(e)
        m = re.search(r"at command: (.+), matched error: (.+)$", text)
        if m:
            raise QoslabError(f"the switch rejected `{m.group(1).strip()}`: {m.group(2).strip()}") from None
        raise QoslabError(f"the switch rejected a line: {text.strip().splitlines()[-1]}") from None


def push(profile_lines: list[str], dev: Device, out_dir: Path, profile_name: str = "profile",
         inject_after: int | None = None) -> PushReport:
    """Push ``profile_lines`` (rendered IOS) to ``dev``. See the module doc. ``inject_after``
    (tests only) drops the connection after that many remediation lines.

    Raises PushError (rolled back or not) or QoslabError (cannot connect)."""
    t = {"start": time.monotonic()}
    out_dir.mkdir(parents=True, exist_ok=True)
    conn = connect(dev)
    t["connect"] = time.monotonic()
    backup_text = conn.send_command("show running-config")
    backup = out_dir / f"running-config-backup-{time.strftime('%Y%m%dT%H%M%S')}-{profile_name}.txt"
    backup.write_text(backup_text)
    want = intended_config(backup_text, profile_lines)
    lines = remediation(backup_text, want)
    t["diff"] = time.monotonic()
    if not lines:
        conn.disconnect()
        return PushReport(profile_name, False, [], backup, _phases(t))
    try:
        if inject_after is not None:
            _send(conn, lines[:inject_after])
            conn.disconnect()
            raise QoslabError(f"connection dropped after {inject_after} lines (injected)")
        _send(conn, lines)
        t["send"] = time.monotonic()
        now = conn.send_command("show running-config")
        if normalized_qos(now) != normalized_qos(want):
            missing = sorted(set(normalized_qos(want)) - set(normalized_qos(now)))[:3]
            extra = sorted(set(normalized_qos(now)) - set(normalized_qos(want)))[:3]
            raise QoslabError(f"verification failed: missing {missing}, unexpected {extra}")
        t["verify"] = time.monotonic()
        conn.save_config()
        t["save"] = time.monotonic()
        conn.disconnect()
        return PushReport(profile_name, True, lines, backup, _phases(t))
    except Exception as e:
        msg = str(e) if isinstance(e, QoslabError) else f"{type(e).__name__}: {e}"
        try:
            conn.disconnect()
        except Exception:
            pass
        try:
            restore(backup_text, dev)
        except Exception as r:
            raise PushError(f"push of {profile_name} failed ({msg}) and ROLLBACK FAILED ({r}); backup in {backup}",
                            False) from None
        raise PushError(f"push of {profile_name} failed: {msg}; rolled back to {backup.name}", True) from None


def restore(backup_text: str, dev: Device) -> None:
    """Make the device's running-config equal the backup again (QoS part verified)."""
    conn = connect(dev)
    try:
        now = conn.send_command("show running-config")
        lines = remediation(now, backup_text)
        if lines:
            _send(conn, lines)
        after = conn.send_command("show running-config")
        if normalized_qos(after) != normalized_qos(backup_text):
            raise QoslabError("the restored running-config differs from the backup")
    finally:
        conn.disconnect()


def _phases(t: dict[str, float]) -> dict[str, float]:
    keys = list(t)
    return {k: round(t[k] - t[keys[i - 1]], 3) for i, k in enumerate(keys) if i} | \
        {"total": round(t[keys[-1]] - t["start"], 3)}
