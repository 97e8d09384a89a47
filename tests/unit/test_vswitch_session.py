"""The CLI session without SSH: a switch object with the interface vswitch provides (running-config,
topology, state folder, save/apply/factory/counters), lines in, replies out."""

from __future__ import annotations

import time

import pytest

from conftest import ECENET
from qoslab.ios import RunningConfig
from qoslab.ios.show_qos import PortCounters
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology
from qoslab.vswitch.archive import config_differences, incremental_diffs
from qoslab.vswitch.dialects import get_dialect
from qoslab.vswitch.session import IosSession, canon_url, device_facts


class FakeSwitch:
    def __init__(self, tmp):
        self.dialect = get_dialect("c3750")
        self.topo = load_topology(ECENET)
        self.running = self.factory()
        self.dir = tmp
        self.booted = time.time() - 3700
        self.applied = 0

    def factory(self):
        return RunningConfig.factory(self.topo.switch.hostname, self.topo.switch.ports)

    def save(self):
        (self.dir / "startup-config").write_text(self.running.render())

    def apply(self):
        self.applied += 1

    def counters(self, port):
        c = PortCounters()
        c.dropped[1][0] = 42 if port.endswith("/1") else 0
        return c


@pytest.fixture
def s(tmp_path):
    return IosSession(FakeSwitch(tmp_path), "sekret")


def run(s, *lines):
    return [s.line(l) for l in lines]


def test_user_exec_enable_tries_and_privilege(s):
    assert s.prompt == "Switch>"
    assert s.line("show privilege").text == "Current privilege level is 1\n"
    r = s.line("show running-config")
    assert r.text.splitlines()[0] == " " * (len("Switch>") + 5) + "^"
    r = s.line("enable")
    assert r.secret and r.text == "Password: "
    assert s.secret_line("x").secret and s.secret_line("y").secret
    assert s.secret_line("z").text == "% Bad secrets\n\n" and not s.privileged
    s.line("en")
    assert s.secret_line("sekret").text == "" and s.prompt == "Switch#"
    assert s.line("sh priv").text == "Current privilege level is 15\n"


def test_config_mode_do_and_apply_on_end(s):
    s.privileged = True
    run(s, "conf t", "interface gi1/0/3", "description jp-3")
    assert s.prompt == "Switch(config-if)#"
    assert s.line("do sh int status | i jp-3").text.startswith("Gi1/0/3   jp-3 ")
    s.line("end")
    assert s.sw.applied == 1 and s.prompt == "Switch#"
    bad = s.line("show mls qos interface gi1/0/30 statistics")
    assert bad.text.splitlines()[0].index("^") == len("Switch#show mls qos interface ")


def test_show_commands_render_from_state(s):
    s.privileged = True
    for line in render(load_profile("thesis"), s.sw.topo):
        s.line("conf t") if s.mode is None else None
        assert "%" not in s.line(line).text, line
    s.line("end")
    assert "Policer: Inprofile:" in s.line("sh mls qos int g1/0/1 stat").text
    from qoslab.platforms.counters import parse_statistics
    assert parse_statistics(s.line("sh mls qos int g1/0/1 stat").text)["GigabitEthernet1/0/1"].dropped[1] == [42, 0, 0]
    assert "Attached policy-map for Ingress" in s.line("show mls qos interface gi1/0/1").text or \
        "trust state" in s.line("show mls qos interface gi1/0/1").text
    assert "Queueset: 2" in s.line("sh mls qos queue-set 2").text
    assert "class-default" in s.line("show class-map").text
    assert s.line("show policy-map police-jp").text.startswith("  Policy Map police-jp")
    assert "Service-policy input: police-jp" in s.line("show policy-map interface gi1/0/1").text
    assert s.line("show ip access-lists 100").text.startswith("Extended IP access list 100\n")
    assert "buffers   :      70      30" in s.line("show mls qos input-queue").text
    v = s.line("show version").text
    assert "Switch uptime is 1 hour, 1 minute" in v and f"Processor board ID {device_facts(s.sw).serial}" in v
    assert s.line("show running-config | count ^interface").text == "Number of lines which match regexp = 25\n"  # 24 ports and Vlan1


def test_flash_copy_md5_dir_more_delete(s):
    s.privileged = True
    r = s.line("copy running-config flash:/rb.txt")
    assert r.prompt == "" and r.text == "Destination filename [rb.txt]? "
    assert "bytes copied" in s.line("").text
    run(s, "conf t", "file prompt quiet", "end")
    assert "bytes copied" in s.line("copy system:/running-config flash:/rb.txt").text
    d = s.line("dir flash:/rb.txt").text
    assert d.startswith("Directory of flash:/rb.txt\n") and "bytes free" in d
    assert "(No such file or directory)" in s.line("dir flash:/nope.txt").text
    assert s.line("verify /md5 flash:/rb.txt").text.split(" = ")[1].strip().isalnum()
    assert s.line("more flash:/rb.txt").text == s.sw.running.render()
    assert s.line("delete flash:/rb.txt").text == "Delete flash:/rb.txt? [confirm]"  # quiet: the confirm only
    s.line("")
    assert "rb.txt" not in s.line("dir").text


