"""The seam between the virtual switch's dialect-neutral core (SSH server, session loop, tc/nft
compilers, apply, kernel counters) and one platform's CLI: the :class:`Dialect`.

A dialect is what a platform prints and accepts on the virtual switch: its EXEC command table
(:class:`qoslab.vswitch.execparse.ExecTable`: which show commands exist, which user EXEC may
run), its show outputs (:meth:`Dialect.show`, from the switch's state and kernel counters), its
prompts and configuration grammar (the :mod:`qoslab.ios` language ``grammar`` it speaks, or its own
:meth:`Dialect.interpret`), its SSH algorithms (:attr:`Dialect.ssh_profiles`), its boot time, and
any EXEC command of its own (:meth:`Dialect.exec_command`, e.g. EOS's ``configure session``).

Registered by name in :data:`qoslab.registry.dialects` (entry-point group ``qoslab.dialects``);
a :class:`qoslab.platforms.Platform`'s ``dialect`` names its virtual twin's dialect, and the
virtual switch picks the dialect whose :attr:`Dialect.model_prefixes` claim the topology's
``switch.model`` (:func:`qoslab.vswitch.dialects.dialect_for_model`).

What a dialect gets from the switch object (``sw``; :class:`qoslab.vswitch.core.VirtualSwitch`
or a test double): ``running`` (:class:`qoslab.ios.RunningConfig`), ``topo``
(:class:`qoslab.topology.Topology`), ``dir`` (state folder), ``booted`` (epoch seconds of the
virtual power-on), and optionally the kernel's readings ``nft_counters()``
(:class:`qoslab.vswitch.counters.NftCounters`), ``qdiscs()`` (tc statistics by Linux interface),
``fdb()`` (:class:`qoslab.vswitch.facts.MacEntry` list), ``link_counters(long_port) -> dict``;
a switch without them shows zeros, as a switch that does not apply its config.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ...ios import Mode, RunningConfig, interpret, load_config, qos_model
from ...ios.grammar import Template
from ...ios.svi import svi_address
from ...ios.xe import templates_of
from ...topology import Topology
from ..execparse import ExecCommand, ExecTable
from ..facts import DeviceFacts
from ..nftcompile import NftPlan, compile_nft
from ..sshprofile import SshProfile
from ..tccompile import TcPlan, compile_tc

if TYPE_CHECKING:
    from ..flash import Flash


@dataclass
class Reply:
    """What a typed line answers: the text to print; ``close``: end the session; ``secret``: the
    next line is a password (no echo); ``prompt``: the next line answers a question (printed
    instead of the prompt)."""

    text: str = ""
    close: bool = False
    secret: bool = False
    prompt: str | None = None


@dataclass
class ShowContext:
    """What a show command may read besides the switch: the device's identity, its ``flash:``
    file system, the server process's own resource use (``rss`` bytes, ``cpu_s`` seconds: ``show
    memory statistics``, ``show processes cpu``), the session's privilege level (1 or 15), the
    dialect's boot time (seconds of the uptime before the server listened) and the terminal width
    (``terminal width N``: where wide tables wrap)."""

    facts: DeviceFacts
    flash: Flash
    usage: dict[str, float]
    privilege: int = 15
    boot_seconds: int = 180
    width: int = 80


class Dialect:
    """One platform's CLI on the virtual switch (see the module doc). Subclasses set the class
    attributes and implement :meth:`show`; the defaults are IOS's (prompts, configuration banner,
    the :mod:`qoslab.ios` interpreter of ``grammar``)."""

    #: the registry name (:data:`qoslab.registry.dialects`), = ``Platform.dialect``
    name: ClassVar[str] = ""
    #: the configuration language of :mod:`qoslab.ios` it speaks (``RunningConfig.dialect``)
    grammar: ClassVar[str] = "c3750"
    #: topology ``switch.model`` values that mean this dialect (prefixes, upper case); the same as
    #: its platform's ``model_prefixes`` (tests/unit/test_platforms.py checks they agree)
    model_prefixes: ClassVar[tuple[str, ...]] = ()
    #: seconds from the virtual power-on to the first prompt (``show version``'s uptime counts from it)
    boot_seconds: ClassVar[int] = 180
    #: the SSH algorithm profiles this platform offers; the first is the default
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = ()
    #: the EXEC command table (show commands included)
    commands: ClassVar[ExecTable]
    #: what ``configure terminal`` prints
    config_banner: ClassVar[str] = "Enter configuration commands, one per line.  End with CNTL/Z.\n"

    #: whether the platform has an eAPI (JSON-RPC over HTTPS) endpoint the server starts on the
    #: topology's ``management.eapi_port`` (:mod:`qoslab.vswitch.eapiserver`)
    eapi: ClassVar[bool] = False

    def factory(self, hostname: str, ports: list[str]) -> Any:
        """The switch at factory defaults with ``ports`` (short names): a
        :class:`qoslab.ios.RunningConfig` for the IOS family, the dialect's own config otherwise."""
        return RunningConfig.factory(hostname, ports, self.grammar)

    def load(self, text: str, rc: Any) -> list[str]:
        """Apply a whole configuration text (the startup-config at boot) to ``rc``; one message
        per refused line."""
        return [str(e) for e in load_config(text, rc)]

    def tc_plan(self, rc: Any, topo: Topology) -> TcPlan:
        """The tc plan of configuration ``rc`` (pure; the IOS family's QoS model by default)."""
        return compile_tc(qos_model(rc), topo)

    def nft_plan(self, rc: Any, topo: Topology) -> NftPlan:
        """The nftables ruleset of configuration ``rc`` (pure)."""
        return compile_nft(qos_model(rc), topo)

    def svi(self, rc: Any) -> ipaddress.IPv4Interface | None:
        """The switch's own address with its prefix, which the core puts on the testbed's bridge
        (the source of ``ping``/``traceroute``); the IOS family's ``interface Vlan1`` address
        (:func:`qoslab.ios.svi.svi_address`) by default, None: no address."""
        return svi_address(rc)

    def flash(self, sw: Any) -> Flash:
        """The switch's ``flash:`` file system (its state folder's ``flash``; a 3750's by default)."""
        from ..flash import Flash

        return Flash(sw.dir / "flash", sw.dir / "startup-config", sw.booted)

    def session(self, sw: Any, secret: str, privileged: bool = False) -> Any:
        """A CLI session of the dialect's own on switch ``sw`` (the interface of
        :class:`qoslab.vswitch.session.IosSession`: ``line``, ``prompt``, ``mode``, ``length``,
        ``help``, ``takes_help``, ``interrupt``, ``secret_line``, ``close``; and ``run`` for
        eAPI); None: the IOS family's session."""
        return None

    def prompt(self, hostname: str, mode: Mode | None, privileged: bool, tcl: bool) -> str:
        """The prompt: ``host>`` / ``host#``, ``host(config-if)#`` in a configuration mode,
        ``host(tcl)#`` in tclsh."""
        if mode is not None:
            return f"{hostname}{mode.prompt_suffix}#"
        if tcl:
            return f"{hostname}(tcl)#"
        return f"{hostname}{'#' if privileged else '>'}"

    def interpret(self, rc: RunningConfig, mode: Mode, line: str) -> Mode:
        """One configuration line in ``mode`` (mutates ``rc``); the next mode. Raises IosError."""
        return interpret(rc, mode, line)

    def config_templates(self, mode: Mode) -> list[Template]:
        """The command templates of configuration ``mode`` (for ``?``)."""
        return templates_of(self.grammar).get(mode.name, [])

    def exec_command(self, session: Any, cmd: ExecCommand, text: str) -> Reply | None:
        """An EXEC command this dialect runs itself (before the session's own: enable, configure,
        write, copy ...); None: not one of them. ``session`` is the
        :class:`qoslab.vswitch.session.IosSession`."""
        return None

    def show(self, sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
        """The output of show command ``cmd`` (before output modifiers). Raises IosError (with
        the column of the bad token) for what this platform does not answer."""
        raise NotImplementedError
