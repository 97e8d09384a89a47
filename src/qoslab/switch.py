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

from .device import Device
from .errors import QoslabError
from .switchconfig import intended_config, normalized_qos, remediation

#: What IOS prints for a rejected line (Netmiko's error_pattern for send_config_set).
ERROR_PATTERN = r"% ?(Invalid input|Incomplete command|Ambiguous command)"


def connect(dev: Device):
    """Open a Netmiko cisco_ios session in privileged EXEC. Raises QoslabError (auth, host key,
    unreachable) naming the device."""
    from netmiko import ConnectHandler
    from netmiko.exceptions import (
        NetmikoAuthenticationException,
        NetmikoTimeoutException,
    )

    c = dev.credentials()
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
