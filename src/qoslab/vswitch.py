"""The virtual Catalyst 3750: an SSH server (asyncssh) speaking the IOS CLI, whose QoS
configuration is compiled to tc on the embedded testbed's switch namespace.

Netmiko's ``cisco_ios`` driver talks to it exactly as to hardware: user EXEC ``Switch>``,
``enable`` (secret) ``Switch#``, ``configure terminal`` and the config sub-modes, ``end``,
``write memory``, ``terminal length 0``/``width 511``, and the show commands of the QoS
workflow. Invalid input answers ``% Invalid input detected at '^' marker.`` with the caret under
the fault; the session survives. The running-config is compiled (:mod:`qoslab.tccompile`) and
applied to the switch ports whenever a configuration session ends (``end``, ``exit`` to EXEC,
or the session closing) and the plan changed.

Credentials: generated per testbed into a 0600 file (``/run/qoslab/vswitch-<topology>/credentials``),
never in the repository; the host key is generated once per testbed next to it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from .errors import QoslabError
from .ios import IosError, Mode, RunningConfig, ace_text, interpret, load_config, qos_model
from .tccompile import TcPlan, compile_tc
from .testbed import STATE_DIR, switch_namespace
from .topology import Topology, canonical_port, linux_ifname, long_port

IOS_VERSION = "12.2(55)SE12"


def state_dir(topology: str) -> Path:
    """Folder of the virtual switch of ``topology``: credentials, host key, startup-config, pid."""
    return STATE_DIR / f"vswitch-{topology}"


@dataclass(frozen=True)
class Credentials:
    """Login of the virtual switch: username, password, enable secret."""

    username: str
    password: str
    secret: str

    @classmethod
    def load(cls, path: Path) -> "Credentials":
        """Read a credentials file (JSON, must be mode 0600). Raises QoslabError otherwise."""
        try:
            st = path.stat()
        except OSError:
            raise QoslabError(f"no switch credentials at {path} (is the virtual switch running?)") from None
        if st.st_mode & 0o077:
            raise QoslabError(f"{path} is readable by others (mode {oct(st.st_mode & 0o777)}): chmod 600 it")
        try:
            return cls(**json.loads(path.read_text()))
        except (ValueError, TypeError) as e:
            raise QoslabError(f"{path}: not a credentials file ({e})") from None


def ensure_credentials(d: Path) -> Credentials:
    """Create (once) the credentials file and SSH host key of a virtual switch in ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    cred = d / "credentials"
    if not cred.exists():
        c = Credentials("qoslab", secrets.token_urlsafe(16), secrets.token_urlsafe(16))
        fd = os.open(cred, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(c.__dict__, f)
    key = d / "ssh_host_key"
    if not key.exists():
        k = asyncssh.generate_private_key("ssh-ed25519")
        k.write_private_key(str(key))
        os.chmod(key, 0o600)
        k.write_public_key(str(d / "ssh_host_key.pub"))
    return Credentials.load(cred)


def known_hosts_line(d: Path, host: str, port: int) -> str:
    """A known_hosts line for the switch's host key at host:port."""
    pub = (d / "ssh_host_key.pub").read_text().split()
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} {pub[0]} {pub[1]}\n"


