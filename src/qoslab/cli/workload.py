"""``qoslab workload``: the distributed RMI RayTracer (Java Grande Forum section 3)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ..errors import QoslabError
from .common import TopologyOpt, console, running_testbed

app = typer.Typer(help="The distributed RMI RayTracer (Java Grande Forum section 3).", no_args_is_help=True)


@app.command("run")
def workload_run(
    hosts: str = typer.Option("jp-1,jp-2,jp-3,jp-4", help="Comma-separated hosts; the first is the head node."),
    size: str = typer.Option("A", help="A (150x150), B (500x500) or a width in pixels."),
    rows_per_call: str = typer.Option("all", help="Rows per RMI call, or 'all'."),
    codec: str = typer.Option("serializable", help="serializable | externalizable"),
    frames: int = typer.Option(1, help="Render the scene this many times."),
    dscp: int | None = typer.Option(None, help="DSCP (0-63) marking all RMI sockets, both directions."),
    registry_port: int = typer.Option(1099, help="RMI registry port."),
    export_port: int = typer.Option(1100, help="Render service export port."),
    timeout: float = typer.Option(120.0, help="Seconds one RMI call may take."),
    out: Path = typer.Option(Path("results/workload"), help="Folder for logs and the result JSON."),
    topology: Path | None = TopologyOpt,
) -> None:
    """Run the RayTracer on testbed hosts (the testbed must be up) and print its result."""
    from ..workload import WorkloadSettings, run_workload

    tb = running_testbed(topology)
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    for n in names:
        tb.namespace(n)  # unknown host -> clear error
    rpc: int | str = "all" if rows_per_call == "all" else _int_option("--rows-per-call", rows_per_call)
    s = WorkloadSettings.checked(hosts=names, size=size, rows_per_call=rpc, codec=codec, frames=frames, dscp=dscp,
                         registry_port=registry_port, export_port=export_port, timeout_s=timeout)
    with console.status(f"rendering size {size} on {len(names)} workers ..."):
        run = run_workload(s, tb.executor, lambda h: tb.topo.host(h).ip, out)
    r = run.result
    if "error" in r:
        raise QoslabError(f"workload failed: {r['error']} (logs in {out})")
    tab = Table(title=f"RayTracer size {r['size']} on {r['workers']} workers, rows/call {r['rows_per_call']}, "
                      f"{r['codec']}, {r['frames']} frame(s)")
    for c in ("host", "rows", "calls", "busy s"):
        tab.add_column(c, justify="left" if c == "host" else "right")
    for w in r["per_worker"]:
        tab.add_row(w["host"], str(w["rows"]), str(w["calls"]), f"{w['busy_s']:.2f}")
    console.print(tab)
    console.print(f"render {r['elapsed_render_s']:.3f} s, total {r['elapsed_total_s']:.3f} s, checksum "
                  f"{r['checksum']} (JGF reference {r['reference']}): "
                  + ("[green]valid[/]" if run.valid else "[red]INVALID[/]"))
    console.print(f"result: {out / 'workload-result.json'}")
    raise typer.Exit(0 if run.valid or (r["reference"] is None and r["valid"] is None) else 1)


def _int_option(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise QoslabError(f"{name} must be a number or 'all', got {value!r}") from None
