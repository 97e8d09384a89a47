"""``qoslab capture``: pcap4j capture and the thesis's traffic classes."""

from __future__ import annotations

import ipaddress
import json
import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..capture import MAX_OPEN_CALLS
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
                  + (f"; dropped {drops.get('dropped_total')} (kernel {drops.get('dropped_kernel')}, interface "
                     f"{drops.get('dropped_interface')}, own {drops.get('dropped_own')})"
                     if isinstance(drops, dict) else "")
                  + (f"; [yellow]file truncated: {escape(summary['problem'])}[/]" if summary.get("truncated") else ""))


def host_address(host: str | None, topology: Path | None) -> str | None:
    """The address ``--host`` names: an IPv4 address as it is, else a host of the topology (its
    address). Raises QoslabError naming the option for anything else (``999.1.1.1``, an unknown
    host), before the capture tool starts."""
    if not host:
        return None
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    topo = load_topology(topology)
    if host in topo.host_names:
        return topo.host(host).ip
    raise QoslabError(f"--host {host!r}: neither an IPv4 address nor a host of topology {topo.name} "
                      f"({', '.join(topo.host_names)})")


@app.command("classify")
def capture_classify(files: list[Path] = typer.Argument(..., help="pcap/pcapng files or folders (recursively)."),
                     host: str | None = typer.Option(None, help="Host (name or address) directions are relative to."),
                     rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                     tunnel: str = typer.Option("inner", help="inner | outer: the header tunnelled packets go by."),
                     out: Path = typer.Option(Path("results/capture"), help="Folder for summary.json, timeseries.csv."),
                     calls: bool = typer.Option(False, "--calls", help="Also write calls.jsonl: one line per JRMP "
                                                "call (capture/README.md, JRMP calls)."),
                     max_open_calls: int = typer.Option(MAX_OPEN_CALLS, help="GIOP requests (MPJ messages) waiting "
                                                        "for replies at once before a file fails (bounds the tool's "
                                                        "memory on pathological captures)."),
                     topology: Path | None = TopologyOpt) -> None:
    """Classify capture files in one JVM: a Figure 9/10 style table for one file, a combined
    table (one row per file, classes in packets) for several."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..capture import classify_files

    ip = host_address(host, topology)
    _out_folder(out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as prog:
        task = prog.add_task("classifying", total=None)
        res = classify_files(files, out, ip, rmi_mode, tunnel=tunnel, calls=calls, max_open_calls=max_open_calls,
                             on_file=lambda r: prog.update(task, completed=r["index"], total=r["of"],
                                                           description=escape(Path(r["file"]).name[:40])))
    rows, done = res["files"], res["done"]
    if len(rows) == 1 and not done.get("combined"):
        if rows[0]["error"]:
            raise QoslabError(file_error(rows[0]["file"], rows[0]["error"]))
        s = json.loads(Path(rows[0]["summary"]).read_text())
        title = f"{Path(rows[0]['file']).name}: traffic classes" + (f" relative to {host}" if host else "")
        _print_classes(s, escape(title))
        for w in s.get("warnings", []):
            console.print(f"[yellow]warning:[/] {escape(w)}")
        console.print(f"summary: {out / 'summary.json'}, series: {out / 'timeseries.csv'}", markup=False)
        if calls:
            _print_calls(s, out / "calls.jsonl")
        return
    _print_combined(rows, done)


def file_error(path: str | Path, msg: str) -> str:
    """The capture tool's error ``msg`` about the file at ``path`` as one line that names the file
    (the tool's own messages do not always). Pure."""
    line = " ".join(str(msg).split())
    return line if str(path) in line else f"{path}: {line}"


def _out_folder(out: Path) -> None:
    """Make ``--out`` (a folder) or raise QoslabError naming it and the cause (an existing file,
    a read-only or missing parent), before the tool starts."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise QoslabError(f"--out {out}: exists and is not a folder") from None
    except OSError as e:
        raise QoslabError(f"--out {out}: cannot make the folder ({e.strerror})") from None


def _print_calls(summary: dict, path: Path) -> None:
    c = summary.get("calls") or {}
    console.print(f"JRMP calls: {c.get('calls', 0)} ({c.get('complete', 0)} complete, {c.get('with_rto', 0)} with an "
                  f"RTO, {c.get('retransmitted_in_calls', 0)} retransmitted segments in calls): {path}")


def _print_combined(rows: list[dict], done: dict) -> None:
    from ..capture import CLASSES

    tab = Table(title=f"{done['files']} capture files, {done['packets']} packets in {done['seconds']:.2f} s")
    for c in ("file", "packets", *CLASSES, "undecodable", "warnings"):
        tab.add_column(c, justify="left" if c == "file" else "right")
    for r in rows:
        if r["error"]:
            tab.add_row(escape(Path(r["file"]).name), "[red]error[/]", *[""] * (len(CLASSES) + 1),
                        escape(r["error"][-60:]))
        else:
            tab.add_row(escape(Path(r["file"]).name), str(r["packets"]), *[str(r["classes"][c]) for c in CLASSES],
                        str(r["undecodable"]), str(r["warnings"]))
    console.print(tab)
    console.print(f"per-file summaries beside it; combined table: {done['combined']} (and combined.csv)", markup=False)
    if done["failed"]:
        raise QoslabError(f"{done['failed']} of {done['files']} files could not be read (see the table)")


@app.command("live")
def capture_live(port: str = typer.Option("Gi1/0/21", help="SPAN destination port to listen on."),
                 duration: float = typer.Option(10.0, help="Seconds."),
                 host: str | None = typer.Option(None, help="Host directions are relative to."),
                 rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                 write: Path | None = typer.Option(None, help="Also keep the raw capture here."),
                 out: Path = typer.Option(Path("results/capture"), help="Output folder."),
                 engine: str = typer.Option("dumpcap", help="dumpcap (measured lossless) | pcap4j"),
                 calls: bool = typer.Option(False, "--calls", help="Also write calls.jsonl (one line per JRMP call)."),
                 max_open_calls: int = typer.Option(MAX_OPEN_CALLS, help="GIOP requests (MPJ messages) waiting "
                                                    "for replies at once before the capture fails (bounds the "
                                                    "tool's memory on a pathological stream)."),
                 topology: Path | None = TopologyOpt) -> None:
    """Capture on a SPAN destination port of the testbed for --duration seconds (drops counted)."""
    from ..capture import LiveCapture, check_max_open_calls
    from ..portnames import canonical_port, linux_ifname

    check_max_open_calls(max_open_calls)  # before the testbed is looked at
    if not duration > 0:
        raise QoslabError(f"--duration must be > 0 seconds, got {duration:g}")
    tb = running_testbed(topology)
    p = canonical_port(port)
    if p not in tb.topo.switch.span_destinations:
        raise QoslabError(f"{p} is not a SPAN destination of {tb.topo.name} "
                          f"({', '.join(tb.topo.switch.span_destinations)})")
    ip = host_address(host, topology)
    cap = LiveCapture(tb.span_executor(), linux_ifname(p), out, ip, rmi_mode, write, engine=engine, calls=calls,
                      max_open_calls=max_open_calls)
    cap.start()
    try:
        with console.status(f"capturing on {p} for {duration:g} s ..."):
            time.sleep(duration)
    finally:
        s = cap.stop()
    _print_classes(s, f"live capture on {p}")
    if calls:
        _print_calls(s, out / "calls.jsonl")
