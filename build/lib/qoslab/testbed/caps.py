"""What this machine can do for the embedded testbed: root, tools, tc kinds (probed once per
kernel), and running ``ip``/``tc`` batches with errors that name the failing line."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import EnvironmentProblem, QoslabError
from ..testbedplan import STATE_DIR
from .statedir import state_dir

REQUIRED_TOOLS = ("ip", "tc", "ethtool", "ping", "sysctl")
#: tc kinds the testbed and the virtual Catalyst's tc compiler depend on.
REQUIRED_TC = ("htb", "bfifo", "u32", "mirred")


def _batch_error(tool: str, ns: str | None, lines: list[str], stderr: str) -> str:
    where = f" in namespace {ns}" if ns else ""
    m = re.search(r"Command failed -:(\d+)", stderr)
    first = stderr.strip().splitlines()[0] if stderr.strip() else "no error output"
    if m and 0 < int(m.group(1)) <= len(lines):
        return f"`{tool} {lines[int(m.group(1)) - 1]}`{where} failed: {first}"
    return f"`{tool} -batch`{where} failed: {first}"


def run_batches(jobs: list[tuple[str, str | None, list[str]]]) -> None:
    """Run ``(tool, namespace, lines)`` batches concurrently (``tool -n NS -batch -``).
    Raises QoslabError naming the failing line and namespace."""
    procs = []
    for tool, ns, lines in jobs:
        argv = [tool] + (["-n", ns] if ns else []) + ["-batch", "-"]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((p, tool, ns, lines))
    errors = []
    for p, tool, ns, lines in procs:
        _, err = p.communicate("\n".join(lines) + "\n")
        if p.returncode != 0:
            errors.append(_batch_error(tool, ns, lines, err))
    if errors:
        raise QoslabError("; ".join(errors))


def run_in_namespaces(jobs: dict[str, list[list[str]]]) -> None:
    """Run each namespace's command list inside it (one ``sh`` per namespace, concurrently)."""
    procs = []
    for ns, cmds in jobs.items():
        script = " && ".join(shlex.join(c) for c in cmds)
        p = subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((ns, script, p))
    errors = []
    for ns, script, p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(f"in namespace {ns}: `{script}` failed: {err.strip() or p.returncode}")
    if errors:
        raise QoslabError("; ".join(errors))


def tc_json(argv: list[str]) -> list[dict[str, Any]]:
    """Run an ``ip -j``/``tc -j`` command and return its JSON list. Raises QoslabError when it fails."""
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise QoslabError(f"`{' '.join(argv)}` failed: {out.stderr.strip()}")
    return json.loads(out.stdout or "[]")


# ---------------------------------------------------------------------------------------------
# Capabilities


@dataclass(frozen=True)
class Capabilities:
    """Which traffic-control kinds this kernel has (probed once per kernel release, cached in
    /run/qoslab). ``qdiscs``/``filters``/``actions``/``links``: kind -> available."""

    kernel: str
    qdiscs: dict[str, bool]
    filters: dict[str, bool]
    actions: dict[str, bool]
    links: dict[str, bool]

    def missing_required(self) -> list[str]:
        """Required kinds (REQUIRED_TC) this kernel lacks."""
        have = {**self.qdiscs, **self.filters, **self.actions}
        return [k for k in REQUIRED_TC if not have.get(k, False)]


_QDISC_PROBES = {
    "htb": "htb default 1", "tbf": "tbf rate 1mbit burst 10kb latency 50ms", "bfifo": "bfifo limit 10000",
    "pfifo": "pfifo limit 100", "pfifo_fast": "pfifo_fast", "prio": "prio", "ets": "ets bands 2",
    "drr": "drr", "netem": "netem delay 1ms", "fq_codel": "fq_codel", "sfq": "sfq",
    "red": "red limit 100000 avpkt 1000 bandwidth 1mbit", "fq": "fq",
}
_FILTER_PROBES = {
    "u32": "u32 match ip dsfield 0xa0 0xfc flowid 1:1",
    "flower": "flower ip_proto udp flowid 1:1",
    "matchall": "matchall flowid 1:1",
}
_ACTION_PROBES = {
    "mirred": "mirred egress mirror dev probe1", "pedit": "pedit ex munge ip dsfield set 0xa0",
    "skbedit": "skbedit priority 1", "police": "police rate 1mbit burst 10k drop", "gact": "drop",
}


def probe_capabilities(refresh: bool = False) -> Capabilities:
    """Probe which qdiscs, filters, actions and link kinds work here, in a throw-away namespace
    (adds then deletes each on a veth). Cached per kernel release in /run/qoslab/caps.json.
    Raises EnvironmentProblem when not root or namespaces cannot be created."""
    require_root()
    kernel = os.uname().release
    cache = STATE_DIR / "caps.json"
    if not refresh and cache.exists():
        try:
            data = json.loads(cache.read_text())
            if data.get("kernel") == kernel:
                return Capabilities(**data)
        except (ValueError, TypeError):
            pass
    ns = f"qsl-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if r.returncode != 0:
        raise EnvironmentProblem(f"cannot create a network namespace (`ip netns add`): {r.stderr.strip()}")
    try:
        run_batches([("ip", ns, ["link add probe0 type veth peer name probe1", "link set probe0 up",
                                  "link set probe1 up"])])
        lines: list[str] = []
        index: dict[int, tuple[str, str]] = {}
        for kind, args in _QDISC_PROBES.items():
            index[len(lines) + 1] = ("qdisc", kind)
            lines += [f"qdisc add dev probe0 root handle 1: {args}", "qdisc del dev probe0 root"]
        lines.append("qdisc add dev probe0 root handle 1: htb default 1")
        for kind, args in _FILTER_PROBES.items():
            index[len(lines) + 1] = ("filter", kind)
            lines.append(f"filter add dev probe0 parent 1: protocol ip pref 10 {args}")
            lines.append("filter del dev probe0 parent 1: pref 10")
        for kind, args in _ACTION_PROBES.items():
            index[len(lines) + 1] = ("action", kind)
            lines.append(f"filter add dev probe0 parent 1: protocol ip pref 20 u32 match u32 0 0 action {args}")
            lines.append("filter del dev probe0 parent 1: pref 20")
        p = subprocess.run(["tc", "-n", ns, "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True)
        failed = {int(n) for n in re.findall(r"Command failed -:(\d+)", p.stderr)}
        found: dict[str, dict[str, bool]] = {"qdisc": {}, "filter": {}, "action": {}}
        for line_no, (what, kind) in index.items():
            found[what][kind] = line_no not in failed
        links = {}
        for kind in ("veth", "bridge", "ifb", "dummy"):
            r = subprocess.run(["ip", "-n", ns, "link", "add", f"probe-{kind}", "type", kind],
                               capture_output=True, text=True)
            links[kind] = r.returncode == 0 or kind == "veth"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    caps = Capabilities(kernel, found["qdisc"], found["filter"], found["action"], links)
    state_dir()
    cache.write_text(json.dumps(asdict(caps)))
    return caps


def require_root() -> None:
    """Raise EnvironmentProblem unless running as root with the testbed's tools on PATH."""
    if os.geteuid() != 0:
        raise EnvironmentProblem("the embedded testbed needs root (network namespaces, tc): run as root")
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        raise EnvironmentProblem(f"missing tools: {', '.join(missing)} (run `make setup`)")


