"""Path resolution (issue 34): every file a playbook names (topology, flood, profile) resolves by
one rule, whatever the current directory: absolute as given, else relative to the repository; a
bare profile name is qos-profiles/NAME.yaml. Profile and flood files appear in generated condition
names by their stem."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import REPO
from qoslab.campaign import load_playbook
from qoslab.errors import ConfigError
from qoslab.profiles import load_profile, profile_path
from qoslab.trials.factors import expand_factors
from qoslab.trials.playbook import resolve_path


def test_every_reference_resolves_against_the_repository_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qos-profiles").mkdir()
    (tmp_path / "qos-profiles" / "thesis.yaml").write_text("not: a profile\n")  # a decoy in the cwd
    assert profile_path("qos-profiles/thesis.yaml") == REPO / "qos-profiles" / "thesis.yaml"
    assert profile_path("thesis") == REPO / "qos-profiles" / "thesis.yaml"
    assert profile_path(tmp_path / "x.yaml") == tmp_path / "x.yaml"
    assert resolve_path("playbooks/topologies/ecenet.yaml") == REPO / "playbooks" / "topologies" / "ecenet.yaml"
    assert load_profile("qos-profiles/thesis.yaml").name == "thesis"
    data = yaml.safe_load((REPO / "playbooks" / "quick.yaml").read_text())
    data["conditions"][-1]["profile"] = "qos-profiles/thesis.yaml"
    p = tmp_path / "pb.yaml"
    p.write_text(yaml.safe_dump(data))
    pb = load_playbook(p)  # topology, flood and profiles all found from another directory
    assert pb.conditions[-1].profile == "qos-profiles/thesis.yaml"
    data["conditions"][-1]["profile"] = "my-profiles/ef.yaml"  # relative to the cwd only: not found, said so
    (tmp_path / "my-profiles").mkdir()
    (tmp_path / "my-profiles" / "ef.yaml").write_text((REPO / "qos-profiles" / "thesis.yaml").read_text())
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"pb.yaml:\d+: conditions\[\d\]\.profile: no profile file "
                       + re.escape(str(REPO / "my-profiles" / "ef.yaml")) + r" \(relative paths are read from the "
                       r"repository: give an absolute one\)"):
        load_playbook(p)
    data.pop("conditions")  # the same from a factor: where it looked, on the factor's line
    data["factors"] = {"flood": ["none", "campaign-flood"], "profile": ["fifo", "my-profiles/ef.yaml"]}
    data["baseline"] = {"flood": "none", "profile": "fifo"}
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"pb.yaml:\d+: factors\.profile: no profile file "
                       + re.escape(str(REPO / "my-profiles" / "ef.yaml"))):
        load_playbook(p)


def test_profile_files_appear_in_generated_names_by_their_stem():
    data = {"factors": {"flood": ["none", "traffic-gen/incast.yaml"], "profile": ["fifo", "playbooks/examples/ef.yaml"]}}
    names = [c["name"] for c in expand_factors(data)["conditions"]]
    assert "incast / ef" in names and not any("/" in n.replace(" / ", "") for n in names)
