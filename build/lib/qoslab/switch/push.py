"""Push QoS profiles to a switch (real, or the virtual one on the embedded testbed) with Netmiko,
the platform's device type (``cisco_ios``, ``cisco_xe``, ``arista_eos``).

A push: refuse profile lines that are not QoS configuration, connect (host key checked against a
known_hosts file), ``enable``, back up the running-config to a file (mode 0600: a real switch's
holds secret hashes), build the intended config (the running-config with the QoS items qoslab
made replaced by the profile's, and the record of what it made: :mod:`.ownership`; a change to
anything qoslab did not make is refused here, nothing sent), compute the remediation with
hier-config and check it against the same ownership, send only that (``cmd_verify`` on, IOS
errors detected), verify with ``show running-config`` that the *whole* config equals the intended
one (so a line that is not QoS cannot slip in), ``write memory``. A re-push of the same profile
sends nothing.

Atomicity: whatever interrupts a push once a line may have been sent (an IOS error, a dropped
connection, a timeout, a failed verification, Ctrl-C or SIGTERM as KeyboardInterrupt, a trial
timeout) the backup is restored the same way, with Ctrl-C/SIGTERM/SIGALRM held back until the
rollback is over, so the running-config ends equal to the backup or to the target. Errors before
anything was sent (connect, backup, diff) are raised as QoslabError; the connection is always
closed. An interrupt is re-raised after the rollback; an error becomes PushError.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..ios.configdiff import normalized_config, remediation
from ..ios.qoswalk import QosRules, non_qos_lines
from ..platforms.base import get_platform
from .batch import send_batch, write_and_read
from .device import Device
from .legacyssh import netmiko_class, quiet_paramiko
from .ownership import OwnershipError, Plan, plan

#: What IOS prints for a rejected line (Netmiko's error_pattern for send_config_set): the parser's
#: errors, a taken sequence number, and the reference checks of qoslab.ios.refs.
ERROR_PATTERN = (r"% ?(Invalid input|Incomplete command|Ambiguous command|Duplicate sequence number"
                 r"|Exceeded maximum sequence number)|(Policy map|Class-map) \S+ is being used"
                 r"|% class-map \S+ not configured")


def connect(dev: Device):
    """Open a Netmiko session (the device's platform's device type: ``cisco_ios``, ``cisco_xe``) in
    privileged EXEC, offering the device's SSH profile's
    algorithms (:mod:`.legacyssh`). Raises QoslabError (auth, host key, unreachable) naming the
    device."""
    from netmiko.exceptions import (
        NetmikoAuthenticationException,
        NetmikoTimeoutException,
    )

    if (problem := dev.file_problem()) is not None:
        raise QoslabError(f"switch {dev.host}:{dev.port}: {problem[0]}: {problem[1]}")
    c = dev.credentials()
    quiet_paramiko()
    try:
        cls = netmiko_class(dev.ssh_profile)
        conn = cls(device_type=get_platform(dev.platform).netmiko_device_type, host=dev.host, port=dev.port,
                   username=c.username, password=c.password,
                   secret=c.secret, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                   alt_key_file=str(dev.known_hosts), timeout=dev.timeout_s, conn_timeout=dev.timeout_s,
                   auth_timeout=dev.timeout_s, allow_agent=False, use_keys=False,
                   read_timeout_override=dev.timeout_s)
        conn.enable()
    except NetmikoAuthenticationException:
        raise QoslabError(f"switch {dev.host}:{dev.port}: authentication failed") from None
    except NetmikoTimeoutException as e:
        m = re.search(r"Host key for server .* does not match[^\n]*", str(e))
        if "Incompatible ssh peer" in str(e):
            raise QoslabError(f"switch {dev.host}:{dev.port}: no SSH algorithm in common with ssh_profile "
                              f"{dev.ssh_profile} ({str(e).strip().splitlines()[-1][:120]}); a 3750 on 12.2(55)SE "
                              "needs ssh_profile: c3750") from None
        if m:
            raise QoslabError(f"switch {dev.host}:{dev.port}: REFUSED, host key not the one in {dev.known_hosts} "
                              f"({m.group(0)[:120]})") from None
        if "not found in known_hosts" in str(e):
            raise _unknown_key(dev) from None
        raise QoslabError(f"switch {dev.host}:{dev.port}: unreachable ({netmiko_cause(str(e))})") from None
    except Exception as e:  # paramiko host key errors and the like
        if "not found in known_hosts" in str(e):
            raise _unknown_key(dev) from None
        raise QoslabError(f"switch {dev.host}:{dev.port}: cannot connect: {type(e).__name__}: "
                          f"{netmiko_cause(str(e))}") from None
    return conn


def _unknown_key(dev: Device) -> QoslabError:
    return QoslabError(f"switch {dev.host}:{dev.port}: REFUSED, its host key is not in {dev.known_hosts} (an unknown "
                       "switch: pin its key there first)")


#: Lines of Netmiko's connection errors that explain nothing of this failure (its advice list
#: and the device settings, which the message names already).
_NETMIKO_BOILERPLATE = re.compile(r"^(Common causes|\d+\. |Device settings:)")


def netmiko_cause(text: str, limit: int = 160) -> str:
    """Netmiko's (or paramiko's) multi-line error text as one short line: its first lines of
    substance (``TCP connection to device failed.``), the advice list and device settings left
    out, clipped to ``limit`` characters. Pure."""
    lines = [x.strip().rstrip(".") for x in text.splitlines() if x.strip()]
    kept = [x for x in lines if not _NETMIKO_BOILERPLATE.match(x)] or lines[:1]
    out = "; ".join(kept) or "no reason given"
    return out if len(out) <= limit else out[: limit - 3] + "..."


@dataclass
class PushReport:
    """Outcome of a push: lines sent, whether anything changed, seconds per phase, backup file,
    the items the switch's record lists after it (:mod:`.ownership`; ``QOSLAB-*`` objects are
    qoslab's by name, not listed) and those ``adopt`` took over."""

    profile: str
    changed: bool
    lines_sent: list[str]
    backup: Path | None
    seconds: dict[str, float] = field(default_factory=dict)
    recorded: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)


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


