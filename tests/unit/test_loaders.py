"""The strict YAML reader and the fields that reach IOS text or processes: alias bombs, duplicate
keys, bytes that are not UTF-8, line numbers of cross-file problems, injection through profile
strings, collisions, bounds (issue 14, items 3, 5 and 6)."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
import yaml

from conftest import ECENET, REPO
from qoslab.campaign import create, load_campaign_playbook, load_playbook
from qoslab.campaign.folder import with_trials
from qoslab.errors import ConfigError, QoslabError
from qoslab.ios.configdiff import normalized_config
from qoslab.ios.qoswalk import non_qos_lines
from qoslab.profiles import load_profile, render
from qoslab.switch.backends import device_kind
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.yamlio import dump_yaml, read_yaml

BOMB = """name: bomb
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def _pb(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((REPO / "playbooks" / "quick.yaml").read_text())
    data.update(changes)
    p = tmp_path / "pb.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def test_alias_bomb_is_refused_at_its_line_in_every_loader(tmp_path):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMB)
    for load in (load_topology, load_flood, load_profile, load_playbook, device_kind, read_yaml):
        with pytest.raises(ConfigError, match=rf"^{p}:3: YAML syntax error: aliases \(\*name\) are not allowed"):
            load(str(p) if load is device_kind else p)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 50_000  # kB: nothing expanded


def test_alias_in_workload_hosts_and_switch_ports(tmp_path, ecenet_data):
    p = tmp_path / "pb.yaml"
    p.write_text((REPO / "playbooks" / "quick.yaml").read_text().replace(
        "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 2, rows_per_call: 5}",
        "workload:\n  hosts: &h [jp-1, jp-2]\n  size: *h"))
    with pytest.raises(ConfigError, match="aliases"):
        load_playbook(p)
    text = (ECENET.read_text().replace("ports: [Gi1/0/1-24]", "ports: &p [Gi1/0/1-24]\n  span_destinations: *p"))
    (tmp_path / "t.yaml").write_text(text)
    with pytest.raises(ConfigError, match="aliases"):
        load_topology(tmp_path / "t.yaml")


def test_campaign_playbook_copy_is_read_strictly(tmp_path):
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c", trials=2)
    copy = tmp_path / "c" / "playbook.yaml"
    assert "&" not in copy.read_text() and "*" not in copy.read_text()
    loaded = load_campaign_playbook(tmp_path / "c")
    assert loaded.trials == 2 and loaded.seed is not None
    assert loaded.model_dump(exclude={"trials", "seed"}) == pb.model_dump(exclude={"trials", "seed"})
    copy.write_text(copy.read_text() + BOMB.replace("name: bomb\n", ""))
    with pytest.raises(ConfigError, match="aliases"):
        load_campaign_playbook(tmp_path / "c")


def test_dump_yaml_never_writes_aliases():
    shared = [1, 2]
    text = dump_yaml({"a": shared, "b": shared})
    assert "&" not in text and yaml.safe_load(text) == {"a": [1, 2], "b": [1, 2]}


def test_duplicate_keys_are_refused_with_both_lines(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(ECENET.read_text() + "name: other\n")
    with pytest.raises(ConfigError, match=rf"^{p}:\d+: name: key given twice in one mapping \(first on line \d+\)"):
        load_topology(p)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_bytes(b"name: ecenet\n# caf\xe9\nhosts: []\n")
    with pytest.raises(ConfigError, match=rf"^{p}:2: \(encoding\): not UTF-8 text \(byte 0xe9"):
        load_topology(p)
    p.write_bytes(b"name: x\x07y\n")
    with pytest.raises(ConfigError, match=rf"^{p}:1: YAML syntax error: (special|control) characters"):
        load_topology(p)


def test_deep_nesting_and_huge_files_are_refused(tmp_path):
    p = tmp_path / "deep.yaml"
    p.write_text("name: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match="nested"):
        load_topology(p)
    p.write_text("name: x\ndescription: '" + "x" * (1 << 20) + "'\n")
    with pytest.raises(ConfigError, match="larger than 1048576 bytes"):
        load_topology(p)


def test_localhost_management_host_is_reported_at_its_line(tmp_path):
    text = ECENET.read_text()
    lines = text.splitlines()
    n = next(i for i, l in enumerate(lines, 1) if "host: 127.0.0.1" in l)
    p = tmp_path / "t.yaml"
    p.write_text(text.replace("host: 127.0.0.1", "host: localhost"))
    with pytest.raises(ConfigError, match=rf"^{p}:{n}: switch.management.host: localhost must be a loopback address"):
        load_topology(p)


def test_trials_option_is_validated_like_the_file():
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    for bad in (-5, 0, 1, 100_001):
        with pytest.raises(QoslabError, match=f"--trials {bad}: Input should be"):
            with_trials(pb, bad)
    assert with_trials(pb, 3).trials == 3


@pytest.mark.parametrize("name", ["../../etc", "a/b", "..", ".hidden", "x" * 65, "a b", "a\nb"])
def test_campaign_name_cannot_leave_its_folder(tmp_path, name):
    with pytest.raises(ConfigError, match=r":\d+: name: campaign name"):
        load_playbook(_pb(tmp_path, name=name))


def test_comma_in_a_condition_name_is_refused_at_load(tmp_path):
    data = yaml.safe_load((REPO / "playbooks" / "quick.yaml").read_text())
    data["conditions"][1]["name"] = "congestion, fifo"
    with pytest.raises(ConfigError, match=r":\d+: conditions\[1\].name: condition name 'congestion, fifo': no commas"):
        load_playbook(_pb(tmp_path, conditions=data["conditions"]))


def test_workload_typo_and_unknown_profile_name_their_lines(tmp_path):
    data = yaml.safe_load((REPO / "playbooks" / "quick.yaml").read_text())
    data["conditions"][0]["workload"] = {"framez": 2}
    p = _pb(tmp_path, conditions=data["conditions"])
    with pytest.raises(ConfigError, match=r"pb.yaml:\d+: conditions\[0\].workload.framez: unknown field"):
        load_playbook(p)
    data["conditions"][0]["workload"] = {"frames": "many"}
    with pytest.raises(ConfigError, match=r"pb.yaml:\d+: conditions\[0\].workload.frames: a string \('many'\) where a number is expected"):
        load_playbook(_pb(tmp_path, conditions=data["conditions"]))
    data["conditions"][0]["workload"] = {}
    data["conditions"][0]["profile"] = "thesiss"
    with pytest.raises(ConfigError, match=r"pb.yaml:\d+: conditions\[0\].profile: no profile 'thesiss'"):
        load_playbook(_pb(tmp_path, conditions=data["conditions"]))


@pytest.mark.parametrize("rate", ["0x", "1000000x", True, 0, -3, 2_000_000, "1.5 x y", 1.5])
def test_flood_rates_out_of_range_are_refused(write_yaml, rate):
    p = write_yaml({"name": "f", "rate": rate, "flows": [{"src": "jp-5", "dst": "jp-1"}]})
    with pytest.raises(ConfigError, match=r":2: rate: rate must be packets/s"):
        load_flood(p)


def test_flood_duration_is_bounded(write_yaml):
    p = write_yaml({"name": "f", "duration_s": 1e15, "flows": [{"src": "jp-5", "dst": "jp-1"}]})
    with pytest.raises(ConfigError, match=r":2: duration_s: Input should be less than or equal to 86400"):
        load_flood(p)


@pytest.mark.parametrize("field,value,loc", [
    ("policy_map", "p\nusername evil privilege 15 secret x", "policy_map"),
    ("rules", [{"name": "r\nusername evil", "kind": "any", "set_dscp": 40}], r"rules\[0\].name"),
    ("span", [{"session": 1, "source": "jp-1", "destination": "Gi1/0/21\nusername evil privilege 15 secret x"}],
     r"span\[0\].destination"),
    ("span", [{"session": 1, "source": "jp-1\nusername evil", "destination": "Gi1/0/21"}], r"span\[0\].source"),
    ("extra_acls", ["username evil privilege 15 secret x"], r"extra_acls"),
    ("extra_acls", ["access-list 100 permit ip any any\nusername evil"], r"extra_acls"),
    ("extra_acls", ["access-list 99 permit ip any any"], r"extra_acls"),
    ("groups", {"workload": {"hosts": ["jp-1\nusername evil"]}}, r"groups.workload.hosts"),
    ("rules", [{"name": "rmi", "kind": "ports", "protocol": "tcp", "ports": [70000], "set_dscp": 40}],
     r"rules\[0\].ports"),
    ("rules", [{"name": "rmi", "kind": "ports", "protocol": "ip", "ports": [1099], "set_dscp": 40}],
     r"rules\[0\].protocol"),
    ("rules", [{"name": "1abc", "kind": "any", "set_dscp": 40}], r"rules\[0\].name"),
    ("egress", {"share": [97, 1, 1, 0]}, r"egress.share"),
    ("egress", {"share": [256, 1, 1, 1]}, r"egress.share"),
    ("queue_sets", {2: {"buffers": [50, 40, 5, 100]}}, r"queue_sets\[2\].buffers"),
    ("queue_sets", {2: {"thresholds": {5: [1, 1, 1, 1]}}}, r"queue_sets\[2\].thresholds"),
    ("dscp_output_map", {1: [64]}, r"dscp_output_map"),
    ("ingress", {"bandwidth": [0, 100]}, r"ingress.bandwidth"),
    ("trust", {"nogroup": "dscp"}, r"trust.nogroup"),
])
def test_profile_strings_cannot_inject_ios_lines(write_yaml, field, value, loc):
    p = write_yaml({"name": "x", "mls_qos": True, field: value})
    with pytest.raises(ConfigError, match=rf"^{p}:\d+: {loc}"):
        load_profile(p)


@pytest.mark.parametrize("rules,loc,msg", [
    ([{"name": "a", "kind": "pairs", "set_dscp": 40}, {"name": "b", "kind": "pairs", "set_dscp": 46}],
     r"rules\[1\].acl_base", "collides with rules\\[0\\]: both make ACL or class-map 112"),
    ([{"name": "class112", "kind": "any", "set_dscp": 40}, {"name": "b", "kind": "pairs", "set_dscp": 46}],
     r"rules\[1\].acl_base", "collides with rules\\[0\\]"),
    ([{"name": "a", "kind": "any", "set_dscp": 40}, {"name": "a", "kind": "any", "set_dscp": 46}],
     r"rules\[1\].name", "used twice"),
    ([{"name": "a", "kind": "pairs", "set_dscp": 40, "acl_base": 170}], r"rules\[0\].acl_base", "outside 100-199"),
])
def test_colliding_rules_are_refused_with_their_line(write_yaml, rules, loc, msg):
    p = write_yaml({"name": "x", "mls_qos": True, "rules": rules, "extra_acls": []})
    with pytest.raises(ConfigError, match=rf"^{p}:\d+: {loc}: .*{msg}"):
        render(load_profile(p), load_topology(ECENET))


def test_extra_acl_number_colliding_with_a_rule(write_yaml):
    p = write_yaml({"name": "x", "mls_qos": True, "extra_acls": ["access-list 112 permit ip any any"],
                    "rules": [{"name": "a", "kind": "pairs", "set_dscp": 40}]})
    with pytest.raises(ConfigError, match=r"rules\[0\].acl_base: rule a collides with extra_acls"):
        render(load_profile(p), load_topology(ECENET))


def test_span_port_unknown_to_the_topology(write_yaml):
    p = write_yaml({"name": "x", "span": [{"session": 1, "source": "Gi1/0/30", "destination": "Gi1/0/21"}]})
    with pytest.raises(ConfigError, match=r"span\[0\].source: 'Gi1/0/30' is neither a host"):
        render(load_profile(p), load_topology(ECENET))


def test_only_qos_lines_pass_and_verification_sees_the_whole_config():
    assert non_qos_lines(["mls qos", "interface GigabitEthernet1/0/1", " mls qos trust dscp"]) == []
    assert non_qos_lines(["mls qos", "username evil privilege 15 secret x"]) == ["username evil privilege 15 secret x"]
    assert non_qos_lines(["interface GigabitEthernet1/0/1", " shutdown"]) == [" shutdown"]
    base = "Building configuration...\n!\nhostname Switch\n!\ninterface GigabitEthernet1/0/1\n!\nend\n"
    evil = base.replace("hostname Switch\n", "hostname Switch\nusername evil privilege 15 secret x\n")
    assert normalized_config(base) != normalized_config(evil)
    assert normalized_config(base) == normalized_config(base.replace("!\n", "! a comment\n"))


def test_the_example_catalyst_device_file_loads_with_home_paths(monkeypatch, tmp_path):
    """playbooks/devices/catalyst-ecenet.yaml is a valid `device: catalyst` file; its `~` paths
    are the user's home, so the pinned known_hosts is looked up there (nothing is connected)."""
    from qoslab.switch.backends import CatalystSwitch

    monkeypatch.setenv("HOME", str(tmp_path))
    device = str(REPO / "playbooks" / "devices" / "catalyst-ecenet.yaml")
    assert device_kind(device) == "catalyst"
    sw = CatalystSwitch(load_topology(REPO / "playbooks" / "topologies" / "ecenet-real.yaml"), device)
    assert sw.endpoint.host == "5.1.1.254" and sw.endpoint.credentials_file is None
    assert sw.endpoint.known_hosts == tmp_path / ".config" / "qoslab" / "switch-known_hosts"


def test_problem_texts_name_nan_and_clip_hostile_values():
    """Issue 35: a NaN is called one (pydantic says "should be <= max" of it), a 200 KB value is
    not echoed whole, and a single mapping given for a list names the mapping's own field."""
    from pydantic import BaseModel, Field, ValidationError, field_validator

    from qoslab.yamlio import MAX_PROBLEM_CHARS, clip, data_loc, problem_text

    class M(BaseModel):
        x: float = Field(1.0, le=600)
        name: str = "a"

        @field_validator("name")
        @classmethod
        def _name(cls, v: str) -> str:  # a validator that echoes the value, as playbook names do
            if len(v) > 8:
                raise ValueError(f"name {v!r} is longer than 8 characters")
            return v

    for bad, want in ((float("nan"), "not a number (NaN)"), (float("inf"), "infinite")):
        try:
            M(x=bad)
        except ValidationError as e:
            assert problem_text(e.errors()[0]).startswith(want)
    try:
        M(name="x" * 200_000)
    except ValidationError as e:
        text = problem_text(e.errors()[0])
    assert len(text) < MAX_PROBLEM_CHARS + 40 and text.endswith("characters)")
    assert clip("short") == "short" and clip("y" * 500).endswith("(500 characters)")
    assert data_loc({"pattern": {"on_ms": -5}}, ("pattern", 0, "on_ms")) == ("pattern", "on_ms")
    assert data_loc({"queue_sets": {0: {"b": 1}}}, ("queue_sets", 0, "b")) == ("queue_sets", 0, "b")
    assert data_loc({"flows": [{"src": 1}]}, ("flows", 0, "src")) == ("flows", 0, "src")
