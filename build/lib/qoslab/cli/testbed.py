"""``qoslab testbed``: the embedded testbed: hosts as network namespaces, a bridge as the switch."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.table import Table

from ..errors import QoslabError
from ..units import format_rate
from .common import TopologyOpt, console, running_testbed, testbed_for, write_output

app = typer.Typer(help="The embedded testbed: hosts as network namespaces, a bridge as the switch.",
                  no_args_is_help=True)


@app.command("up")
def testbed_up(topology: Path | None = TopologyOpt,
               sshd: bool = typer.Option(False, "--sshd", help="Also start an sshd in every host (key-only, on "
                                                              "the host's address), for `executor: ssh`."),
               slurm: bool = typer.Option(False, "--slurm", help="Also start its Slurm cluster (slurmctld on the "
                                                                "head node, a slurmd per host), for `executor: slurm`; "
                                                                "a topology with a `slurm:` block starts it anyway.")
               ) -> None:
    """Build the testbed (idempotent; removes leftovers of a crashed run first)."""
    tb = testbed_for(topology)
    rep = tb.up()
    if rep.stale_removed:
        console.print(f"removed {len(rep.stale_removed)} stale namespaces of an earlier run")
    for note in rep.notes:
        console.print(note)
    if rep.built:
        console.print(f"[green]testbed {tb.topo.name} up[/]: {len(tb.topo.hosts)} hosts, "
                      f"{len(tb.plan.namespaces)} namespaces, {format_rate(tb.topo.link.rate)} links "
                      f"in {rep.seconds:.2f} s")
    else:
        console.print(f"testbed {tb.topo.name} is already up (nothing changed)")
    if rep.survivors:
        console.print(f"ended {len(rep.survivors)} processes left in its hosts by an interrupted run "
                      f"(PIDs {', '.join(map(str, rep.survivors[:10]))})")
    if sshd:
        started = tb.sshd_up()
        console.print(f"sshd listening on port 22 of {len(tb.topo.hosts)} hosts ({len(started)} started); "
                      f"client key and known_hosts in /run/qoslab/sshd-{tb.topo.name}/")
    if slurm or tb.topo.slurm is not None:
        started_slurm = tb.slurm_up()
        prefix, env = tb.slurm_client()
        console.print(f"Slurm cluster {'started' if started_slurm else 'running'}: slurmctld and slurmdbd "
                      f"(accounting) on {tb.topo.hosts[0].name}, slurmd on {len(tb.topo.hosts)} hosts; clients: "
                      f"{' '.join(prefix)} env SLURM_CONF={env['SLURM_CONF']} srun ...", soft_wrap=True,
                      highlight=False)


@app.command("down")
def testbed_down(topology: Path | None = TopologyOpt) -> None:
    """Remove the testbed: end processes inside it, delete every namespace, veth and bridge."""
    tb = testbed_for(topology)
    rep = tb.down()
    if rep.namespaces:
        console.print(f"testbed {tb.topo.name} down: removed {len(rep.namespaces)} namespaces, ended "
                      f"{len(rep.killed_pids)} processes in {rep.seconds:.2f} s")
    else:
        console.print(f"testbed {tb.topo.name} was not up (nothing to remove)")


@app.command("status")
def testbed_status(topology: Path | None = TopologyOpt,
                   as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables.")) -> None:
    """Show hosts, addresses, ports, qdiscs and per-port counters."""
    tb = testbed_for(topology)
    st = tb.status()
    if as_json:
        print(json.dumps(asdict(st), indent=1))
        return
    if not st.up:
        left = (f" ({len(st.namespaces)} leftover namespaces: run `qoslab testbed up` or `down`)"
                if st.namespaces else "")
        console.print(f"testbed {st.name} is down{left}")
        raise typer.Exit(1)
    tab = Table(title=f"testbed {st.name}: hosts (namespace qsl-{st.name}-HOST, eth0, "
                f"/{tb.topo.hosts[0].address.network.prefixlen})")
    for c in ("host", "address", "port", "state"):
        tab.add_column(c)
    for c in ("tx pkts", "rx pkts"):
        tab.add_column(c, justify="right")
    tab.add_column("qdisc")
    tab.add_column("drops", justify="right")
    for h in tb.topo.hosts:
        p = st.hosts[h.name]
        tab.add_row(h.name, h.ip, h.port, p.state, str(p.tx_packets), str(p.rx_packets),
                    _qdiscs(p.qdiscs), str(p.qdisc_drops))
    console.print(tab)
    tab = Table(title=f"switch {tb.topo.switch.model} ({tb.switch_ns}, bridge br0): egress per port")
    for c in ("port", "state"):
        tab.add_column(c)
    for c in ("tx pkts", "tx bytes", "rx pkts"):
        tab.add_column(c, justify="right")
    tab.add_column("qdisc")
    for c in ("drops", "queued B"):
        tab.add_column(c, justify="right")
    for dev, p in st.switch_ports.items():
        name = dev.replace("-", "/") + (" SPAN" if "SPAN" in p.alias else "")
        tab.add_row(name, p.state, str(p.tx_packets), str(p.tx_bytes), str(p.rx_packets),
                    _qdiscs(p.qdiscs), str(p.qdisc_drops), str(p.qdisc_backlog_bytes))
    console.print(tab)
    console.print(f"management endpoint {st.management}: "
                  f"{'virtual switch listening' if st.management_listening else 'nothing listening'}")


def _qdiscs(kinds: list[str]) -> str:
    """``["htb 1:", "bfifo 10:"]`` -> ``htb>bfifo``."""
    return ">".join(k.split()[0] for k in kinds) or "-"


@app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def testbed_exec(host: str = typer.Argument(..., help="Host name, e.g. jp-1."),
                 command: list[str] = typer.Argument(..., help="Command to run (after --)."),
                 topology: Path | None = TopologyOpt) -> None:
    """Run a command inside a host: qoslab testbed exec jp-1 -- ping -c1 198.18.0.2. On a topology
    with a ``cpu:`` block the command runs in the host's cgroups (its cpuset and CPU budget), as a
    trial's processes do: it cannot escape the budget the campaign enforces."""
    import os
    import subprocess

    from ..testbed.cpuplace import joiner

    tb = running_testbed(topology)
    ns = tb.namespace(host)
    files = tb.cpu.procs_files(host)
    gone = [f for f in files if not os.path.exists(f)]
    if gone:
        raise QoslabError(f"on {host}: its CPU budget's cgroup {Path(gone[0]).parent} is missing (bring the testbed "
                          "down and up again); the command would run outside it")
    try:
        rc = subprocess.call(["ip", "netns", "exec", ns, *command], preexec_fn=joiner(files))
    except FileNotFoundError:
        raise QoslabError(f"on {host}: command not found: {command[0]}") from None
    raise typer.Exit(rc)