class VirtualCatalyst:
    """The switch: running- and startup-config, and the tc applied to the testbed's switch ports."""

    def __init__(self, topology: Topology, apply: bool = True):
        self.topo = topology
        self.dir = state_dir(topology.name)
        self.apply_enabled = apply
        self.running = RunningConfig.factory(topology.switch.hostname, topology.switch.ports)
        startup = self.dir / "startup-config"
        if startup.exists():
            load_config(startup.read_text(), self.running)
        self.applied: TcPlan | None = None
        self.lock = asyncio.Lock()
        self.booted = time.time()

    # -- tc -------------------------------------------------------------------------------------
    def plan(self) -> TcPlan:
        return compile_tc(qos_model(self.running), self.topo)

    def apply(self) -> bool:
        """Compile the running-config and apply it to the switch namespace if the plan changed.
        Returns True when tc was changed. Raises QoslabError naming the failing tc line."""
        plan = self.plan()
        if self.applied is not None and plan.ports == self.applied.ports:
            return False
        if self.apply_enabled:
            apply_plan(plan, switch_namespace(self.topo.name), [linux_ifname(h.port) for h in self.topo.hosts])
        self.applied = plan
        return True

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / "startup-config.tmp"
        tmp.write_text(self.running.render())
        tmp.replace(self.dir / "startup-config")

    # -- show commands ----------------------------------------------------------------------------
    def show(self, args: list[str]) -> str | None:
        """Output of ``show ARGS`` or None for an unknown show command."""
        a = " ".join(args)
        q = qos_model(self.running)
        if re.match(r"^ver(s(i(on?)?)?)?$", a):
            up = int(time.time() - self.booted)
            return (f"Cisco IOS Software, C3750 Software (C3750-IPSERVICESK9-M), Version {IOS_VERSION}, "
                    f"RELEASE SOFTWARE (fc2)\nqoslab virtual Catalyst (tc on the embedded testbed)\n\n"
                    f"{self.running.hostname} uptime is {up // 60} minutes\n"
                    f"cisco {self.topo.switch.model} (PowerPC405) processor with 131072K bytes of memory.\n"
                    f"{len(self.topo.switch.ports)} Gigabit Ethernet interfaces\n")
        if re.match(r"^run(n(i(n(g(-(c(o(n(f(ig?)?)?)?)?)?)?)?)?)?)?$", a):
            return self.running.render()
        if a.startswith("startup"):
            p = self.dir / "startup-config"
            return p.read_text() if p.exists() else "startup-config is not present\n"
        if a == "mls qos":
            return "QoS is enabled\nQoS ip packet dscp rewrite is enabled\n\n" if q.enabled else "QoS is disabled\nQoS ip packet dscp rewrite is enabled\n\n"
        m = re.match(r"^mls qos interface (\S+) (queueing|statistics)$", a)
        if m:
            try:
                port = canonical_port(m.group(1))
            except ValueError:
                return None
            if port not in q.interfaces:
                return None
            return self._queueing(port, q) if m.group(2) == "queueing" else self._statistics(port)
        if a == "mls qos queue-set":
            out = ""
            for qs in (1, 2):
                b = q.queue_set_buffers[qs]
                out += (f"Queueset: {qs}\nQueue     :       1       2       3       4\n"
                        f"----------------------------------------------\n"
                        f"buffers   :{''.join(f'{x:8d}' for x in b)}\n")
            return out
        if a == "mls qos maps dscp-output-q":
            out = "   Dscp-outputq-threshold map:\n     d1 :d2    0     1     2     3     4     5     6     7     8     9 \n"
            out += "     ------------------------------------------------------------\n"
            for d1 in range(7):
                cells = []
                for d2 in range(10):
                    d = d1 * 10 + d2
                    cells.append(f"{q.dscp_output_queue[d]:02d}-01" if d < 64 else "")
                out += f"      {d1} :    " + " ".join(c for c in cells if c) + " \n"
            return out
        if a == "mls qos input-queue":
            return ("Queue     :       1       2\n----------------------------------------------\n"
                    + "".join(f"{l}\n" for l in self.running.globals_ if "srr-queue input" in l)
                    + "(ingress queues are not emulated: see switch-configs/README.md)\n")
        if a == "access-lists":
            out = ""
            for name, aces in self.running.acls.items():
                out += f"Extended IP access list {name}\n"
                out += "".join(f"    {10 * (i + 1)} {ace_text(x)}\n" for i, x in enumerate(aces))
            return out
        if a == "class-map":
            out = ""
            for i, (name, s) in enumerate(self.running.class_maps.items(), 1):
                out += f" Class Map {s.header.split()[1]} {name} (id {i})\n" + "".join(
                    f"   {c.replace('match access-group ', 'Match access-group  ')}\n" for c in s.children) + "\n"
            return out
        if a == "policy-map":
            out = ""
            for name, s in self.running.policy_maps.items():
                out += f"  Policy Map {name}\n"
                for sub in s.subsections:
                    out += f"    Class {sub.header.split()[1]}\n" + "".join(
                        f"      {c.replace('set ip dscp', 'set dscp')}\n" for c in sub.children)
            return out
        return None

    def _queueing(self, port: str, q) -> str:
        iq = q.interfaces[port]
        return (f"{long_port(port)}\nEgress Priority Queue : {'enabled' if iq.priority_queue_out else 'disabled'}\n"
                f"Shaped queue weights (absolute) :  {' '.join(map(str, iq.shape))}\n"
                f"Shared queue weights  :  {' '.join(map(str, iq.share))}\n"
                f"The port bandwidth limit : 100  (Operational Bandwidth:100.0)\n"
                f"The port is mapped to qset : {iq.queue_set}\n")

    def _statistics(self, port: str) -> str:
        enq, drop = queue_counters(switch_namespace(self.topo.name), linux_ifname(port)) if self.apply_enabled \
            else ([0] * 4, [0] * 4)
        head = " queue:    threshold1   threshold2   threshold3\n-----------------------------------------------\n"
        rows = lambda v: "".join(f" queue {i}: {v[i]:12d} {0:12d} {0:12d} \n" for i in range(4))
        return (f"{long_port(port)} (All statistics are in packets)\n\n  output queues enqueued: \n{head}{rows(enq)}"
                f"\n  output queues dropped: \n{head}{rows(drop)}\n"
                "(threshold columns: WTD is not emulated, all traffic counts under threshold1)\n")


