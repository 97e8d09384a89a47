"""``qoslab workload``: one run of a workload on testbed hosts: the distributed RMI RayTracer
(Java Grande Forum section 3, the default), ``matmul`` (reference 000's matrix multiplication over
four mechanisms), ``pingpong`` (reference 003's message-size sweep) or ``sort`` (reference 002's
distributed sort over socket, RMI and CORBA)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ..errors import QoslabError
from .common import TopologyOpt, console, running_testbed

app = typer.Typer(help="Run a workload (RayTracer, matmul, pingpong, sort) on testbed hosts.", no_args_is_help=True)


@app.command("run")
def workload_run(
    hosts: str = typer.Option("jp-1,jp-2,jp-3,jp-4", help="Comma-separated hosts; the first is the head node."),
    workload: str = typer.Option("raytracer", help="raytracer | matmul | pingpong | sort | mpj"),
    size: str | None = typer.Option(None, help="raytracer: A (150x150, default), B (500x500) or a width in "
                                               "pixels; matmul: the matrix order n (default 200); sort: integers "
                                               "(default 100000)."),
    servers: int = typer.Option(2, help="sort: sort servers (reference 002: 2, 4, 8), the hosts after the head."),
    rows_per_call: str = typer.Option("all", help="raytracer: rows per RMI call, or 'all'."),
    codec: str = typer.Option("serializable", help="raytracer: serializable | externalizable"),
    frames: int = typer.Option(1, help="raytracer: render the scene this many times."),
    supersample: int = typer.Option(1, help="raytracer: k x k rays per pixel (1 = JGF; compute k^2-fold)."),
    mechanism: str = typer.Option("socket", help="matmul: rmi-serializable | rmi-externalizable | socket | "
                                                 "datagram; pingpong: socket | rmi | datagram; "
                                                 "sort: socket | rmi | corba"),
    algorithm: str = typer.Option("spa", help="matmul: spa | mca"),
    max_bytes: int = typer.Option(1 << 20, help="pingpong, mpj: largest message (sizes double from 1 B)."),
    reps: int = typer.Option(25, help="pingpong, mpj: timed repetitions per size and operation."),
    port: int | None = typer.Option(None, help="matmul/pingpong (default 1200), sort (default 1300): the workers' "
                                               "base port (BASE..BASE+3)."),
    dscp: int | None = typer.Option(None, help="DSCP (0-63) marking every workload socket, both directions."),
    registry_port: int = typer.Option(1099, help="raytracer: RMI registry port."),
    export_port: int = typer.Option(1100, help="raytracer: render service export port."),
    timeout: float = typer.Option(120.0, help="Seconds one call (matmul: the call phase) may take."),
    out: Path = typer.Option(Path("results/workload"), help="Folder for logs and the result JSON."),
    topology: Path | None = TopologyOpt,
    playbook: Path | None = typer.Option(None, "--playbook", help="Run the workload of this campaign playbook "
                                                                  "(any kind, command included) once; the options "
                                                                  "above are then ignored."),
    condition: str | None = typer.Option(None, "--condition", help="With --playbook: the condition whose workload "
                                                                   "settings to use (default: the baseline)."),
) -> None:
    """Run a workload on testbed hosts (the testbed must be up) and print its result."""
    from qoslab.workloads.raytracer import WorkloadSettings, run_workload

    if playbook is not None:
        raise typer.Exit(_run_playbook(playbook, condition, out))
    tb = running_testbed(topology)
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    for n in names:
        tb.namespace(n)  # unknown host -> clear error
    if workload != "raytracer":
        opts = _java_opts(workload, timeout=timeout, port=port, mechanism=mechanism, dscp=dscp, max_bytes=max_bytes,
                          reps=reps, servers=servers, size=size, algorithm=algorithm)
        raise typer.Exit(_run_java(workload, names, opts, tb, out))
    rpc: int | str = "all" if rows_per_call == "all" else _int_option("--rows-per-call", rows_per_call)
    s = WorkloadSettings.checked(hosts=names, size=size or "A", rows_per_call=rpc, codec=codec, frames=frames,
                                 supersample=supersample,
                                 dscp=dscp, registry_port=registry_port, export_port=export_port, timeout_s=timeout)
    with console.status(f"rendering size {s.size} on {len(names)} workers ..."):
        run = run_workload(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    if "error" in r:
        raise QoslabError(f"workload failed: {r['error']} (logs in {out})")
    _print_raytracer(r, run.valid)
    console.print(f"result: {out / 'workload-result.json'}")
    raise typer.Exit(0 if run.valid or (r["reference"] is None and r["valid"] is None) else 1)


def _java_opts(workload: str, *, timeout: float, port: int | None, mechanism: str, dscp: int | None, max_bytes: int,
               reps: int, servers: int, size: str | None, algorithm: str) -> dict[str, Any]:
    """The settings of a non-RayTracer workload from the command's options (each kind takes its own)."""
    opts: dict[str, Any] = {"timeout_s": timeout} | ({"port": port} if port is not None else {})
    if workload != "mpj":
        opts |= {"mechanism": mechanism, "dscp": dscp}
    if workload == "mpj":
        opts |= {"max_bytes": max_bytes, "reps": reps}
    elif workload == "sort":
        opts |= {"servers": servers} | ({"size": _int_option("--size", size)} if size else {})
    else:
        opts |= {"algorithm": algorithm, "size": size or 200} if workload == "matmul" else \
            {"max_bytes": max_bytes, "reps": reps}
    return opts


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


