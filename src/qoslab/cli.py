"""The ``qoslab`` command line (typer + rich).

Every expected failure is a QoslabError and is printed as one clear message (exit code 2);
an interrupt (Ctrl-C or SIGTERM) cleans up what the command started and exits 130.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from . import __version__
from .errors import QoslabError
from .topology import Topology, load_topology
from .units import format_rate


def _width(stream) -> int | None:
    """Output to a file or pipe (logs, `make run | tee`) is 120 columns wide instead of rich's 80,
    so tables and comparison lines are not wrapped or truncated; COLUMNS still overrides."""
    return None if stream.isatty() or "COLUMNS" in os.environ else 120


console = Console(width=_width(sys.stdout))
err_console = Console(stderr=True, width=_width(sys.stderr))

app = typer.Typer(
    help="qoslab: network QoS experiments on cluster traffic (embedded testbed, virtual Catalyst 3750).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
testbed_app = typer.Typer(help="The embedded testbed: hosts as network namespaces, a bridge as the switch.",
                          no_args_is_help=True)
topology_app = typer.Typer(help="Topology files (playbooks/topologies/*.yaml).", no_args_is_help=True)
app.add_typer(testbed_app, name="testbed")
app.add_typer(topology_app, name="topology")
workload_app = typer.Typer(help="The distributed RMI RayTracer (Java Grande Forum section 3).", no_args_is_help=True)
app.add_typer(workload_app, name="workload")
flood_app = typer.Typer(help="Congestion with D-ITG (traffic-gen/*.yaml).", no_args_is_help=True)
app.add_typer(flood_app, name="flood")
switch_app = typer.Typer(help="QoS profiles, Catalyst configs, Netmiko push, the virtual Catalyst 3750.",
                         no_args_is_help=True)
app.add_typer(switch_app, name="switch")
capture_app = typer.Typer(help="pcap4j capture and the thesis's traffic classes.", no_args_is_help=True)
app.add_typer(capture_app, name="capture")
campaign_app = typer.Typer(help="Campaigns: trials over a matrix of conditions, resumable, with statistics.",
                           no_args_is_help=True)
app.add_typer(campaign_app, name="campaign")

TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology file (default: playbooks/topologies/ecenet.yaml).",
                           show_default=False)


def _version(value: bool) -> None:
    if value:
        console.print(f"qoslab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """qoslab command line."""


def _testbed(topology: Optional[Path]):
    from .testbed import Testbed

    return Testbed(load_topology(topology))


# --------------------------------------------------------------------------------------------- topology
@topology_app.command("validate")
def topology_validate(files: list[Path] = typer.Argument(..., help="Topology files to check.")) -> None:
    """Validate topology files; print one line per file (errors name file, line and field)."""
    bad = 0
    for f in files:
        try:
            t = load_topology(f)
            console.print(f"[green]ok[/] {f}: {t.name}, {len(t.hosts)} hosts, {format_rate(t.link.rate)} links")
        except QoslabError as e:
            bad += 1
            err_console.print(f"[red]error[/] {e}")
    raise typer.Exit(1 if bad else 0)


@topology_app.command("show")
def topology_show(topology: Optional[Path] = TopologyOpt) -> None:
    """Print a topology's hosts, ports and link settings."""
    t = load_topology(topology)
    _print_topology(t)


def _print_topology(t: Topology) -> None:
    tab = Table(title=f"topology {t.name} ({t.environment}): {t.description}")
    for c in ("host", "address", "switch port"):
        tab.add_column(c)
    for h in t.hosts:
        tab.add_row(h.name, str(h.address), h.port)
    console.print(tab)
    console.print(f"links {format_rate(t.link.rate)}, HTB burst {t.link.burst_bytes} B ({t.link.burst_ms:g} ms), "
                  f"offloads {'on' if t.link.offloads else 'off'}; buffers: switch port "
                  f"{t.buffers.switch_port_bytes} B, host {t.buffers.host_bytes} B; switch {t.switch.model} "
                  f"mgmt {t.switch.management.host}:{t.switch.management.port}, SPAN destinations "
                  f"{', '.join(t.switch.span_destinations) or 'none'}")


