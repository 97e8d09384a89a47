"""``qoslab inventory`` and ``qoslab preflight``: a real cluster (or the testbed driven as one)."""

from __future__ import annotations

import os
from pathlib import Path

import typer
import yaml
from rich.table import Table

from ..errors import QoslabError
from .common import TopologyOpt, console, err_console, write_output


def inventory_cmd(topology: Path | None = TopologyOpt,
                  playbook: Path | None = typer.Option(None, "--playbook", "-p",
                                                       help="Group the workload hosts and flood of this playbook."),
                  flood: Path = typer.Option(Path("traffic-gen/thesis-flood.yaml"), help="Flood whose senders and "
                                             "receivers are grouped (a playbook's own flood wins)."),
                  out: Path | None = typer.Option(None, "--out", "-o", help="Write the inventory here (0600) "
                                                  "instead of printing it.")) -> None:
    """Write an Ansible inventory of a topology: head, workers, flood senders and receivers,
    capture host, the switch as a cisco.ios.ios network_cli host."""
    from ..campaign import load_playbook
    from ..inventory import build_inventory
    from ..testbed.sshd import sshd_dir
    from ..topology import load_topology
    from ..trafficgen import load_flood
    from ..trials.playbook import resolve_path

    workers = None
    if playbook is not None:
        pb = load_playbook(playbook)
        topo = load_topology(resolve_path(pb.topology))
        workers = list(dict.fromkeys(h for c in pb.conditions for h in pb.workload_of(c).hosts))
        flood = resolve_path(pb.flood)
    else:
        topo = load_topology(topology)
    defn = load_flood(resolve_path(str(flood))) if resolve_path(str(flood)).is_file() else None
    sshd = sshd_dir(topo.name) if topo.environment == "embedded" else None
    if sshd is not None and not (sshd / "known_hosts").exists():
        err_console.print(f"[yellow]note:[/] the testbed {topo.name} has no SSH servers yet: "
                          f"`qoslab testbed up --sshd -t {topology or 'TOPOLOGY'}`", soft_wrap=True, highlight=False)
    text = (f"# Ansible inventory of topology {topo.name} ({topo.environment}), written by `qoslab inventory`\n"
            + yaml.safe_dump(build_inventory(topo, workers=workers, flood=defn, sshd_dir=sshd), sort_keys=False))
    if out is None:
        print(text, end="")
        return
    write_output(out, text, mode=0o600)
    console.print(f"inventory of {topo.name}: {out}", markup=False)


def preflight_cmd(playbook: Path = typer.Argument(..., help="Campaign playbook, e.g. playbooks/quick-ssh.yaml."),
                  executor: str | None = typer.Option(None, help="Executor to check with (default: the "
                                                      "playbook's)."),
                  max_clock_offset_ms: float = typer.Option(20.0, help="Largest clock offset from the median "
                                                            "node (ms)."),
                  switch: bool = typer.Option(True, help="Also check the switch (show version).")) -> None:
    """Check a cluster (or the testbed) before a campaign: every node reachable, same tool and jar
    versions, clock offsets, ports free, no leftovers, link speed/duplex, switch model, SPAN
    wiring. Exit 1 naming node and check of every failure."""
    from ..campaign import load_playbook
    from ..executors.nodes import Nodes
    from ..preflight import preflight
    from ..testbed import Testbed
    from ..topology import load_topology
    from ..trials.playbook import resolve_path

    pb = load_playbook(playbook)
    topo = load_topology(resolve_path(pb.topology))
    tb = None
    if topo.environment == "embedded":
        tb = Testbed(topo)
        if not tb.is_up():
            raise QoslabError(f"testbed {topo.name} is not up (run `qoslab testbed up --sshd`)")
    nodes = Nodes(executor or pb.executor, topo, testbed=tb, run_id=f"preflight-{os.getpid()}")
    try:
        report = preflight(pb, nodes, max_clock_offset_ms=max_clock_offset_ms, check_switch=switch)
    finally:
        nodes.close()
    tab = Table(title=f"pre-flight of {pb.name} on {topo.name} (executor {nodes.kind})")
    for col in ("node", "check", "", "detail"):
        tab.add_column(col)
    for c in report.checks:
        tab.add_row(c.node, c.check, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
    console.print(tab)
    bad = report.failures
    console.print(f"{len(report.checks) - len(bad)}/{len(report.checks)} checks passed in {report.seconds:.2f} s")
    if bad:
        raise typer.Exit(1)
