"""``qoslab switch``: QoS profiles, switch configs, Netmiko push, the virtual switches."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import QoslabError
from ..topology import load_topology
from .common import TopologyOpt, console, err_console

app = typer.Typer(help="QoS profiles, switch configs, Netmiko push, the virtual switches (Catalyst 3750 and 9300, "
                  "Arista 7280R3).", no_args_is_help=True)


def _groups(group: list[str]) -> dict[str, list[str]]:
    out = {}
    for g in group:
        name, _, hosts = g.partition("=")
        if not hosts:
            raise QoslabError(f"--group must be NAME=host,host,...; got {g!r}")
        out[name] = [h.strip() for h in hosts.split(",") if h.strip()]
    return out


DeviceOpt = typer.Option("virtual", "--device", help="Switch: `virtual` (the testbed's virtual switch) or a device "
                         "file (`device: catalyst`, host, port, credentials_file, known_hosts).")
GroupOpt = typer.Option([], "--group", "-g", help="Override a profile group: workload=jp-1,jp-2 (repeatable).")


def _typed(profile: str) -> str:
    """A profile the user typed: a file that exists from the current directory made absolute (a
    playbook's references resolve against the repository instead), else as given."""
    from ..topology import repo_root

    p = Path(profile)
    typed_file = (p.suffix or len(p.parts) > 1) and p.exists()
    return str(p.resolve()) if typed_file and (repo_root() / p).resolve() != p.resolve() else profile


PlatformOpt = typer.Option(None, "--platform", help="Switch platform (catalyst3750, catalyst9300, arista_eos); "
                          "default: the topology's switch model's.")


@app.command("render")
def switch_render(profile: str = typer.Argument(..., help="Profile name (qos-profiles/NAME.yaml) or file."),
                  group: list[str] = GroupOpt, topology: Path | None = TopologyOpt,
                  platform: str | None = PlatformOpt) -> None:
    """Print the configuration lines of a QoS profile for a topology, in a platform's dialect."""
    from ..platforms import get_platform, platform_for_model
    from ..profiles import load_profile

    topo = load_topology(topology)
    if platform is not None and not platform.strip():
        raise QoslabError("--platform: empty: name a platform (catalyst3750, catalyst9300, arista_eos) or leave "
                          "the option out for the topology's own")
    plat = get_platform(platform if platform is not None else platform_for_model(topo.switch.model))
    for line in plat.render(load_profile(_typed(profile)), topo, _groups(group)):
        print(line)


@app.command("push")
def switch_push(profile: str = typer.Argument(..., help="Profile name or file."),
                device: str = DeviceOpt,
                group: list[str] = GroupOpt,
                out: Path = typer.Option(Path("results/switch"), help="Folder for running-config backups."),
                adopt: bool = typer.Option(False, "--adopt", help="Take over the profile's objects and lines the "
                                           "switch already has, identical (a switch an earlier qoslab configured)."),
                topology: Path | None = TopologyOpt) -> None:
    """Push a QoS profile with Netmiko: backup, diff (hier-config), send, verify, write memory;
    roll back on any error. Changes only what qoslab made (objects named QOSLAB-*, and what the
    switch's QOSLAB-OWNED list records); a change to anything else is refused, naming the line."""
    from ..platforms import get_platform, platform_for_model
    from ..profiles import load_profile
    from ..switch.backends import open_switch

    topo = load_topology(topology)
    prof = load_profile(_typed(profile))
    lines = get_platform(platform_for_model(topo.switch.model)).render(prof, topo, _groups(group))
    sw = open_switch(device, topo)
    with console.status(f"pushing {prof.name} to {sw.name} ..."):
        rep = sw.push(lines, out, prof.name, adopt=adopt)
    if rep.adopted:
        console.print(f"{prof.name}: took over {len(rep.adopted)} items the switch already had: "
                      + ", ".join(rep.adopted[:8]) + (" ..." if len(rep.adopted) > 8 else ""))
    if not rep.changed:
        console.print(f"{prof.name}: the switch already has this configuration (nothing sent)")
    else:
        console.print(f"[green]{prof.name} pushed[/]: {len(rep.lines_sent)} lines, verified, saved "
                      f"({rep.seconds['total']:.2f} s); backup {rep.backup}")


@app.command("show")
def switch_show(device: str = DeviceOpt,
                port: str | None = typer.Option(None, help="Also show queueing and statistics of this port."),
                topology: Path | None = TopologyOpt) -> None:
    """Print the switch's QoS state (3750: show mls qos, queue-sets; both: ACLs, class-maps,
    policy-maps; with --port the port's queue counters in the platform's own command)."""
    from ..platforms import get_platform
    from ..switch.backends import open_switch

    sw = open_switch(device, load_topology(topology))
    plat = get_platform(getattr(sw, "platform", "catalyst3750"))
    cmds = list(plat.state_commands)
    if port:
        cmds += ([f"show mls qos interface {port} queueing"] if plat.dialect == "c3750" else []) + \
            plat.counters_commands([port])
    for c, text in sw.show(cmds).items():
        console.print(f"[bold]{c}[/]")
        print(text)


@app.command("serve")
def switch_serve(topology: Path | None = TopologyOpt,
                 no_apply: bool = typer.Option(False, "--no-apply", help="Do not touch tc (CLI only).")) -> None:
    """Run the virtual switch of the testbed on its management endpoint (foreground): a Catalyst 3750,
    a Catalyst 9300 speaking IOS-XE or an Arista 7280R3 speaking EOS, as the topology's switch model says."""
    import asyncio

    from ..vswitch import serve

    topo = load_topology(topology)
    mg = topo.switch.management
    err_console.print(f"virtual switch {topo.switch.model} of {topo.name} on {mg.host}:{mg.port}")
    try:
        asyncio.run(serve(topo, apply=not no_apply))
    except OSError as e:
        raise QoslabError(f"cannot serve on {mg.host}:{mg.port}: {e.strerror}") from None
