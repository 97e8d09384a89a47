"""``qoslab workload``: one run of a workload on testbed hosts. Every registered kind
(:data:`qoslab.registry.workloads`) runs from a playbook (``--playbook``); the Java kinds also from
options: the distributed RMI RayTracer (Java Grande Forum section 3, the default), ``matmul``
(reference 000's matrix multiplication over four mechanisms), ``pingpong`` (reference 003's
message-size sweep), ``sort`` (reference 002's distributed sort over socket, RMI and CORBA) and
``mpj`` (reference 003 on MPJ Express). An option left out takes the kind's own settings default
(the settings model is the one source of every default); an option the kind does not take is an
error."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import QoslabError
from ..registry import workloads
from .common import TopologyOpt, console, running_testbed

#: The option -> (settings field, the kinds that take it) of ``workload run`` without --playbook.
OPTION_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "size": ("size", ("raytracer", "matmul", "sort")), "servers": ("servers", ("sort",)),
    "rows_per_call": ("rows_per_call", ("raytracer",)), "codec": ("codec", ("raytracer",)),
    "frames": ("frames", ("raytracer",)), "supersample": ("supersample", ("raytracer",)),
    "mechanism": ("mechanism", ("matmul", "pingpong", "sort")), "algorithm": ("algorithm", ("matmul",)),
    "max_bytes": ("max_bytes", ("pingpong", "mpj")), "reps": ("reps", ("pingpong", "mpj")),
    "port": ("port", ("matmul", "pingpong", "sort", "mpj")),
    "dscp": ("dscp", ("raytracer", "matmul", "pingpong", "sort")),
    "registry_port": ("registry_port", ("raytracer",)), "export_port": ("export_port", ("raytracer",)),
    "timeout": ("timeout_s", ("raytracer", "matmul", "pingpong", "sort", "mpj")),
}
#: Kinds ``workload run`` builds from options; every other kind needs --playbook.
OPTION_KINDS = ("raytracer", "matmul", "pingpong", "sort", "mpj")
#: Seconds a run goes before its first progress line, then between lines.
PROGRESS_FIRST_S, PROGRESS_EVERY_S = 5.0, 15.0


def _kinds_help() -> str:
    """Every registered workload kind, those that need a playbook marked."""
    return ", ".join(k if k in OPTION_KINDS else f"{k} (--playbook)" for k in workloads.names())


app = typer.Typer(help=f"Run a workload on testbed hosts; kinds: {_kinds_help()}.", no_args_is_help=True)


@app.command("run")
def workload_run(
    hosts: str = typer.Option("jp-1,jp-2,jp-3,jp-4", help="Comma-separated hosts; the first is the head node."),
    workload: str = typer.Option("raytracer", help=f"The kind: {_kinds_help()}."),
    size: str | None = typer.Option(None, help="raytracer: A (150x150), B (500x500) or a width in pixels; matmul: "
                                               "the matrix order n; sort: integers."),
    servers: int | None = typer.Option(None, help="sort: sort servers (reference 002: 2, 4, 8), the hosts after "
                                                  "the head."),
    rows_per_call: str | None = typer.Option(None, help="raytracer: rows per RMI call, or 'all'."),
    codec: str | None = typer.Option(None, help="raytracer: serializable | externalizable"),
    frames: int | None = typer.Option(None, help="raytracer: render the scene this many times."),
    supersample: int | None = typer.Option(None, help="raytracer: k x k rays per pixel (1 = JGF; compute k^2-fold)."),
    mechanism: str | None = typer.Option(None, help="matmul: rmi-serializable | rmi-externalizable | socket | "
                                                    "datagram; pingpong: socket | rmi | datagram; "
                                                    "sort: socket | rmi | corba"),
    algorithm: str | None = typer.Option(None, help="matmul: spa | mca"),
    max_bytes: int | None = typer.Option(None, help="pingpong, mpj: largest message (sizes double from min_bytes)."),
    reps: int | None = typer.Option(None, help="pingpong, mpj: timed repetitions per size and operation."),
    port: int | None = typer.Option(None, help="matmul, pingpong, sort: the workers' base port (BASE..BASE+3); "
                                               "mpj: the rendezvous port."),
    dscp: int | None = typer.Option(None, help="DSCP (0-63) marking every workload socket, both directions."),
    registry_port: int | None = typer.Option(None, help="raytracer: RMI registry port."),
    export_port: int | None = typer.Option(None, help="raytracer: render service export port."),
    timeout: float | None = typer.Option(None, help="Seconds one call (matmul: the call phase) may take."),
    out: Path = typer.Option(Path("results/workload"), help="Folder for logs and the result JSON."),
    topology: Path | None = TopologyOpt,
    playbook: Path | None = typer.Option(None, "--playbook", help="Run the workload of this campaign playbook "
                                                                  "(any kind, command and mpi included) once; the "
                                                                  "options above are then ignored."),
    condition: str | None = typer.Option(None, "--condition", help="With --playbook: the condition whose workload "
                                                                   "settings to use (default: the baseline)."),
) -> None:
    """Run a workload on testbed hosts (the testbed must be up); options left out take the kind's defaults."""
    from qoslab.workloads.raytracer import run_workload

    if playbook is not None:
        raise typer.Exit(_run_playbook(playbook, condition, out))
    given = {"size": size, "servers": servers, "rows_per_call": rows_per_call, "codec": codec, "frames": frames,
             "supersample": supersample, "mechanism": mechanism, "algorithm": algorithm, "max_bytes": max_bytes,
             "reps": reps, "port": port, "dscp": dscp, "registry_port": registry_port, "export_port": export_port,
             "timeout": timeout}
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    settings = _settings(workload, names, given)
    tb = running_testbed(topology)
    for n in names:
        tb.namespace(n)  # unknown host -> clear error
    if workload != "raytracer":
        raise typer.Exit(_run_java(workload, settings, tb, out))
    with _progress(f"rendering size {settings.size} on {len(names)} workers", out):
        run = run_workload(settings, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    if "error" in r:
        raise QoslabError(f"workload failed: {r['error']} (logs in {out})")
    _print_raytracer(r, run.valid)
    console.print(f"result: {out / 'workload-result.json'}", markup=False)
    raise typer.Exit(0 if run.valid or (r["reference"] is None and r["valid"] is None) else 1)


def _settings(kind: str, hosts: list[str], given: dict[str, Any]) -> Any:
    """The settings of ``kind`` from the options the user gave (``given``: option -> value or
    None), checked by the kind's settings model; the defaults are the model's. Raises QoslabError
    for a kind that needs a playbook, an option the kind does not take, or a bad value."""
    from ..workloads import backend

    if kind not in OPTION_KINDS:
        workloads.get(kind)  # an unknown kind: ConfigError naming the known ones
        raise QoslabError(f"--workload {kind}: its settings come from a playbook: qoslab workload run --playbook FILE "
                          "(e.g. playbooks/command-example.yaml, playbooks/examples/mpi-allreduce.yaml)")
    values: dict[str, Any] = {"kind": kind, "hosts": hosts[:2] if kind == "pingpong" else hosts}
    for opt, value in given.items():
        if value is None:
            continue
        field, kinds = OPTION_FIELDS[opt]
        if kind not in kinds:
            raise QoslabError(f"--{opt.replace('_', '-')}: {kind} does not take it (only {', '.join(kinds)})")
        values[field] = _int_option("--rows-per-call", value) if opt == "rows_per_call" and value != "all" else value
    return _checked(backend(kind).settings_model, values)


@contextmanager
def _progress(what: str, out: Path) -> Iterator[None]:
    """A spinner while a workload runs and, after PROGRESS_FIRST_S, a line every PROGRESS_EVERY_S:
    the seconds so far and the last line of the workload's newest log in ``out`` (its workers' or
    ranks' output), so a long run shows it is alive in a terminal and in a log file alike."""
    t0, done = time.monotonic(), threading.Event()

    def report() -> None:
        wait = PROGRESS_FIRST_S
        while not done.wait(wait):
            wait = PROGRESS_EVERY_S
            console.print(f"  {escape(what)}: {time.monotonic() - t0:.0f} s so far{escape(_newest_line(out))}",
                          highlight=False, soft_wrap=True)

    reporter = threading.Thread(target=report, name="workload-progress", daemon=True)
    with console.status(f"{escape(what)} ..."):
        reporter.start()
        try:
            yield
        finally:
            done.set()
            reporter.join(2)


def _newest_line(out: Path) -> str:
    """``; NAME: LAST LINE`` of the most recently written log in ``out`` (clipped), or ``""``."""
    try:
        logs = sorted((p for p in out.glob("*.log") if p.is_file()), key=lambda p: p.stat().st_mtime)
        if not logs:
            return ""
        with logs[-1].open("rb") as f:
            f.seek(max(0, logs[-1].stat().st_size - 4096))
            lines = [line.strip() for line in f.read().decode(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return f"; {logs[-1].name}: {lines[-1][:120]}" if lines else ""


def _print_raytracer(r: dict, valid: bool) -> None:
    tab = Table(title=f"RayTracer size {r['size']} on {r['workers']} workers, rows/call {r['rows_per_call']}, "
                      f"{r['codec']}, {r['frames']} frame(s)")
    for c in ("host", "rows", "calls", "busy s"):
        tab.add_column(c, justify="left" if c == "host" else "right")
    for w in r["per_worker"]:
        tab.add_row(w["host"], str(w["rows"]), str(w["calls"]), f"{w['busy_s']:.2f}")
    console.print(tab)
    console.print(f"render {r['elapsed_render_s']:.3f} s, total {r['elapsed_total_s']:.3f} s, checksum "
                  f"{r['checksum']} (reference {r['reference']}): "
                  + ("[green]valid[/]" if valid else "[red]INVALID[/]"))


def _run_java(kind: str, s: Any, tb: Any, out: Path) -> int:
    """A Java kind other than the RayTracer with settings ``s``; returns the exit code (0 = valid)."""
    from ..workloads import backend

    with _progress(s.describe(), out):
        run = backend(kind).run(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    if kind == "sort":
        _print_sort(r)
    elif kind == "mpj":
        _print_mpj(r)
    elif kind == "matmul":
        tab = Table(title=f"matmul {r.get('algorithm')} over {r.get('mechanism')}, n = {r.get('size')}, "
                          f"{r.get('workers')} workers, {r.get('calls')} calls")
        for c in ("host", "tasks", "call s", "compute s"):
            tab.add_column(c, justify="left" if c == "host" else "right")
        for w in r.get("per_worker", []):
            tab.add_row(w["host"], str(w["tasks"]), f"{w['call_s']:.4f}", f"{w['compute_s']:.4f}")
        console.print(tab)
        console.print(f"total {r.get('total_s', 0):.4f} s, communication {r.get('comm_s', 0):.4f} s, compute "
                      f"{r.get('compute_s', 0):.4f} s; checksum {r.get('checksum')} (sequential {r.get('reference')})")
    else:
        tab = Table(title=f"pingpong over {r.get('mechanism')}, {s.hosts[0]} -> {s.hosts[1]}, {r.get('reps')} reps")
        for c in ("bytes", "rtt median ms", "rtt p99 ms", "Mbit/s"):
            tab.add_column(c, justify="right")
        for z in r.get("sizes", []):
            tab.add_row(str(z["bytes"]), f"{z['rtt_s']['median'] * 1e3:.3f}", f"{z['rtt_s']['p99'] * 1e3:.3f}",
                        f"{z['throughput_bits_s'] / 1e6:.2f}")
        console.print(tab)
    ok = r.get("valid") is True
    console.print(("[green]valid[/]" if ok else f"[red]INVALID[/] {escape(str(r.get('error') or ''))}")
                  + f"; result: {escape(str(out / 'workload-result.json'))}")
    return 0 if ok else 1


def _run_playbook(path: Path, condition: str | None, out: Path) -> int:
    """One run of a playbook's workload (a condition's settings, default the baseline's) on the
    testbed of its topology, which must be up; no profile is pushed and no flood started (`campaign
    run --trials 1 --smoke` runs whole conditions). Prints the result line's metrics; returns the
    exit code (0 = valid)."""
    from ..campaign import load_playbook
    from ..trials.playbook import resolve_path
    from ..workloads import backend
    from ..workloads.metrics import decimals, fmt, parse_declaration

    pb = load_playbook(path)
    try:
        cond = pb.condition(condition) if condition else pb.baseline_condition()
    except KeyError:
        raise QoslabError(f"{path}: no condition {condition!r} (one of: "
                          f"{', '.join(c.name for c in pb.conditions)})") from None
    tb = running_testbed(resolve_path(pb.topology))
    s = pb.workload_of(cond)
    for h in s.hosts:
        tb.namespace(h)  # unknown host -> clear error
    with _progress(f"{cond.name}: {s.describe()}", out):
        run = backend(s.kind).run(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    declared = parse_declaration(r) if r.get("valid") is True and r.get("metrics") else None
    if declared is not None:
        ms, values = declared
        for m in ms.all:  # names and units are the user's program's: printed as text, never as markup
            console.print(f"  {escape(m.name):<24} {escape(fmt(values[m.name], decimals(m, [values[m.name]]), m.unit))}"
                          f"{'  (primary)' if m is ms.primary else ''}", highlight=False)
    else:
        console.print(f"  elapsed_s {escape(str(r.get('elapsed_s', r.get('elapsed_render_s'))))}")
    ok = r.get("valid") is True
    console.print(("[green]valid[/]" if ok else f"[red]INVALID[/] {escape(str(r.get('error') or ''))}")
                  + f"; result: {escape(str(out / 'workload-result.json'))}")
    return 0 if ok else 1


def _print_sort(r: dict) -> None:
    tab = Table(title=f"sort of {r.get('size')} integers over {r.get('mechanism')} on {r.get('servers')} servers")
    for c in ("host", "items", "distribute s", "sort s", "collect s"):
        tab.add_column(c, justify="left" if c == "host" else "right")
    for w in r.get("per_server", []):
        tab.add_row(w["host"], str(w["items"]), f"{w['distribute_s']:.4f}", f"{w['sort_s']:.4f}",
                    f"{w['collect_s']:.4f}")
    console.print(tab)
    console.print(f"total {r.get('total_s', 0):.4f} s = distribute {r.get('distribute_s', 0):.4f} + sort "
                  f"{r.get('sort_s', 0):.4f} + collect {r.get('collect_s', 0):.4f} + merge {r.get('merge_s', 0):.4f}; "
                  f"checksum {r.get('checksum')} (local sort {r.get('reference')})")


def _print_mpj(r: dict) -> None:
    tab = Table(title=f"MPJ Express on {r.get('ranks')} ranks: latency p50 / p99 ms")
    for c in ("bytes", "mpj ping-pong", "socket ping-pong", f"bcast ({r.get('ranks')} ranks)"):
        tab.add_column(c, justify="right")
    sock = {z["bytes"]: z for z in r.get("socket_pingpong") or []}
    bc = {z["bytes"]: z for z in r.get("bcast") or []}

    def ms(z: dict | None) -> str:
        return f"{z['latency_s']['p50'] * 1e3:.3f} / {z['latency_s']['p99'] * 1e3:.3f}" if z else "-"
    for z in r.get("pingpong") or []:
        tab.add_row(str(z["bytes"]), ms(z), ms(sock.get(z["bytes"])), ms(bc.get(z["bytes"])))
    console.print(tab)
    b = r.get("barrier") or {}
    if b.get("n"):
        console.print(f"barrier p50 {b['p50'] * 1e3:.3f} ms, p99 {b['p99'] * 1e3:.3f} ms; "
                      f"elapsed {r['elapsed_s']:.2f} s")


def _checked(model: Any, values: dict[str, Any]) -> Any:
    """``model(**values)``; QoslabError ``workload: FIELD: problem`` (one line) when it does not hold."""
    from pydantic import ValidationError

    from ..yamlio import TEXT_OPTIONS, error_loc, format_loc, problem_text
    try:
        return model.model_validate(values, context={TEXT_OPTIONS: True})  # options are text: "400" is 400
    except ValidationError as e:
        raise QoslabError("workload: " + "; ".join(f"{format_loc(error_loc(err))}: {problem_text(err)}"
                                                   for err in e.errors())) from None


def _int_option(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        alt = " or 'all'" if name == "--rows-per-call" else ""
        raise QoslabError(f"{name} must be a number{alt}, got {value!r}") from None