# --------------------------------------------------------------------------------------------- testbed
@testbed_app.command("up")
def testbed_up(topology: Optional[Path] = TopologyOpt) -> None:
    """Build the testbed (idempotent; removes leftovers of a crashed run first)."""
    tb = _testbed(topology)
    rep = tb.up()
    if rep.stale_removed:
        console.print(f"removed {len(rep.stale_removed)} stale namespaces of an earlier run")
    if rep.built:
        console.print(f"[green]testbed {tb.topo.name} up[/]: {len(tb.topo.hosts)} hosts, "
                      f"{len(tb.plan.namespaces)} namespaces, {format_rate(tb.topo.link.rate)} links "
                      f"in {rep.seconds:.2f} s")
    else:
        console.print(f"testbed {tb.topo.name} is already up (nothing changed)")


@testbed_app.command("down")
def testbed_down(topology: Optional[Path] = TopologyOpt) -> None:
    """Remove the testbed: end processes inside it, delete every namespace, veth and bridge."""
    tb = _testbed(topology)
    rep = tb.down()
    if rep.namespaces:
        console.print(f"testbed {tb.topo.name} down: removed {len(rep.namespaces)} namespaces, ended "
                      f"{len(rep.killed_pids)} processes in {rep.seconds:.2f} s")
    else:
        console.print(f"testbed {tb.topo.name} was not up (nothing to remove)")