def _send_batch(conn: Any, lines: list[str], timeout_s: float) -> None:
    """Send ``configure terminal``, the config lines and ``end`` in one write and read until one
    configuration prompt per line and then the privileged prompt have come back: one round trip
    instead of one per line (Netmiko's ``cmd_verify``) and none for entering and leaving config
    mode. Raises QoslabError naming the first line IOS rejected (the lines after it were sent too:
    the caller rolls back either way) or TimeoutError."""
    base = str(conn.base_prompt)
    prompt = re.compile(re.escape(base) + r"\([^)\s]*\)#")
    buf = write_and_read(conn, "configure terminal\n" + "".join(line + "\n" for line in lines) + "end\n",
                         lambda b: len(prompt.findall(b)) >= len(lines) + 1 and b.rstrip().endswith(base + "#"),
                         lambda b: f"{len(lines)} config lines: {len(prompt.findall(b))} prompts", timeout_s)
    for line, piece in zip(lines, prompt.split(buf)[1:], strict=False):  # [0]: configure terminal's banner
        m = re.search(ERROR_PATTERN, piece, flags=re.M)
        if m:
            raise QoslabError(f"the switch rejected `{line.strip()}`: {m.group(0).strip()}")


def push(profile_lines: list[str], dev: Device, out_dir: Path, profile_name: str = "profile",
         inject_after: int | None = None, conn: Any = None, batch: bool = False, adopt: bool = False) -> PushReport:
    """Push ``profile_lines`` (rendered for the device's platform) to ``dev``. See the module doc.
    ``inject_after`` (tests only) drops the connection after that many remediation lines.
    ``conn``: an open privileged session to use (a kept one, which saves a login), left open when
    the push succeeds and closed when it fails; without it the push logs in and out itself.
    ``batch``: send the remediation in one write (:func:`_send_batch`; the virtual switch).
    ``adopt``: record the profile's items the switch already has, identical, as qoslab's (a switch
    an earlier qoslab configured, before the record existed).

    Raises PushError (rolled back or not), QoslabError (refused lines; a change to configuration
    qoslab did not make; cannot connect, back up or diff: nothing was sent), or re-raises
    KeyboardInterrupt and other BaseExceptions after the rollback."""
    plat = get_platform(dev.platform)
    bad = non_qos_lines(profile_lines, plat.qos_rules)
    if bad:
        raise QoslabError(f"refusing to push {profile_name}: {bad[0]!r} is not a QoS configuration line")
    t = {"start": time.monotonic()}
    out_dir.mkdir(parents=True, exist_ok=True)
    kept = conn
    backup_text, backup, sent = "", None, False
    try:
        conn = kept if kept is not None else connect(dev)
        t["connect"] = time.monotonic()
        backup_text = _show_run(conn, batch, dev.timeout_s)
        backup = _write_backup(out_dir, profile_name, backup_text)
        pl, lines = _plan(backup_text, profile_lines, plat.qos_rules, profile_name, adopt)
        want = pl.intended
        t["diff"] = time.monotonic()
        if not lines:
            return PushReport(profile_name, False, [], backup, _phases(t), sorted(pl.record), sorted(pl.adopted))
        sent = True  # from here on a line may have reached the switch
        if inject_after is not None:
            _send(conn, lines[:inject_after])
            _close(conn)
            raise QoslabError(f"connection dropped after {inject_after} lines (injected)")
        if batch:
            _send_batch(conn, lines, dev.timeout_s)
        else:
            _send(conn, lines)
        t["send"] = time.monotonic()
        _verify(conn, want, batch=batch, timeout_s=dev.timeout_s)
        t["verify"] = time.monotonic()
        _save(conn, batch, dev.timeout_s)
        t["save"] = time.monotonic()
        return PushReport(profile_name, True, lines, backup, _phases(t), sorted(pl.record), sorted(pl.adopted))
    except BaseException as e:
        _close(conn)
        conn = None
        if not sent:
            if isinstance(e, QoslabError) or not isinstance(e, Exception):
                raise
            raise QoslabError(f"push of {profile_name} failed before anything was sent: "
                              f"{type(e).__name__}: {e}") from None
        _roll_back(e, backup_text, backup, dev, profile_name)
        raise  # unreachable: _roll_back always raises
    finally:
        if kept is None:
            _close(conn)