def queue_counters(ns: str, dev: str) -> tuple[list[int], list[int]]:
    """Packets sent and dropped per egress queue 1-4 of a switch port, from tc counters (QoS off:
    the single FIFO counts as queue 1... reported under queue 0 as IOS numbers them 0-3)."""
    out = subprocess.run(["tc", "-n", ns, "-s", "qdisc", "show", "dev", dev], capture_output=True, text=True).stdout
    enq, drop = [0] * 4, [0] * 4
    for m in re.finditer(r"qdisc bfifo (\d+): .*?\n\s*Sent \d+ bytes (\d+) pkt \(dropped (\d+)", out):
        handle = int(m.group(1))
        i = handle - 11 if 11 <= handle <= 14 else 0
        enq[i] += int(m.group(2))
        drop[i] += int(m.group(3))
    return enq, drop


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
        raise QoslabError(f"tc in {ns} failed on `{bad}`: {p.stderr.strip().splitlines()[0] if p.stderr.strip() else ''}")


# --------------------------------------------------------------------------------------------- CLI session
class IosSession:
    """One CLI session: modes and prompts; ``handle(line)`` returns the text to print."""

    def __init__(self, switch: VirtualCatalyst, creds: Credentials):
        self.sw = switch
        self.creds = creds
        self.privileged = False
        self.mode: Mode | None = None  # None = EXEC
        self.in_config = False

    @property
    def prompt(self) -> str:
        host = self.sw.running.hostname
        if self.mode is not None:
            return f"{host}{self.mode.prompt_suffix}#"
        return f"{host}{'#' if self.privileged else '>'}"

    def exec_command(self, line: str) -> tuple[str, bool]:
        """Run an EXEC command; returns (output, close_session)."""
        w = line.split()
        cmd = w[0].lower()
        if cmd in ("exit", "logout", "quit"):
            return "", True
        if cmd.startswith("term"):
            return "", False
        if cmd.startswith("sh") and "show".startswith(cmd):
            out = self.sw.show(w[1:])
            if out is None:
                return _invalid(len(self.prompt) + line.index(w[1]) if len(w) > 1 else len(line)), False
            return out, False
        if not self.privileged:
            return _invalid(len(self.prompt) + line.index(w[0])), False
        if cmd in ("conf", "config", "configure") and (len(w) == 1 or "terminal".startswith(w[1].lower())):
            self.mode = Mode()
            return "Enter configuration commands, one per line.  End with CNTL/Z.\n", False
        if (cmd == "wr" or "write".startswith(cmd) and len(cmd) >= 2) and (len(w) == 1 or "memory".startswith(w[1])) \
                or w[:3] == ["copy", "running-config", "startup-config"] or w[:3] == ["copy", "run", "start"]:
            self.sw.save()
            return "Building configuration...\n[OK]\n", False
        if cmd == "disable":
            self.privileged = False
            return "", False
        return _invalid(len(self.prompt) + line.index(w[0])), False

    def config_command(self, line: str) -> str:
        w = line.split()
        if w and w[0] == "do":
            out, _ = self.exec_command(line.split(None, 1)[1] if len(w) > 1 else "")
            return out
        prompt_len = len(self.prompt)
        try:
            new = interpret(self.sw.running, self.mode, line)
        except IosError as e:
            return e.render(prompt_len)
        if new.name == "exec":
            self.mode = None
            return self._leave_config()
        self.mode = new
        return ""

    def _leave_config(self) -> str:
        try:
            self.sw.apply()
        except QoslabError as e:
            return f"%QOSLAB-3-TC: {e}\n"
        return ""

    def close(self) -> None:
        if self.mode is not None:
            self.mode = None
            self._leave_config()