@testbed_app.command("status")
def testbed_status(topology: Optional[Path] = TopologyOpt,
                   as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables.")) -> None:
    """Show hosts, addresses, ports, qdiscs and per-port counters."""
    tb = _testbed(topology)
    st = tb.status()
    if as_json:
        print(json.dumps(asdict(st), indent=1))
        return
    if not st.up:
        left = f" ({len(st.namespaces)} leftover namespaces: run `qoslab testbed up` or `down`)" if st.namespaces else ""
        console.print(f"testbed {st.name} is down{left}")
        raise typer.Exit(1)
    num = {"justify": "right"}
    tab = Table(title=f"testbed {st.name}: hosts (namespace qsl-{st.name}-HOST, eth0, "
                f"/{tb.topo.hosts[0].address.network.prefixlen})")
    for c in ("host", "address", "port", "state"):
        tab.add_column(c)
    for c in ("tx pkts", "rx pkts"):
        tab.add_column(c, **num)
    tab.add_column("qdisc")
    tab.add_column("drops", **num)
    for h in tb.topo.hosts:
        p = st.hosts[h.name]
        tab.add_row(h.name, h.ip, h.port, p.state, str(p.tx_packets), str(p.rx_packets),
                    _qdiscs(p.qdiscs), str(p.qdisc_drops))
    console.print(tab)
    tab = Table(title=f"switch {tb.topo.switch.model} ({tb.switch_ns}, bridge br0): egress per port")
    for c in ("port", "state"):
        tab.add_column(c)
    for c in ("tx pkts", "tx bytes", "rx pkts"):
        tab.add_column(c, **num)
    tab.add_column("qdisc")
    for c in ("drops", "queued B"):
        tab.add_column(c, **num)
    for dev, p in st.switch_ports.items():
        name = dev.replace("-", "/") + (" SPAN" if "SPAN" in p.alias else "")
        tab.add_row(name, p.state, str(p.tx_packets), str(p.tx_bytes), str(p.rx_packets),
                    _qdiscs(p.qdiscs), str(p.qdisc_drops), str(p.qdisc_backlog_bytes))
    console.print(tab)
    console.print(f"management endpoint {st.management}: "
                  f"{'virtual Catalyst listening' if st.management_listening else 'nothing listening'}")


def _qdiscs(kinds: list[str]) -> str:
    """``["htb 1:", "bfifo 10:"]`` -> ``htb>bfifo``."""
    return ">".join(k.split()[0] for k in kinds) or "-"


@testbed_app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def testbed_exec(host: str = typer.Argument(..., help="Host name, e.g. jp-1."),
                 command: list[str] = typer.Argument(..., help="Command to run (after --)."),
                 topology: Optional[Path] = TopologyOpt) -> None:
    """Run a command inside a host: qoslab testbed exec jp-1 -- ping -c1 198.18.0.2"""
    import subprocess

    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    ns = tb.namespace(host)
    try:
        rc = subprocess.call(["ip", "netns", "exec", ns, *command])
    except FileNotFoundError:
        raise QoslabError(f"on {host}: command not found: {command[0]}") from None
    raise typer.Exit(rc)


@testbed_app.command("ping")
def testbed_ping(topology: Optional[Path] = TopologyOpt) -> None:
    """Ping every host from every other host; exit 1 unless all pairs answer."""
    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    ok = _ping_report(tb)
    raise typer.Exit(0 if ok else 1)


def _ping_report(tb) -> bool:
    res = tb.ping_matrix()
    names = tb.topo.host_names
    tab = Table(title="ping RTT (ms), row = source")
    tab.add_column("")
    for n in names:
        tab.add_column(n, justify="right")
    for s in names:
        tab.add_row(s, *["-" if s == d else (f"{res[(s, d)]:.3f}" if res[(s, d)] is not None else "[red]FAIL[/]")
                         for d in names])
    console.print(tab)
    good = sum(v is not None for v in res.values())
    console.print(f"{good}/{len(res)} host pairs reachable")
    return good == len(res)


@testbed_app.command("iperf")
def testbed_iperf(src: str = typer.Argument(..., help="Sending host."),
                  dst: str = typer.Argument(..., help="Receiving host."),
                  seconds: float = typer.Option(5.0, help="Test length, seconds."),
                  topology: Optional[Path] = TopologyOpt) -> None:
    """TCP throughput between two hosts with iperf3, compared with the link rate."""
    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    _iperf_report(tb, src, dst, seconds)


def _iperf_report(tb, src: str, dst: str, seconds: float) -> float:
    r = tb.iperf_tcp(src, dst, seconds)
    share = r["bits_per_second"] / tb.topo.link.rate
    console.print(f"iperf3 TCP {src} -> {dst}: {format_rate(r['bits_per_second'])} over {r['seconds']:.1f} s "
                  f"({share:.1%} of the {format_rate(tb.topo.link.rate)} link), {r['retransmits']} retransmits")
    return share


@testbed_app.command("caps")
def testbed_caps(refresh: bool = typer.Option(False, help="Probe again instead of using the cache.")) -> None:
    """Which tc qdiscs, filters, actions and link kinds this kernel has."""
    from .testbed import REQUIRED_TC, probe_capabilities

    caps = probe_capabilities(refresh=refresh)
    tab = Table(title=f"traffic control on kernel {caps.kernel}")
    for c in ("kind", "type", "available", "needed by qoslab"):
        tab.add_column(c)
    for typ, d in (("qdisc", caps.qdiscs), ("filter", caps.filters), ("action", caps.actions), ("link", caps.links)):
        for k, v in d.items():
            tab.add_row(k, typ, "[green]yes[/]" if v else "[red]no[/]", "required" if k in REQUIRED_TC else "")
    console.print(tab)


@testbed_app.command("selftest")
def testbed_selftest(topology: Optional[Path] = TopologyOpt,
                     seconds: float = typer.Option(5.0, help="iperf3 test length, seconds."),
                     keep: bool = typer.Option(False, help="Leave the testbed up afterwards.")) -> None:
    """Bring the testbed up, show its status, prove connectivity (all-pairs ping, iperf3 at the
    link rate), and take it down again (unless --keep)."""
    tb = _testbed(topology)
    try:
        testbed_up(topology)
        testbed_status(topology, as_json=False)
        ok = _ping_report(tb)
        hosts = tb.topo.host_names
        share = _iperf_report(tb, hosts[1], hosts[0], seconds) if len(hosts) > 1 else 1.0
        good = ok and 0.9 <= share <= 1.1
        console.print("[green]selftest passed[/]" if good else "[red]selftest FAILED[/]")
    finally:
        if not keep:
            testbed_down(topology)
    raise typer.Exit(0 if good else 1)


# --------------------------------------------------------------------------------------------- workload
@workload_app.command("run")
def workload_run(
    hosts: str = typer.Option("jp-1,jp-2,jp-3,jp-4", help="Comma-separated hosts; the first is the head node."),
    size: str = typer.Option("A", help="A (150x150), B (500x500) or a width in pixels."),
    rows_per_call: str = typer.Option("all", help="Rows per RMI call, or 'all'."),
    codec: str = typer.Option("serializable", help="serializable | externalizable"),
    frames: int = typer.Option(1, help="Render the scene this many times."),
    dscp: Optional[int] = typer.Option(None, help="DSCP (0-63) marking all RMI sockets, both directions."),
    registry_port: int = typer.Option(1099, help="RMI registry port."),
    export_port: int = typer.Option(1100, help="Render service export port."),
    timeout: float = typer.Option(120.0, help="Seconds one RMI call may take."),
    out: Path = typer.Option(Path("results/workload"), help="Folder for logs and the result JSON."),
    topology: Optional[Path] = TopologyOpt,
) -> None:
    """Run the RayTracer on testbed hosts (the testbed must be up) and print its result."""
    from .workload import WorkloadSettings, run_workload

    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    for n in names:
        tb.namespace(n)  # unknown host -> clear error
    rpc: int | str = "all" if rows_per_call == "all" else _int_option("--rows-per-call", rows_per_call)
    s = WorkloadSettings(hosts=names, size=size, rows_per_call=rpc, codec=codec, frames=frames, dscp=dscp,
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


# --------------------------------------------------------------------------------------------- flood
@flood_app.command("run")
def flood_run(definition: Path = typer.Argument(..., help="Flood definition, e.g. traffic-gen/thesis-flood.yaml."),
              duration: float = typer.Option(10.0, help="Seconds to flood."),
              out: Path = typer.Option(Path("results/flood"), help="Folder for D-ITG logs and flood-result.json."),
              topology: Optional[Path] = TopologyOpt) -> None:
    """Run a flood on the testbed for --duration seconds and print per-flow results from ITGDec."""
    from .trafficgen import FloodRun, load_flood

    defn = load_flood(definition)
    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    with FloodRun(defn, tb.topo, tb.executor, out, duration_s=duration) as fr:
        fr.start()
        with console.status(f"flooding for {duration:g} s ..."):
            fr.wait()
    r = fr.result
    tab = Table(title=f"flood {r.name}: {duration:g} s, link {format_rate(tb.topo.link.rate)}")
    for c in ("flow", "-C", "asked pkt/s", "sent pkt/s", "recv Mbit/s", "of link", "loss %", "delay ms",
              "jitter ms"):
        tab.add_column(c, justify="left" if c in ("flow", "pacing") else "right", no_wrap=c == "flow")
    for f in r.flows:
        pacing = f"{f.itg_rate}" + (" poll" if f.poll else "")
        if f.error:
            tab.add_row(f"{f.src}>{f.dst}", pacing, f"{f.requested_pps:.0f}", "[red]error[/]", "", "", "", "", "")
            continue
        tab.add_row(f"{f.src}>{f.dst}", pacing, f"{f.requested_pps:.0f}",
                    f"{f.sent_pps:.0f}" + ("[yellow]![/]" if f.shortfall else ""),
                    f"{f.received_wire_bps / 1e6:.1f}", f"{f.received_wire_bps / tb.topo.link.rate:.0%}",
                    f"{f.loss_pct:.1f}", f"{f.delay_avg_s * 1000:.2f}", f"{f.jitter_s * 1000:.3f}")
    console.print(tab)
    if any(f.shortfall for f in r.flows):
        console.print("[yellow]![/] sent more than 5% below the asked rate: run `qoslab flood calibrate`")
    for e in r.errors:
        err_console.print(f"[red]error:[/] {e}")
    console.print(f"result: {out / 'flood-result.json'}")
    raise typer.Exit(0 if r.ok else 1)


@flood_app.command("calibrate")
def flood_calibrate(definition: Path = typer.Argument(Path("traffic-gen/thesis-flood.yaml"),
                                                     help="Flood whose flows are measured together."),
                    max_multiple: float = typer.Option(2.0, help="Calibrate up to this multiple of the link rate."),
                    topology: Optional[Path] = TopologyOpt) -> None:
    """Measure which ITGSend -C (without -poll) reaches which real rate here, and what -poll costs;
    store it so floods with pacing auto/plain ask for what they actually get."""
    from .trafficgen import calibrate, load_flood

    defn = load_flood(definition)
    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        cal = calibrate(tb.topo, tb.executor, [(f.src, f.dst) for f in defn.flows], Path(d),
                        payload_bytes=defn.payload_bytes, max_multiple=max_multiple,
                        progress=lambda s: console.print(f"  {s}"))
    path = cal.save()
    console.print(f"calibration stored in {path}")


# --------------------------------------------------------------------------------------------- switch
def _groups(group: list[str]) -> dict[str, list[str]]:
    out = {}
    for g in group:
        name, _, hosts = g.partition("=")
        if not hosts:
            raise QoslabError(f"--group must be NAME=host,host,...; got {g!r}")
        out[name] = [h.strip() for h in hosts.split(",") if h.strip()]
    return out


GroupOpt = typer.Option([], "--group", "-g", help="Override a profile group: workload=jp-1,jp-2 (repeatable).")


@switch_app.command("render")
def switch_render(profile: str = typer.Argument(..., help="Profile name (qos-profiles/NAME.yaml) or file."),
                  group: list[str] = GroupOpt, topology: Optional[Path] = TopologyOpt) -> None:
    """Print the IOS configuration lines of a QoS profile for a topology."""
    from .profiles import load_profile, render

    for line in render(load_profile(profile), load_topology(topology), _groups(group)):
        print(line)


@switch_app.command("push")
def switch_push(profile: str = typer.Argument(..., help="Profile name or file."),
                device: Optional[Path] = typer.Option(None, help="Device YAML (host, port, credentials_file, "
                                                      "known_hosts); default: the testbed's virtual Catalyst."),
                group: list[str] = GroupOpt,
                out: Path = typer.Option(Path("results/switch"), help="Folder for running-config backups."),
                topology: Optional[Path] = TopologyOpt) -> None:
    """Push a QoS profile with Netmiko: backup, diff (hier-config), send, verify, write memory;
    roll back on any error."""
    from .profiles import load_profile, render
    from .switch import Device, push, testbed_device
    from .yamlio import load_model

    topo = load_topology(topology)
    prof = load_profile(profile)
    lines = render(prof, topo, _groups(group))
    dev = load_model(device, Device) if device else testbed_device(topo)
    with console.status(f"pushing {prof.name} to {dev.host}:{dev.port} ..."):
        rep = push(lines, dev, out, prof.name)
    if not rep.changed:
        console.print(f"{prof.name}: the switch already has this configuration (nothing sent)")
    else:
        console.print(f"[green]{prof.name} pushed[/]: {len(rep.lines_sent)} lines, verified, saved "
                      f"({rep.seconds['total']:.2f} s); backup {rep.backup}")


@switch_app.command("show")
def switch_show(device: Optional[Path] = typer.Option(None, help="Device YAML; default: the virtual Catalyst."),
                port: Optional[str] = typer.Option(None, help="Also show queueing and statistics of this port."),
                topology: Optional[Path] = TopologyOpt) -> None:
    """Print the switch's QoS state (show mls qos, queue-sets, ACLs, class-maps, policy-maps)."""
    from .switch import Device, connect, testbed_device
    from .yamlio import load_model

    topo = load_topology(topology)
    dev = load_model(device, Device) if device else testbed_device(topo)
    conn = connect(dev)
    try:
        cmds = ["show mls qos", "show mls qos queue-set", "show access-lists", "show class-map", "show policy-map"]
        if port:
            cmds += [f"show mls qos interface {port} queueing", f"show mls qos interface {port} statistics"]
        for c in cmds:
            console.print(f"[bold]{c}[/]")
            print(conn.send_command(c))
    finally:
        conn.disconnect()


@switch_app.command("serve")
def switch_serve(topology: Optional[Path] = TopologyOpt,
                 no_apply: bool = typer.Option(False, "--no-apply", help="Do not touch tc (CLI only).")) -> None:
    """Run the virtual Catalyst 3750 of the testbed on its management endpoint (foreground)."""
    import asyncio

    from .vswitch import serve

    topo = load_topology(topology)
    mg = topo.switch.management
    err_console.print(f"virtual Catalyst {topo.switch.model} of {topo.name} on {mg.host}:{mg.port}")
    try:
        asyncio.run(serve(topo, apply=not no_apply))
    except OSError as e:
        raise QoslabError(f"cannot serve on {mg.host}:{mg.port}: {e.strerror}") from None


# --------------------------------------------------------------------------------------------- capture
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
                     f"{drops.get('dropped_interface')}, own {drops.get('dropped_own')})" if isinstance(drops, dict) else "")
                  + ("; [yellow]file truncated: " + str(summary["problem"]) + "[/]" if summary.get("truncated") else ""))