def _plan(running: str, profile_lines: list[str], rules: QosRules, profile_name: str,
          adopt: bool) -> tuple[Plan, list[str]]:
    """The push's plan and remediation (:mod:`.ownership`, :func:`.configdiff.remediation`), the
    remediation checked against what qoslab owns. Raises QoslabError when it would change
    anything else (nothing has been sent)."""
    try:
        pl = plan(running, profile_lines, rules, adopt)
        lines = pl.record_first(remediation(running, pl.intended, rules.hier_platform, rules.negations))
        pl.check(lines, rules)
    except OwnershipError as e:
        raise QoslabError(f"refusing to push {profile_name}: {e}") from None
    return pl, lines


def _roll_back(e: BaseException, backup_text: str, backup: Path | None, dev: Device, profile_name: str) -> None:
    """Restore ``backup_text`` after ``e`` interrupted a push (interrupts held back meanwhile);
    re-raise ``e`` when it is not an Exception, else raise PushError."""
    msg = str(e) if isinstance(e, QoslabError) else f"{type(e).__name__}: {e}"
    with deferred_interrupts():
        try:
            restore(backup_text, dev)
        except BaseException as r:  # noqa: BLE001 - whatever it was, the rollback failed
            raise PushError(f"push of {profile_name} failed ({msg}) and ROLLBACK FAILED ({type(r).__name__}: {r}); "
                            f"backup in {backup}", False) from None
    if not isinstance(e, Exception):
        raise e
    raise PushError(f"push of {profile_name} failed: {msg}; rolled back to {backup.name if backup else 'the backup'}",
                    True) from None