def test_file_prompts_follow_ios_in_every_mode(s):
    """alert (default): copy asks the destination (running-config too: scrapli-cfg's merge commit
    waits for it), delete the file then [confirm]; noisy: the source first; quiet: no copy
    question, delete's [confirm] still (scrapli-cfg's abort waits for it); 'n' keeps the file."""
    s.privileged = True
    (s.sw.dir / "flash").mkdir(exist_ok=True)
    (s.sw.dir / "flash" / "cand.txt").write_text("interface GigabitEthernet1/0/3\n description merged\n")
    r = s.line("copy flash:cand.txt running-config")
    assert (r.text, r.prompt) == ("Destination filename [running-config]? ", "")
    s.line("")
    assert "description merged" in s.sw.running.render()
    assert s.line("copy running-config startup-config").text == "Destination filename [startup-config]? "
    assert "[OK]" in s.line("").text
    assert s.line("delete flash:cand.txt").text == "Delete filename [cand.txt]? "
    assert s.line("").text == "Delete flash:/cand.txt? [confirm]"
    s.line("n")
    assert "cand.txt" in s.line("dir").text
    run(s, "conf t", "file prompt noisy", "end")
    assert s.line("copy flash:cand.txt running-config").text == "Source filename [cand.txt]? "
    assert s.line("").text == "Destination filename [running-config]? "
    assert s.line("").prompt is None
    run(s, "conf t", "file prompt quiet", "end")
    assert s.sw.running.kept.count("file prompt quiet") == 1 and "file prompt noisy" not in s.sw.running.kept
    assert s.line("copy flash:cand.txt running-config").prompt is None
    assert s.line("delete flash:cand.txt").text == "Delete flash:/cand.txt? [confirm]"
    s.line("y")
    assert "cand.txt" not in s.line("dir").text
    run(s, "conf t", "file prompt alert", "end")
    assert not [k for k in s.sw.running.kept if k.startswith("file prompt")]


def test_configure_replace_and_archive_diffs(s, tmp_path):
    s.privileged = True
    run(s, "conf t", "file prompt quiet", "end", "copy running-config flash:base.txt")
    s.sw.running.hostname = "other"
    out = s.line("show archive config differences flash:base.txt system:running-config").text
    assert out == "!Contextual Config Diffs:\n+hostname other\n-hostname Switch\n\n"
    r = s.line("configure replace flash:base.txt force")
    assert "Rollback Done" in r.text and s.sw.running.hostname == "Switch"
    assert "No changes were found" in s.line("show archive config differences system:running-config flash:base.txt").text
    (tmp_path / "flash" / "bad.txt").write_text("hostname z\nmls qos frobnicate\n")
    r = s.line("configure replace flash:bad.txt force revert trigger error")
    assert "original configuration has been successfully restored" in r.text and s.sw.running.hostname == "Switch"


def test_incremental_diffs_lists_only_changes():
    rc = RunningConfig.factory("Switch", ["Gi1/0/1"])
    text = "mls qos\ninterface GigabitEthernet1/0/1\n priority-queue out\nhostname Switch\n"
    assert incremental_diffs(rc, text) == ("!List of Commands:\nmls qos\ninterface GigabitEthernet1/0/1\n"
                                           " priority-queue out\nend\n")
    rc2 = rc.copy()
    from qoslab.ios import load_config
    load_config(text, rc2)
    assert incremental_diffs(rc2, text).endswith("end\n!No changes were found\n")
    assert "No changes" in config_differences(rc2.render(), text + "interface GigabitEthernet1/0/1\n", rc)


def test_canon_url():
    assert canon_url("system:/running-config") == canon_url("running-config") == "running-config"
    assert canon_url("nvram:startup-config") == "startup-config" and canon_url("flash:x") == "flash:x"


def test_running_config_in_ios_order_whatever_the_entry_order(s):
    s.privileged = True
    run(s, "conf t", "access-list 112 permit ip any any", "class-map match-all zz", "class-map match-all aa",
        "policy-map pz", "policy-map pa", "ip access-list extended zed", "permit ip any any",
        "ip access-list extended abc", "permit ip any any", "access-list 100 permit ip any any",
        "interface Gi1/0/2", "mls qos trust dscp", "priority-queue out", "srr-queue bandwidth share 1 30 35 5",
        "description d", "end")
    run_text = s.line("show running-config").text
    order = [l for l in run_text.splitlines() if l.startswith(("access-list", "ip access-list", "class-map", "policy-map"))]
    assert order == ["class-map match-all aa", "class-map match-all zz", "policy-map pa", "policy-map pz",
                     "ip access-list extended abc", "ip access-list extended zed",
                     "access-list 100 permit ip any any", "access-list 112 permit ip any any"]
    assert s.line("show running-config interface gi1/0/2").text.splitlines()[4:] == [
        "interface GigabitEthernet1/0/2", " description d", " srr-queue bandwidth share 1 30 35 5",
        " priority-queue out", " mls qos trust dscp", "end"]