@capture_app.command("classify")
def capture_classify(files: list[Path] = typer.Argument(..., help="pcap/pcapng files or folders (recursively)."),
                     host: Optional[str] = typer.Option(None, help="Host (name or address) directions are relative to."),
                     rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                     tunnel: str = typer.Option("inner", help="inner | outer: which header classifies tunnelled packets."),
                     out: Path = typer.Option(Path("results/capture"), help="Folder for summary.json, timeseries.csv."),
                     topology: Optional[Path] = TopologyOpt) -> None:
    """Classify capture files in one JVM: a Figure 9/10 style table for one file, a combined
    table (one row per file, classes in packets) for several."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .capture import CLASSES, classify_files

    ip = host
    if host and not host[0].isdigit() and ":" not in host:
        ip = load_topology(topology).host(host).ip
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as prog:
        task = prog.add_task("classifying", total=None)
        res = classify_files(files, out, ip, rmi_mode, tunnel=tunnel,
                             on_file=lambda r: prog.update(task, completed=r["index"], total=r["of"],
                                                           description=Path(r["file"]).name[:40]))
    rows, done = res["files"], res["done"]
    if len(rows) == 1 and not done.get("combined"):
        if rows[0]["error"]:
            raise QoslabError(rows[0]["error"])
        s = json.loads(Path(rows[0]["summary"]).read_text())
        _print_classes(s, f"{Path(rows[0]['file']).name}: traffic classes" + (f" relative to {host}" if host else ""))
        for w in s.get("warnings", []):
            console.print(f"[yellow]warning:[/] {w}")
        console.print(f"summary: {out / 'summary.json'}, series: {out / 'timeseries.csv'}")
        return
    tab = Table(title=f"{done['files']} capture files, {done['packets']} packets in {done['seconds']:.2f} s")
    for c in ("file", "packets", *CLASSES, "undecodable", "warnings"):
        tab.add_column(c, justify="left" if c == "file" else "right")
    for r in rows:
        if r["error"]:
            tab.add_row(Path(r["file"]).name, "[red]error[/]", *[""] * (len(CLASSES) + 1), r["error"][-60:])
        else:
            tab.add_row(Path(r["file"]).name, str(r["packets"]), *[str(r["classes"][c]) for c in CLASSES],
                        str(r["undecodable"]), str(r["warnings"]))
    console.print(tab)
    console.print(f"per-file summaries under {out}; combined table: {done['combined']} (and combined.csv)")
    if done["failed"]:
        raise QoslabError(f"{done['failed']} of {done['files']} files could not be read (see the table)")


@capture_app.command("live")
def capture_live(port: str = typer.Option("Gi1/0/21", help="SPAN destination port to listen on."),
                 duration: float = typer.Option(10.0, help="Seconds."),
                 host: Optional[str] = typer.Option(None, help="Host directions are relative to."),
                 rmi_mode: str = typer.Option("flow", help="flow | ethereal"),
                 write: Optional[Path] = typer.Option(None, help="Also keep the raw capture here."),
                 out: Path = typer.Option(Path("results/capture"), help="Output folder."),
                 engine: str = typer.Option("dumpcap", help="dumpcap (measured lossless) | pcap4j"),
                 topology: Optional[Path] = TopologyOpt) -> None:
    """Capture on a SPAN destination port of the testbed for --duration seconds (drops counted)."""
    from .capture import LiveCapture
    from .executor import NetnsExecutor
    from .topology import canonical_port, linux_ifname

    tb = _testbed(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    p = canonical_port(port)
    if p not in tb.topo.switch.span_destinations:
        raise QoslabError(f"{p} is not a SPAN destination of {tb.topo.name} "
                          f"({', '.join(tb.topo.switch.span_destinations)})")
    ip = tb.topo.host(host).ip if host and not host[0].isdigit() else host
    cap = LiveCapture(NetnsExecutor("span", tb.span_ns), linux_ifname(p), out, ip, rmi_mode, write, engine=engine)
    cap.start()
    try:
        with console.status(f"capturing on {p} for {duration:g} s ..."):
            time.sleep(duration)
    finally:
        s = cap.stop()
    _print_classes(s, f"live capture on {p}")


# --------------------------------------------------------------------------------------------- campaign
@campaign_app.command("run")
def campaign_run(playbook: Optional[Path] = typer.Argument(None, help="Campaign playbook, e.g. playbooks/quick.yaml."),
                 trials: Optional[int] = typer.Option(None, help="Trials per condition (overrides the playbook)."),
                 out: Optional[Path] = typer.Option(None, help="Campaign folder (default results/campaigns/NAME-TIME)."),
                 resume: Optional[Path] = typer.Option(None, help="Finish the campaign in this folder.")) -> None:
    """Run a campaign (or --resume one): every trial stored as it ends, then trials.csv and stats.json."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .campaign import Runner, Store, campaign_stats, create, load_playbook

    means: dict[str, list[float]] = {}
    if resume:
        if not (resume / "trials.sqlite").exists():
            raise QoslabError(f"{resume} holds no campaign (no trials.sqlite)")
        folder = resume
        prior = Store(resume / "trials.sqlite")
        means = prior.done_times()  # running means continue over the trials done before the resume
        prior.close()
    else:
        if playbook is None:
            raise QoslabError("give a playbook, or --resume DIR")
        pb = load_playbook(playbook)
        folder = out or Path("results/campaigns") / f"{pb.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        create(pb, playbook, folder, trials)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=console) as prog:
        task = prog.add_task("campaign", total=None)

        def started(done: int, total: int) -> None:
            prog.update(task, total=total, completed=done)

        def trial(row: dict) -> None:
            prog.advance(task)
            if "error" in row:
                prog.console.print(f"[red]trial {row['idx']} ({row['condition']}) failed:[/] {row['error'][:200]}")
                return
            if not row["warmup"]:
                means.setdefault(row["condition"], []).append(row["elapsed_s"])
            m = means.get(row["condition"], [])
            mean = f"mean {sum(m) / len(m):.3f} s over {len(m)}" if m else "warm-up"
            prog.update(task, description=f"{row['condition']} #{row['trial']}")
            prog.console.print(f"  {row['idx']:4d} {row['condition']:<24} {row['elapsed_s']:7.3f} s   ({mean})")

        runner = Runner(folder, on_trial=trial, on_start=started, log=lambda s: prog.console.print(f"  {s}"))
        store = runner.run()
    counts = store.counts()
    console.print(f"trials: {counts}")
    if counts.get("pending") or counts.get("running"):
        raise QoslabError(f"campaign incomplete: resume with `qoslab campaign run --resume {folder}`")
    stats = campaign_stats(runner.pb, store, folder)
    _print_stats(stats)
    if (folder / "stats-network.json").exists():
        _print_stats(json.loads((folder / "stats-network.json").read_text()),
                     "network wait (render time minus the busiest worker's, seconds)")
    from .report import campaign_report

    with console.status("executing the report notebook ..."):
        page = campaign_report(folder)
    console.print(f"campaign folder: {folder}\nreport: {page}")


