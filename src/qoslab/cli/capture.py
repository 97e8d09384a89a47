"""``qoslab capture``: pcap4j capture and the thesis's traffic classes."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.table import Table

from ..errors import QoslabError
from ..topology import load_topology
from .common import TopologyOpt, console, running_testbed

app = typer.Typer(help="pcap4j capture and the thesis's traffic classes.", no_args_is_help=True)


def _print_classes(summary: dict, title: str) -> None:
    tab = Table(title=title)
    for c in ("class", "packets", "share", "bytes", "mean frame B", "in pkts", "out pkts", "DSCP"):
        tab.add_column(c, justify="left" if c in ("class", "DSCP") else "right")
    total = summary["packets"] or 1
    for name, c in summary["classes"].items():
        dscp = ", ".join(f"{k}:{v}" for k, v in sorted(c["dscp"].items(), key=lambda kv: -kv[1])[:3])
        tab.add_row(name, str(c["packets"]), f"{c['packets'] / total:.1%}", str(c["bytes"]),
                    f"{c['mean_frame_bytes']:.0f}" if c["mean_frame_bytes"] else "-",
                    str(c["in"]["packets"]), str(c["out"]["packets"]), dscp)
    console.print(tab)
    drops = summary.get("drops")
    console.print(f"{summary['packets']} packets over {summary['duration_s']:.2f} s; RMI mode {summary['mode']}"
                  + (f"; kernel drops {drops.get('pcap_dropped')}" if isinstance(drops, dict) else "")
                  + (f"; [yellow]file truncated: {summary['problem']}[/]" if summary.get("truncated") else ""))


@app.command("classify")
def capture_classify(file: Path = typer.Argument(..., help="pcap or pcapng file."),
                     host: str | None = typer.Option(None, help="Host (name or address) directions are relative to."),
                     rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                     out: Path = typer.Option(Path("results/capture"), help="Folder for summary.json, timeseries.csv."),
                     topology: Path | None = TopologyOpt) -> None:
    """Classify a capture file and print a Figure 9/10 style table (packets, mean frame length)."""
    from ..capture import classify_file

    ip = host
    if host and not host[0].isdigit():
        ip = load_topology(topology).host(host).ip
    s = classify_file(file, out, ip, rmi_mode)
    _print_classes(s, f"{file.name}: traffic classes" + (f" relative to {host}" if host else ""))
    console.print(f"summary: {out / 'summary.json'}, series: {out / 'timeseries.csv'}")


@app.command("live")
def capture_live(port: str = typer.Option("Gi1/0/21", help="SPAN destination port to listen on."),
                 duration: float = typer.Option(10.0, help="Seconds."),
                 host: str | None = typer.Option(None, help="Host directions are relative to."),
                 rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                 write: Path | None = typer.Option(None, help="Also keep the raw capture here."),
                 out: Path = typer.Option(Path("results/capture"), help="Output folder."),
                 topology: Path | None = TopologyOpt) -> None:
    """Capture on a SPAN destination port of the testbed for --duration seconds."""
    from ..capture import LiveCapture
    from ..topology import canonical_port, linux_ifname

    tb = running_testbed(topology)
    p = canonical_port(port)
    if p not in tb.topo.switch.span_destinations:
        raise QoslabError(f"{p} is not a SPAN destination of {tb.topo.name} "
                          f"({', '.join(tb.topo.switch.span_destinations)})")
    ip = tb.topo.host(host).ip if host and not host[0].isdigit() else host
    cap = LiveCapture(tb.span_executor(), linux_ifname(p), out, ip, rmi_mode, write)
    cap.start()
    try:
        with console.status(f"capturing on {p} for {duration:g} s ..."):
            time.sleep(duration)
    finally:
        s = cap.stop()
    _print_classes(s, f"live capture on {p}")
