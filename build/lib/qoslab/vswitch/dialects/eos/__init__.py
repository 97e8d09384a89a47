"""The virtual Arista 7280R3 on EOS 4.32: the dialect ``eos`` (issue 44).

Its own configuration language and running-config (:mod:`qoslab.eos`: :class:`qoslab.eos.EosConfig`,
not IOS's RunningConfig), its own CLI session (:mod:`.session`: EOS prompts, ``configure session``
with :mod:`.confsess`, ``| json``), show commands as text (:mod:`.show`) and JSON (:mod:`.showjson`)
through :mod:`.render` from the switch's state (:mod:`.state`), ``copy`` / ``configure replace``
(:mod:`.files`), and its data path: eight tx-queues per port compiled to tc and nftables
(:mod:`.datapath`). An eAPI endpoint (:mod:`qoslab.vswitch.eapiserver`) drives the same
session. SSH algorithms: ``modern`` (EOS 4.3x runs OpenSSH: curve25519, ed25519/RSA-SHA2, AES-GCM/CTR).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....eos import EosConfig, eos_port, load_config
from ....topology import Topology
from ...execparse import ExecTable
from ...nftcompile import NftPlan
from ...sshprofile import MODERN, SshProfile
from ...tccompile import TcPlan
from ..base import Dialect
from .commands import EXEC, USER
from .confsess import Sessions
from .datapath import compile_eos_nft, compile_eos_tc
from .session import EosSession

#: The factory configuration's global lines (a 7280R3 as shipped: EOS User Manual, "Initial
#: Configuration"; eAPI on, as the testbed's switch serves it).
PREAMBLE = ["transceiver qsfp default-mode 4x10G", "service routing protocols model multi-agent"]
GLOBALS = ["spanning-tree mode mstp"]


class Eos(Dialect):
    """``eos``: DCS-7280R3 family on EOS 4.32 (its platform: ``arista_eos``)."""

    name = "eos"
    model_prefixes = ("DCS-7280", "ARISTA7280")
    boot_seconds = 240
    eapi = True
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = (MODERN,)
    commands: ClassVar[ExecTable] = ExecTable({t.spec: t.spec for t in EXEC},
                                              frozenset(t.spec for t in EXEC if t.action in USER))
    config_banner = ""

    def __init__(self) -> None:
        #: the switch's configuration sessions (one dialect instance per virtual switch)
        self.sessions = Sessions()

    def factory(self, hostname: str, ports: list[str]) -> EosConfig:
        cfg = EosConfig.factory(hostname, [eos_port(p) for p in ports])
        cfg.preamble, cfg.globals_, cfg.mgmt_api = list(PREAMBLE), list(GLOBALS), ["no shutdown"]
        return cfg

    def load(self, text: str, rc: Any) -> list[str]:
        return load_config(text, rc)

    def tc_plan(self, rc: Any, topo: Topology) -> TcPlan:
        return compile_eos_tc(rc, topo)

    def nft_plan(self, rc: Any, topo: Topology) -> NftPlan:
        return compile_eos_nft(rc, topo)

    def svi(self, rc: Any) -> None:
        """None: an EOS SVI's ``ip address`` is not emulated (the switch has no address of its own
        on the testbed, so no ``ping`` from it)."""
        return None

    def session(self, sw: Any, secret: str, privileged: bool = False) -> EosSession:
        return EosSession(sw, secret, privileged)
