"""The virtual switch's dialect seam (issue 43): every platform's virtual twin is a registered
Dialect chosen by the topology's switch model, and a third one is one package and one
registration (its prompts, EXEC table, show commands and EXEC commands of its own reach the
session through the interface alone)."""

from __future__ import annotations

from typing import ClassVar

import pytest

from conftest import ECENET
from qoslab.errors import ConfigError
from qoslab.platforms import get_platform
from qoslab.registry import dialects, platforms
from qoslab.topology import load_topology
from qoslab.vswitch import IosSession, VirtualSwitch
from qoslab.vswitch.dialects import Dialect, Reply, dialect_for_model, get_dialect
from qoslab.vswitch.execparse import ExecTable
from qoslab.vswitch.sshprofile import MODERN, SshProfile, ssh_profile


@pytest.mark.parametrize("name", platforms.names())
def test_every_platform_has_its_dialect_and_both_claim_the_same_models(name):
    plat = get_platform(name)
    d = get_dialect(plat.dialect)
    assert d.name == plat.dialect and d.model_prefixes == plat.model_prefixes
    assert dialect_for_model(plat.model).name == plat.dialect
    assert d.ssh_profiles and d.commands.commands


def test_a_model_no_dialect_claims_is_refused_naming_the_dialects():
    with pytest.raises(ConfigError, match=r"'FROB-1'.*\(dialects: c3750, c9300"):
        dialect_for_model("FROB-1")


def test_each_dialect_has_its_own_show_commands():
    """The 3750 answers ``show mls qos ...`` and no fed command; the 9300 the reverse."""
    c3750, c9300 = get_dialect("c3750").commands, get_dialect("c9300").commands
    assert "show mls qos interface port statistics" in c3750.commands
    assert not [n for n in c9300.commands if n.startswith("show mls")]
    assert "show platform hardware fed switch active qos queue stats interface port" in c9300.commands
    assert not [n for n in c3750.commands if n.startswith("show platform")]


def test_ssh_profiles_by_name_or_the_dialects_default():
    c3750 = get_dialect("c3750")
    assert ssh_profile(None, c3750).name == "c3750" and ssh_profile("modern", c3750) is MODERN
    assert ssh_profile("c3750", get_dialect("c9300")).kex_algs[0] == "diffie-hellman-group1-sha1"
    with pytest.raises(KeyError):
        ssh_profile("nope", c3750)


TOY_SSH = SshProfile("toy", "ssh-ed25519", (), (), (), ())


class Toy(Dialect):
    """A platform whose CLI is not IOS's: ``toy>``/``toy#`` prompts and ``(cfg)``, one show
    command and an EXEC command of its own."""

    name = "toy"
    model_prefixes = ("TOY-",)
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = (TOY_SSH,)
    commands: ClassVar[ExecTable] = ExecTable(
        {"show version": "show version", "hello": "hello {word}", "enable": "enable",
         "configure terminal": "configure terminal", "exit": "exit"},
        frozenset({"show version", "hello", "enable", "exit"}))
    config_banner = ""

    def prompt(self, hostname, mode, privileged, tcl):
        return f"toy{'(cfg)' if mode else ''}{'#' if privileged else '>'}"

    def exec_command(self, session, cmd, text):
        return Reply(f"hello {cmd.args['word']}\n") if cmd.name == "hello" else None

    def show(self, sw, cmd, ctx):
        return f"Toy OS, {ctx.facts.n_ports} ports, privilege {ctx.privilege}\n"


@pytest.fixture
def toy():
    dialects.register("toy", Toy)
    yield
    dialects.unregister("toy")


def test_a_third_dialect_is_one_registration(toy, tmp_path, monkeypatch):
    monkeypatch.setattr("qoslab.vswitch.core.vswitch_dir", lambda name: tmp_path)
    topo = load_topology(ECENET)
    topo = topo.model_copy(update={"switch": topo.switch.model_copy(update={"model": "TOY-1"})})
    sw = VirtualSwitch(topo, apply=False)
    assert sw.dialect.name == "toy" and ssh_profile(None, sw.dialect) is TOY_SSH
    s = IosSession(sw, "sekret")
    assert s.prompt == "toy>"
    assert s.line("show version").text == "Toy OS, 24 ports, privilege 1\n"
    assert s.line("hel world").text == "hello world\n"
    bad = s.line("show mls qos")  # not in its table: the caret under the first word that does not fit
    assert bad.text.splitlines()[0].index("^") == len("toy>show ")
    assert s.line("configure terminal").text.splitlines()[0].index("^") == len("toy>")  # privileged only
    s.line("enable")
    s.secret_line("sekret")
    assert s.prompt == "toy#"
    s.line("configure terminal")
    assert s.prompt == "toy(cfg)#"


def test_the_fed_command_is_the_9300s_and_checks_its_port(tmp_path, monkeypatch):
    """The 9300 answers the fed queue stats for its ports, with the caret under a port it has not;
    the 3750 knows no such command."""
    monkeypatch.setattr("qoslab.vswitch.core.vswitch_dir", lambda name: tmp_path)
    cmd = "show platform hardware fed switch active qos queue stats interface "
    for model, port, ok in (("C9300-24T", "Gi1/0/1", True), ("C9300-24T", "Gi1/0/99", False),
                            ("WS-C3750G-24T", "Gi1/0/1", False)):
        topo = load_topology(ECENET)
        topo = topo.model_copy(update={"switch": topo.switch.model_copy(update={"model": model})})
        s = IosSession(VirtualSwitch(topo, apply=False), "x", privileged=True)
        out = s.line(cmd + port).text
        if ok:
            assert "Asic:0 Core:0 DATA Port:0 Hardware Enqueue Counters" in out
        else:
            caret = out.splitlines()[0].index("^") - len("Switch#")
            assert caret == (len(cmd) if model.startswith("C9300") else len("show ")), out
