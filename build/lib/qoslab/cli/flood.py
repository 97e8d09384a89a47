"""``qoslab flood``: congestion with D-ITG or iperf3 (traffic-gen/*.yaml)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import QoslabError
from ..units import format_rate
from .common import TopologyOpt, console, err_console, running_testbed

app = typer.Typer(help="Congestion with D-ITG or iperf3 (traffic-gen/*.yaml).", no_args_is_help=True)


@app.command("run")
def flood_run(definition: Path = typer.Argument(..., help="Flood definition, e.g. traffic-gen/thesis-flood.yaml."),
              duration: float = typer.Option(10.0, help="Seconds to flood."),
              out: Path = typer.Option(Path("results/flood"), help="Folder for the generator's logs and "
                                       "flood-result.json."),
              generator: str | None = typer.Option(None, help="Traffic generator: ditg | iperf3 (default: the "
                                                   "flood file's `generator:`, else ditg)."),
              executor: str | None = typer.Option(None, help="How to reach the hosts: netns (testbed default) | "
                                                  "ssh (a cluster's default)."),
              confirm_flood: str | None = typer.Option(None, "--confirm-flood", metavar="TOPOLOGY",
                                                       help="Allow a flood on a real cluster: its topology's name."),
              topology: Path | None = TopologyOpt) -> None:
    """Run a flood on the testbed (or a cluster) for --duration seconds and print per-flow results
    as the generator measured them (ITGDec for D-ITG, the servers' reports for iperf3)."""
    from ..executors.nodes import Nodes
    from ..topology import load_topology
    from ..trafficgen import confirm_cluster_flood, load_flood, open_flood

    defn = load_flood(definition)
    if duration <= 0:
        raise QoslabError(f"--duration must be > 0 s, got {duration:g}")
    topo = load_topology(topology)
    tb = running_testbed(topology) if topo.environment == "embedded" else None
    confirm_cluster_flood(topo, confirm_flood)
    nodes = Nodes(executor or ("netns" if tb else "ssh"), topo, testbed=tb, local_root=out.resolve(),
                  run_id=f"flood-{topo.name}")
    try:
        fr = open_flood(defn, topo, nodes.executor_of, out, generator=generator, duration_s=duration)
        try:
            fr.start()
            with console.status(f"flooding for {duration:g} s with {fr.name} ..."):
                fr.wait()
        finally:
            r = fr.stop()
    finally:
        nodes.close()
    tab = Table(title=f"flood {r.name} ({fr.name}): {duration:g} s, link {format_rate(topo.link.rate)}")
    for c in ("flow", "-C", "asked pkt/s", "sent pkt/s", "recv Mbit/s", "of link", "loss %", "delay ms",
              "jitter ms"):
        tab.add_column(c, justify="left" if c in ("flow", "pacing") else "right", no_wrap=c == "flow")
    for f in r.flows:
        pacing = "-" if f.itg_rate is None else f"{f.itg_rate}" + (" poll" if f.poll else " kernel"
                                                                     if f.pacing == "kernel" else "")
        if f.error:
            tab.add_row(f"{f.src}>{f.dst}", pacing, f"{f.requested_pps:.0f}", "[red]error[/]", "", "", "", "", "")
            continue
        tab.add_row(f"{f.src}>{f.dst}", pacing, f"{f.requested_pps:.0f}",
                    f"{f.sent_pps:.0f}" + ("[yellow]![/]" if f.shortfall else ""),
                    f"{f.received_wire_bps / 1e6:.1f}", f"{f.received_wire_bps / topo.link.rate:.0%}",
                    f"{f.loss_pct:.1f}", f"{f.delay_avg_s * 1000:.2f}" if f.generator == "ditg" else "-",
                    f"{f.jitter_s * 1000:.3f}")
    console.print(tab)
    if any(f.shortfall for f in r.flows):
        console.print("[yellow]![/] sent more than 5% below the asked rate: run `qoslab flood calibrate`")
    for e in r.errors:
        err_console.print(f"[red]error:[/] {escape(e)}", highlight=False, soft_wrap=True)
    console.print(f"result: {out / 'flood-result.json'}")
    raise typer.Exit(0 if r.ok else 1)


@app.command("validate")
def flood_validate(files: list[Path] = typer.Argument(..., help="Flood definitions to check."),
                   topology: Path | None = TopologyOpt) -> None:
    """Check flood definitions against a topology (hosts, safety interlock); print one line per
    file (errors name file, line and field)."""
    from ..topology import load_topology
    from ..trafficgen import load_flood, resolve

    topo = load_topology(topology)
    bad = 0
    for f in files:
        try:
            flows = resolve(load_flood(f), topo)
            console.print(f"[green]ok[/] {escape(str(f))}: {len(flows)} flows on {topo.name}")
        except QoslabError as e:
            bad += 1
            err_console.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    raise typer.Exit(1 if bad else 0)


@app.command("calibrate")
def flood_calibrate(definition: Path = typer.Argument(Path("traffic-gen/thesis-flood.yaml"),
                                                     help="Flood whose flows are measured together."),
                    max_multiple: float = typer.Option(2.0, help="Calibrate up to this multiple of the link rate."),
                    topology: Path | None = TopologyOpt) -> None:
    """Measure which ITGSend -C (without -poll) reaches which real rate here, and what -poll costs;
    store it so floods with pacing auto/plain ask for what they actually get."""
    from ..trafficgen import calibrate, load_flood
    from ..trafficgen.patterns import expand

    tb = running_testbed(topology)
    defn = expand(load_flood(definition), tb.topo)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        cal = calibrate(tb.topo, tb.executor, [(f.src, f.dst) for f in defn.flows], Path(d),
                        payload_bytes=defn.payload_bytes, max_multiple=max_multiple,
                        progress=lambda s: console.print(f"  {s}"))
    path = cal.save()
    console.print(f"calibration stored in {path}")