def _run_java(kind: str, names: list[str], opts: dict[str, Any], tb: Any, out: Path) -> int:
    """matmul or pingpong (pingpong: the first two hosts); returns the exit code (0 = valid)."""
    from ..workloads import backend
    from ..workloads.base import WorkloadBase

    wl = backend(kind)
    hosts = names[:2] if kind == "pingpong" else names
    s: Any = _checked(wl.settings_model, {"kind": kind, "hosts": hosts, **opts})
    with console.status(f"{s.describe()} ..."):
        run = wl.run(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
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
        tab = Table(title=f"pingpong over {r.get('mechanism')}, {hosts[0]} -> {hosts[1]}, {r.get('reps')} reps")
        for c in ("bytes", "rtt median ms", "rtt p99 ms", "Mbit/s"):
            tab.add_column(c, justify="right")
        for z in r.get("sizes", []):
            tab.add_row(str(z["bytes"]), f"{z['rtt_s']['median'] * 1e3:.3f}", f"{z['rtt_s']['p99'] * 1e3:.3f}",
                        f"{z['throughput_bits_s'] / 1e6:.2f}")
        console.print(tab)
    ok = r.get("valid") is True
    console.print(("[green]valid[/]" if ok else f"[red]INVALID[/] {r.get('error') or ''}")
                  + f"; result: {out / 'workload-result.json'}")
    assert isinstance(s, WorkloadBase)
    return 0 if ok else 1


def _run_playbook(path: Path, condition: str | None, out: Path) -> int:
    """One run of a playbook's workload (a condition's settings, default the baseline's) on the
    testbed of its topology, which must be up; no profile is pushed and no flood started (`campaign
    run --trials 1 --smoke` runs whole conditions). Prints the result line's metrics; returns the
    exit code (0 = valid)."""
    from ..campaign.playbook import load_playbook, resolve_path
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
    with console.status(f"{cond.name}: {s.describe()} ..."):
        run = backend(s.kind).run(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    declared = parse_declaration(r) if r.get("valid") is True and r.get("metrics") else None
    if declared is not None:
        ms, values = declared
        for m in ms.all:
            console.print(f"  {m.name:<24} {fmt(values[m.name], decimals(m, [values[m.name]]), m.unit)}"
                          f"{'  (primary)' if m is ms.primary else ''}")
    else:
        console.print(f"  elapsed_s {r.get('elapsed_s', r.get('elapsed_render_s'))}")
    ok = r.get("valid") is True
    console.print(("[green]valid[/]" if ok else f"[red]INVALID[/] {r.get('error') or ''}")
                  + f"; result: {out / 'workload-result.json'}")
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
    from pydantic import ValidationError
    try:
        return model(**values)
    except ValidationError as e:
        raise QoslabError("workload: " + "; ".join(
            f"{'.'.join(map(str, err['loc'])) or 'settings'}: {err['msg'].removeprefix('Value error, ')}"
            for err in e.errors())) from None


def _int_option(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        alt = " or 'all'" if name == "--rows-per-call" else ""
        raise QoslabError(f"{name} must be a number{alt}, got {value!r}") from None