@app.command("ping")
def testbed_ping(topology: Path | None = TopologyOpt) -> None:
    """Ping every host from every other host; exit 1 unless all pairs answer."""
    tb = running_testbed(topology)
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


@app.command("iperf")
def testbed_iperf(src: str = typer.Argument(..., help="Sending host."),
                  dst: str = typer.Argument(..., help="Receiving host."),
                  seconds: float = typer.Option(5.0, help="Test length, seconds."),
                  topology: Path | None = TopologyOpt) -> None:
    """TCP throughput between two hosts with iperf3, compared with the link rate."""
    tb = running_testbed(topology)
    _iperf_report(tb, src, dst, seconds)


def _iperf_report(tb, src: str, dst: str, seconds: float) -> float:
    r = tb.iperf_tcp(src, dst, seconds)
    share = r["bits_per_second"] / tb.topo.link.rate
    console.print(f"iperf3 TCP {src} -> {dst}: {format_rate(r['bits_per_second'])} over {r['seconds']:.1f} s "
                  f"({share:.1%} of the {format_rate(tb.topo.link.rate)} link), {r['retransmits']} retransmits")
    return share


@app.command("caps")
def testbed_caps(refresh: bool = typer.Option(False, help="Probe again instead of using the cache.")) -> None:
    """Which tc qdiscs, filters, actions and link kinds this kernel has."""
    from ..testbed import REQUIRED_TC, probe_capabilities

    caps = probe_capabilities(refresh=refresh)
    tab = Table(title=f"traffic control on kernel {caps.kernel}")
    for c in ("kind", "type", "available", "needed by qoslab"):
        tab.add_column(c)
    for typ, d in (("qdisc", caps.qdiscs), ("filter", caps.filters), ("action", caps.actions), ("link", caps.links)):
        for k, v in d.items():
            tab.add_row(k, typ, "[green]yes[/]" if v else "[red]no[/]", "required" if k in REQUIRED_TC else "")
    console.print(tab)


@app.command("selftest")
def testbed_selftest(topology: Path | None = TopologyOpt,
                     seconds: float = typer.Option(5.0, help="iperf3 test length, seconds."),
                     keep: bool = typer.Option(False, help="Leave the testbed up afterwards.")) -> None:
    """Bring the testbed up, show its status, prove connectivity (all-pairs ping, iperf3 at the
    link rate), and take it down again (unless --keep)."""
    tb = testbed_for(topology)
    try:
        testbed_up(topology, sshd=False)
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


