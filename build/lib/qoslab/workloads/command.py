"""``command``: the user's own program as the workload (the contract: src/qoslab/README.md,
"Your own workload: kind command").

``worker`` is started on every worker host (``workers_on: all`` = every host, the head node
included; ``others`` = every host but the head) exactly as the Java workers are: through the
campaign's executor (netns, ssh), with the parent-death signal and a bounded lifetime, output in
``workload-<host>.log``, stopped by PID, kept warm across trials by the pool. With ``port`` set a
worker is ready once it listens on TCP ``port``. Then ``head`` runs on the head node; the last
line of its stdout that is a JSON object is the result: ``elapsed_s`` (a number) is required,
``valid`` (bool, default: exit code 0) decides whether the trial counts, ``metrics`` declares the
trial's metrics (:mod:`.metrics`: primary, unit, direction, secondary), every other key is kept
in ``workload-result.json``. Commands are templates (:data:`TEMPLATE_VARS`), split like a shell
line (no shell runs them).
"""

from __future__ import annotations

import json
import shlex
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from qoslab.workloads.pool import ProcessPool, WorkloadRun

from ..errors import QoslabError
from ..executors import BackgroundProcess, Executor
from ..yamlio import clip
from .base import AddressOf, ExecutorOf, Pool, WorkloadBase, head_result, run_pooled
from .metrics import parse_declaration

#: Template variables of ``worker`` and ``head`` ({name} in a word of the command).
TEMPLATE_VARS = ("host", "ip", "index", "port", "head", "head_ip", "hosts", "ips", "workers", "dscp", "tos",
                 "root", "timeout_s")


class CommandSettings(WorkloadBase):
    """``kind: command``: ``head`` (required) and ``worker`` (optional) command templates,
    ``port`` (the workers' TCP port: readiness and ``{port}``), ``workers_on`` (all | others)."""

    kind: Literal["command"] = "command"
    head: str = Field(..., min_length=1)
    worker: str | None = None
    port: int | None = Field(None, ge=1, le=65535)
    workers_on: Literal["all", "others"] = "all"

    @field_validator("head", "worker")
    @classmethod
    def _template(cls, v: str | None) -> str | None:
        return v if v is None else check_template(v)

    def worker_hosts(self) -> list[str]:
        if self.worker is None:
            return []
        return list(self.hosts) if self.workers_on == "all" else self.hosts[1:]

    def listen_ports(self) -> list[tuple[str, str, int]]:
        return [("port", "tcp", self.port)] if self.port is not None and self.worker else []

    def describe(self) -> str:
        return f"command {self.head!r} on {self.hosts[0]}" + (
            f", worker {self.worker!r} on {len(self.worker_hosts())} host(s)" if self.worker else "")


#: Bytes of one argument the kernel takes (Linux MAX_ARG_STRLEN, 32 pages of 4 KiB, less the NUL).
MAX_ARG_BYTES = 131_071
#: Bytes of a whole command template (a command line is a few of them at most).
MAX_COMMAND_BYTES = 262_144


def check_template(v: str, names: tuple[str, ...] = TEMPLATE_VARS) -> str:
    """``v`` if it is a command template qoslab can run: a shell-like line of words, each at most
    MAX_ARG_BYTES, whose ``{...}`` fields are bare names of ``names`` (default TEMPLATE_VARS; no
    attribute or index access, format spec or conversion: ``{ip.__class__}`` and
    ``{port:>999999999}`` are refused without being formatted), with no NUL byte and a first word
    (the program) that is not empty (``''``). Raises ValueError naming the word or field at fault
    (clipped)."""
    size = len(v.encode())
    if size > MAX_COMMAND_BYTES:
        raise ValueError(f"the command is {size} bytes: at most {MAX_COMMAND_BYTES}")
    if "\x00" in v:
        raise ValueError(f"a NUL byte at character {v.index(chr(0))}: no program name or argument can hold one")
    try:
        words = shlex.split(v)
    except ValueError as e:
        raise ValueError(f"cannot split the command: {e}") from None
    if not words:
        raise ValueError("empty command")
    if not words[0].strip():
        raise ValueError(f"the program (the first word, {words[0]!r}) is empty: name a program")
    known = ", ".join("{" + k + "}" for k in names)
    for w in words:
        if (n := len(w.encode())) > MAX_ARG_BYTES:
            raise ValueError(f"a word of {n} bytes ({clip(w, 40)!r}): the kernel takes at most {MAX_ARG_BYTES} "
                             "bytes per argument (MAX_ARG_STRLEN)")
        try:
            fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(w) if f is not None]
        except ValueError as e:
            raise ValueError(f"{clip(w, 80)!r}: {e} (write {{{{ }}}} for braces)") from None
        for f, spec, conv in fields:
            if f not in names:
                raise ValueError(f"{clip('{' + f + '}', 80)!r}: unknown template variable (known: {known}; "
                                 "write {{ }} for braces)")
            if spec or conv:
                shown = "{" + f + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
                raise ValueError(f"{clip(shown, 80)!r}: a "
                                 "template variable takes no format spec or conversion")
    return v