def test_long_line_is_rejected_whole(s):
    from qoslab.vswitch.session import LINE_MAX
    s.privileged = True
    r = s.line("conf" + " " * 10 + "x" * 70000)
    assert r.text.splitlines()[0] == " " * (len("Switch#") + LINE_MAX) + "^" and s.mode is None
    assert s.line("conf t").text.startswith("Enter configuration commands")


def test_tclsh_inline_transfer_pattern(s):
    """netmiko's InLineTransfer: ``puts [open "flash:F" w+] {`` + the lines (CR-separated, so one
    line each) + ``}``; the file is the text plus the newline puts adds (netmiko's MD5)."""
    import hashlib
    s.privileged = True
    assert s.line("tclsh").text == "" and s.prompt == "Switch(tcl)#"
    config = "hostname x\ninterface GigabitEthernet1/0/1\n description y"
    lines = ('puts [open "flash:candidate_config.txt" w+] {' + config.replace("\n", "\r") + "}").split("\r")
    replies = [s.line(l) for l in lines]
    assert [r.prompt for r in replies] == ["+>"] * (len(lines) - 1) + [None]
    assert s.flash.read("flash:candidate_config.txt") == config + "\n"
    md5 = hashlib.md5((config + "\n").encode()).hexdigest()
    assert md5 in s.line("verify /md5 flash:candidate_config.txt").text  # an EXEC command inside tclsh
    assert s.line('puts "hi"').text == "hi\n"
    assert s.line("tclquit").text == "" and s.prompt == "Switch#"


def test_user_exec_show_commands(s):
    """User EXEC answers the status displays (Command Modes: User EXEC in the 3750 command
    reference) and refuses configurations, SNMP and files with the caret under the keyword."""
    for cmd in ("show arp", "show mac address-table", "show cdp neighbors", "show env all", "show ip route",
                "show processes cpu", "show interfaces counters", "show vlan id 1"):
        assert "Invalid input" not in s.line(cmd).text, cmd
    for cmd in ("show snmp", "show running-config", "show memory statistics", "dir"):
        assert "% Invalid input detected at '^' marker." in s.line(cmd).text, cmd


def test_running_config_stock_lines_and_flash_image(s):
    """A 3750's running-config prints its stock lines (boot markers, spanning-tree mode,
    VLAN allocation, interface Vlan1, HTTP server, console and vty lines) and loads back to the
    same text; ``dir`` lists the IOS image and, once saved, config.text (the startup-config)."""
    s.privileged = True
    run_text = s.line("show running-config").text
    body = run_text.split("\n")
    for line in ("boot-start-marker", "boot-end-marker", "spanning-tree mode pvst", "spanning-tree extend system-id",
                 "vlan internal allocation policy ascending", "interface Vlan1", " no ip address", "ip classless",
                 "line con 0", "line vty 0 4", " login", "line vty 5 15"):
        assert line in body, line
    assert body.index("hostname Switch") < body.index("boot-start-marker") < body.index("spanning-tree mode pvst") \
        < body.index("interface GigabitEthernet1/0/1") < body.index("interface Vlan1") < body.index("line con 0")
    again = RunningConfig.factory("Switch", s.sw.topo.switch.ports)
    from qoslab.ios import load_config
    assert load_config(run_text, again) == [] and again.render() == run_text
    listing = s.line("dir").text
    assert "c3750-ipservicesk9-mz.122-55.SE12.bin" in listing and "config.text" not in listing
    s.line("write memory")
    listing = s.line("dir flash:").text
    assert "config.text" in listing
    assert s.line("more flash:config.text").text == (s.sw.dir / "startup-config").read_text()


def test_context_help_follows_mode_and_privilege(s):
    """``?`` (qoslab.vswitch.cli_help): user EXEC offers only its commands; ``show mls qos ?``
    the keywords that may follow, ``|`` and ``<cr>``; an abbreviation its completions; config
    mode its own commands; nothing fits: ``% Unrecognized command``."""
    assert "  configure" not in s.help("") and "  show" in s.help("")
    s.privileged = True
    out = s.help("show mls qos ").splitlines()
    assert {"  interface", "  maps", "  queue-set", "  <cr>"} <= set(out)
    assert s.help("conf") == "configure  \n\n"
    assert s.help("frobnicate ") == "% Unrecognized command\n"
    s.line("configure terminal")
    assert {"  mls", "  interface", "  exit", "  end"} <= set(s.help("").splitlines())
    run(s, "class-map c", "policy-map p", "class c")
    assert {"  set", "  police", "  trust"} <= set(s.help("").splitlines())
    assert "  <0-63>" in s.help("set dscp ").splitlines()