@app.command("calibrate")
def testbed_calibrate(playbook: Path = typer.Argument(..., help="Campaign playbook, e.g. playbooks/quick.yaml."),
                      rates: str = typer.Option("10Mbit,20Mbit,50Mbit,100Mbit,200Mbit",
                                                help="Link rates to try, lowest first (comma-separated)."),
                      trials: int = typer.Option(2, min=2, help="Trials per congested condition and rate."),
                      out: Path | None = typer.Option(None, help="Folder (default results/calibrate/NAME-TIME)."),
                      ) -> None:
    """Find the highest link rate this machine emulates faithfully for the playbook's congested
    conditions (the fidelity monitor ok on every trial); write a topology variant at that rate and
    calibration.json with the per-rate evidence and the machine's facts."""
    import time

    from ..campaign.linkcal import calibrate_link
    from ..units import parse_rate

    ladder = [parse_rate(r.strip()) for r in rates.split(",") if r.strip()]
    folder = out or Path("results/calibrate") / f"{playbook.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    res = calibrate_link(playbook, folder, ladder, trials, log=lambda s: console.print(f"  {s}", markup=False))
    tab = Table(title=f"link-rate calibration on {res['machine']['nproc']} cores ({res['machine']['cpu_model']})")
    for c in ("rate", "verdicts", "port util (min)", "flood ratio (min)", "emulation share (max)",
              "outside cores (max)", "seconds"):
        tab.add_column(c)
    for e in res["evidence"]:
        verdicts = ", ".join(f"{k} {v}" for k, v in e["verdicts"].items() if v)
        tab.add_row(e["rate"], ("[green]" if e["ok"] else "[red]") + verdicts + "[/]",
                    _extreme(e["trials"], "port_util", min), _extreme(e["trials"], "flood_ratio", min),
                    _extreme(e["trials"], "emulation_share", max),
                    _extreme(e["trials"], "outside_cores", max), f"{e['seconds']:.0f}")
    console.print(tab)
    if res["chosen_rate"] is None:
        console.print(f"[red]no rate of {rates} was emulated faithfully[/]; evidence in {folder}/calibration.json")
        raise typer.Exit(1)
    console.print(f"chosen link rate: [bold]{res['chosen_rate']}/s[/] in {res['seconds']:.0f} s; topology "
                  f"{res['topology_file']} (use it as the playbook's topology:), evidence {folder}/calibration.json")


def _extreme(trials: list[dict], key: str, pick) -> str:  # noqa: ANN001 - min or max
    vals = [t[key] for t in trials if t.get(key) is not None]
    return f"{pick(vals):.3f}" if vals else "n/a"


@app.command("scale")
def testbed_scale(real: Path = typer.Option(..., "--from", help="A real cluster's description (REAL.yaml: "
                                                                  "link rate, switch buffer, RTT, CPU, run time)."),
                  topology: Path | None = TopologyOpt,
                  out: Path | None = typer.Option(None, help="Write the base topology with the derived link rate "
                                                             "and scale: block here.")) -> None:
    """Derive the testbed's scale-model settings from a real cluster (docs/scale-model.md, "Derivation")."""
    from ..scale.derive import derive, load_real_cluster
    from ..topology import default_topology_path, load_topology
    from ..yamlio import dump_yaml, read_yaml

    d = derive(load_real_cluster(real))
    if out is not None:
        load_topology(topology)  # the base must be a valid topology before anything is written
    frag = d.topology_fragment()
    console.print(f"time scale s = {d.time_scale:.4g} (testbed uncongested run / real)", markup=False)
    console.print(dump_yaml({**frag, "flood_rate": f"{d.flood_multiple:g}x"}), end="")
    for note in d.deviations:
        console.print(f"deviation: {note}")
    for note in d.unmatched:
        console.print(f"not scaled: {note}")
    if out is not None:
        base, _ = read_yaml(topology or default_topology_path())
        base = {**base, "link": {**base.get("link", {}), **frag["link"]}, "scale": frag["scale"]}
        if "cpu" in frag and isinstance(base.get("cpu"), dict):  # the capacity goes into the base's own cpu: block
            base["cpu"] = {**base["cpu"], **frag["cpu"]}
        base.get("buffers", {}).pop("switch_port_bytes", None)
        write_output(out, dump_yaml(base))
        load_topology(out)  # what was written reads back (ConfigError naming its line and field otherwise)
        console.print(f"topology written: {out}", markup=False)