def _print_stats(stats: dict, title: str = "trial times (render phase, seconds)") -> None:
    tab = Table(title=title)
    for c in ("condition", "n", "mean", "sd", "95% CI", "median", "CV"):
        tab.add_column(c, justify="left" if c == "condition" else "right")
    for name, d in stats["conditions"].items():
        tab.add_row(name, str(d["n"]), f"{d['mean']:.3f}", f"{d['sd']:.3f}", f"{d['ci95'][0]:.3f}-{d['ci95'][1]:.3f}",
                    f"{d['median']:.3f}", f"{d['cv']:.1%}")
    console.print(tab)
    for c in stats.get("comparisons", []):
        console.print(f"  {c['b']} vs {c['a']}: {c['difference_s']:+.3f} s ({c['ratio']:.2f}x), Welch p = "
                      f"{c['welch_t_p']:.2g}, Mann-Whitney p = {c['mann_whitney_p']:.2g}")
    for r in stats.get("recovery", []):
        ratio = r["ratio"]
        console.print(f"  recovery of {r['treated']}: " + (f"{ratio:.1%}" if ratio is not None else "n/a (no slowdown)")
                      + f" of the slowdown {r['baseline']} -> {r['congested']}")


@app.command("report")
def report_cmd(folder: Optional[Path] = typer.Argument(None, help="Campaign folder."),
               thesis: bool = typer.Option(False, "--thesis", help="Report on the thesis's own data instead."),
               out: Path = typer.Option(Path("results/thesis-report"), help="Output folder for --thesis.")) -> None:
    """Statistics and the report notebook executed headless to report.html (+ PNG figures)."""
    from .report import campaign_report, thesis_report

    if thesis:
        page = thesis_report(out)
    elif folder is None:
        raise QoslabError("give a campaign folder, or --thesis")
    else:
        if not (folder / "trials.sqlite").exists():
            raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
        page = campaign_report(folder)
    console.print(f"report: {page}")


@campaign_app.command("status")
def campaign_status(folder: Path = typer.Argument(..., help="Campaign folder.")) -> None:
    """Trials done, pending, failed; running means per condition."""
    from .campaign import Store

    if not (folder / "trials.sqlite").exists():
        raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
    st = Store(folder / "trials.sqlite")
    console.print(f"{folder}: {st.counts()}")
    for c, v in st.done_times().items():
        console.print(f"  {c:<24} n={len(v):3d} mean {sum(v) / len(v):.3f} s")


def _on_sigterm(signum, frame):  # turn SIGTERM into the same clean-up path as Ctrl-C
    raise KeyboardInterrupt


def main() -> None:
    """Entry point of the ``qoslab`` command."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        app()
    except QoslabError as e:
        err_console.print(f"[red]error:[/] {e}", highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted: cleaned up what this command started")
        sys.exit(130)


if __name__ == "__main__":
    main()