def _invalid(column: int) -> str:
    return " " * column + "^\n% Invalid input detected at '^' marker.\n\n"


async def _session(process: asyncssh.SSHServerProcess, switch: VirtualCatalyst, creds: Credentials) -> None:
    s = IosSession(switch, creds)
    out = process.stdout
    try:
        out.write("\n" + s.prompt)
        while True:
            try:
                line = await process.stdin.readline()
            except asyncssh.BreakReceived:
                continue
            except (asyncssh.TerminalSizeChanged,):
                continue
            if line == "":
                break
            line = line.rstrip("\r\n")
            if not line.strip():
                out.write(s.prompt)
                continue
            async with switch.lock:
                if s.mode is not None:
                    text = s.config_command(line)
                    close = False
                else:
                    w = line.split()
                    if w[0].lower() in ("en", "ena", "enab", "enabl", "enable"):
                        out.write("Password: ")
                        process.channel.set_echo(False)
                        secret = (await process.stdin.readline()).rstrip("\r\n")
                        process.channel.set_echo(True)
                        out.write("\n")
                        if secrets.compare_digest(secret, creds.secret):
                            s.privileged = True
                            text = ""
                        else:
                            text = "% Access denied\n\n"
                        close = False
                    else:
                        text, close = s.exec_command(line)
            if close:
                break
            out.write(text)
            out.write(s.prompt)
    except (asyncssh.ConnectionLost, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        async with switch.lock:
            s.close()
        process.exit(0)


class _Server(asyncssh.SSHServer):
    def __init__(self, creds: Credentials):
        self.creds = creds

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == self.creds.username and secrets.compare_digest(password, self.creds.password)


async def serve(topology: Topology, apply: bool = True, ready: asyncio.Event | None = None) -> None:
    """Run the virtual Catalyst of ``topology`` on its management endpoint until cancelled."""
    d = state_dir(topology.name)
    creds = ensure_credentials(d)
    switch = VirtualCatalyst(topology, apply=apply)
    switch.apply()
    mg = topology.switch.management
    server = await asyncssh.create_server(
        lambda: _Server(creds), mg.host, mg.port, server_host_keys=[str(d / "ssh_host_key")],
        process_factory=lambda p: _session(p, switch, creds), line_editor=True, line_history=0,
        encoding="utf-8")
    if ready:
        ready.set()
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