def expand(template: str, variables: dict[str, Any]) -> list[str]:
    """``template`` split like a shell line, each word formatted with ``variables``."""
    return [w.format(**variables) for w in shlex.split(template)]


def variables(s: CommandSettings, address_of: AddressOf, root: str | Path, host: str | None = None) -> dict[str, Any]:
    """The template variables of a command on ``host`` (None = the head node)."""
    host = host or s.hosts[0]
    wh = s.worker_hosts()
    return {"host": host, "ip": address_of(host), "index": s.hosts.index(host), "port": s.port or "",
            "head": s.hosts[0], "head_ip": address_of(s.hosts[0]), "hosts": ",".join(s.hosts),
            "ips": ",".join(address_of(h) for h in s.hosts),
            "workers": ",".join(f"{address_of(h)}:{s.port}" if s.port else address_of(h) for h in wh),
            "dscp": "" if s.dscp is None else s.dscp, "tos": "" if s.dscp is None else s.dscp << 2,
            "root": str(root).rstrip("/"), "timeout_s": f"{s.timeout_s:g}"}


def check_result(result: dict) -> dict:
    """Apply the contract to a head command's last JSON line: ``elapsed_s`` must be a number
    (QoslabError otherwise); ``valid`` becomes exit code 0 unless the line gives a bool; a valid
    line's ``metrics`` declaration (:func:`qoslab.workloads.metrics.parse_declaration`) is checked
    (QoslabError naming the field) and kept as ``metrics_declared`` (set and values)."""
    e = result.get("elapsed_s")
    if not isinstance(e, (int, float)) or isinstance(e, bool):
        raise QoslabError(f"the head command's result line has no numeric elapsed_s (keys: "
                          f"{', '.join(sorted(result)) or 'none'}); the contract requires it")
    if not isinstance(result.get("valid"), bool):
        result["valid"] = result.get("exit_code", 0) == 0
    elif result.get("exit_code", 0) != 0:
        result["valid"] = False
    if result.get("exit_code", 0) != 0:
        result.setdefault("error", f"head command exited with code {result['exit_code']}")
    if result["valid"]:  # a declaration that does not hold fails the trial, with the field named
        declared = parse_declaration(result)
        if declared is not None:
            result["metrics_declared"] = {"set": declared[0].as_dict(), "values": declared[1]}
    return result


class Command:
    """The ``command`` backend (see the module doc)."""

    settings_model = CommandSettings

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        def start(s: CommandSettings, host: str, ex: Executor, ip: str, log: str,
                  life: float | None) -> BackgroundProcess:
            assert s.worker is not None
            argv = expand(s.worker, variables(s, address_of, ex.qoslab_root, host))
            return ex.start(argv, stdout=log, stderr=log, lifetime_s=life)

        return ProcessPool(executor_of, address_of, log_dir, start,
                           key_of=lambda s: (tuple(s.hosts), s.worker, s.port, s.workers_on, s.dscp),
                           hosts_of=lambda s: s.worker_hosts(), ready_port=lambda s: s.port,
                           lifetime_s=lifetime_s, renew_below_s=renew_below_s)

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None) -> WorkloadRun:
        out_dir.mkdir(parents=True, exist_ok=True)
        ex = executor_of(settings.hosts[0])

        def head(logs: dict[str, Path]) -> dict:
            argv = expand(settings.head, variables(settings, address_of, ex.qoslab_root))
            result = head_result(ex, argv, settings.timeout_s + 30, out_dir, logs, "head command")
            checked = check_result(result)
            (out_dir / "workload-result.json").write_text(json.dumps(checked, indent=1))
            return checked

        return run_pooled(settings, pool, lambda: self.open_pool(executor_of, address_of, out_dir, lifetime_s),
                          on_started, head)

    def row(self, result: dict) -> dict[str, Any]:
        total = result.get("total_s")
        checksum = result.get("checksum")
        return {"elapsed_s": float(result["elapsed_s"]),
                "total_s": float(total) if isinstance(total, (int, float)) else None,
                "checksum": checksum if isinstance(checksum, int) and not isinstance(checksum, bool) else None,
                "busy_max_s": None,
                "metrics_json": json.dumps(result["metrics_declared"]) if result.get("metrics_declared") else None}
