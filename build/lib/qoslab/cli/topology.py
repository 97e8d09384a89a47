"""``qoslab topology``: topology files (playbooks/topologies/*.yaml)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import QoslabError
from ..topology import Topology, load_topology
from ..units import format_rate
from .common import TopologyOpt, console, err_console

app = typer.Typer(help="Topology files (playbooks/topologies/*.yaml).", no_args_is_help=True)


@app.command("validate")
def topology_validate(files: list[Path] = typer.Argument(..., help="Topology files to check.")) -> None:
    """Validate topology files; print one line per file (errors name file, line and field)."""
    bad = 0
    for f in files:
        try:
            t = load_topology(f)
            console.print(f"[green]ok[/] {escape(str(f))}: {t.name}, {len(t.hosts)} hosts, "
                          f"{format_rate(t.link.rate)} links")
        except QoslabError as e:
            bad += 1
            err_console.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    raise typer.Exit(1 if bad else 0)


@app.command("show")
def topology_show(topology: Path | None = TopologyOpt) -> None:
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