def restore(backup_text: str, dev: Device) -> None:
    """Make the device's running-config equal the backup again (the whole config verified).
    Raises QoslabError when it cannot."""
    conn = connect(dev)
    try:
        now = _show_run(conn)
        rules = get_platform(dev.platform).qos_rules
        lines = remediation(now, backup_text, rules.hier_platform, rules.negations)
        if lines:
            _send(conn, lines)
        _verify(conn, backup_text, "the restored running-config differs from the backup")
        if lines:
            _save(conn)
    finally:
        _close(conn)


def _show_run(conn: Any, batch: bool = False, timeout_s: float = 30.0) -> str:
    """The running-config. ``batch``: written and read directly (:func:`.batch.send_batch`)
    instead of Netmiko's ``send_command`` and its prompt finding (about 80 ms a command)."""
    if batch:
        text = send_batch(conn, ["show running-config"], f"{conn.base_prompt}#", timeout_s)["show running-config"]
    else:
        text = conn.send_command("show running-config")
    if "hostname" not in text:
        raise QoslabError(f"show running-config returned no configuration: {text.strip()[:120]!r}")
    return text


def _write_backup(out_dir: Path, profile_name: str, text: str) -> Path:
    """Write the backup, mode 0600 from the first byte, under a new name; returns its path."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", profile_name)[:40] or "profile"
    stem = f"running-config-backup-{time.strftime('%Y%m%dT%H%M%S')}-{safe}"
    for n in range(1000):
        path = out_dir / (f"{stem}.txt" if n == 0 else f"{stem}-{n}.txt")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path
    raise QoslabError(f"{out_dir}: cannot find a free backup file name")


def _verify(conn: Any, want: str, what: str = "verification failed", batch: bool = False,
            timeout_s: float = 30.0) -> None:
    """Raise QoslabError unless the running-config (all of it) equals ``want``."""
    now = normalized_config(_show_run(conn, batch, timeout_s))
    goal = normalized_config(want)
    if now != goal:
        missing = sorted(set(goal) - set(now))[:3]
        extra = sorted(set(now) - set(goal))[:3]
        raise QoslabError(f"{what}: missing {missing}, unexpected {extra}")


def _save(conn: Any, batch: bool = False, timeout_s: float = 30.0) -> None:
    """``write memory`` (``batch``: written and read directly; IOS answers ``[OK]``, EOS ``Copy
    completed successfully.``). Raises QoslabError when the switch does not confirm it."""
    if not batch:
        conn.save_config()
        return
    out = send_batch(conn, ["write memory"], f"{conn.base_prompt}#", timeout_s)["write memory"]
    if "[OK]" not in out and "Copy completed successfully." not in out:
        raise QoslabError(f"write memory was not confirmed: {out.strip()[-120:]!r}")


def _close(conn: Any) -> None:
    """Close a Netmiko connection, ignoring errors (it may be half dead)."""
    if conn is None:
        return
    try:
        conn.disconnect()
    except Exception:  # noqa: BLE001 - closing a broken session must not mask the real error
        pass


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back SIGINT, SIGTERM and SIGALRM (Ctrl-C, the CLI's SIGTERM, the trial timeout) during
    the body; the first one that arrived is delivered to its handler after it. In threads other
    than the main one (no signal handlers there) the body just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
    got: list[signal.Signals] = []
    old = {s: signal.getsignal(s) for s in sigs}
    for s in sigs:
        signal.signal(s, lambda n, f: got.append(signal.Signals(n)))
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if got:
            handler = old[got[0]]
            if callable(handler):
                handler(got[0], None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), got[0])


def _phases(t: dict[str, float]) -> dict[str, float]:
    keys = list(t)
    return {k: round(t[k] - t[keys[i - 1]], 3) for i, k in enumerate(keys) if i} | \
        {"total": round(t[keys[-1]] - t["start"], 3)}
