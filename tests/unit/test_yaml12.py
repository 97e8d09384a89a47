"""Issue 50, item 1: one YAML loader reading YAML 1.2's core schema; YAML 1.1's implicit forms
that change meaning silently refused by name, file and line; each field takes only its own type.
Every shipped topology, profile, flood and playbook still loads."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from qoslab.campaign import load_playbook
from qoslab.errors import ConfigError
from qoslab.profiles import load_profile
from qoslab.scale.cpu import parse_cpulist
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.units import parse_rate, parse_size
from qoslab.yamlio import dump_yaml, read_yaml


def _read(tmp_path, text: str):
    p = tmp_path / "x.yaml"
    p.write_text(text)
    return read_yaml(p)[0]


@pytest.mark.parametrize("text,value", [
    ("a: off", "off"), ("a: yes", "yes"), ("a: On", "On"), ("a: n", "n"),  # 1.1 booleans: strings in 1.2
    ("a: true", True), ("a: FALSE", False), ("a: ~", None), ("a: null", None), ("a:", None),
    ("a: 42", 42), ("a: -7", -7), ("a: 0", 0), ("a: 1e3", 1000.0), ("a: .5", 0.5), ("a: 2.", 2.0),
    ("a: 2026-11-29", "2026-11-29"),  # no dates in 1.2's core schema
    ("a: '2:11:12'", "2:11:12"), ('a: "0x28"', "0x28"),  # quoted: a string in both versions
])
def test_core_schema_reads_plain_scalars_as_yaml_1_2(tmp_path, text, value):
    got = _read(tmp_path, text)["a"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text,what", [
    ("buffer: 2:11:12", "sexagesimal"), ("buffer: 1:30.5", "sexagesimal"), ("buffer: 131_072", "digit separators"),
    ("buffer: 0x10", "hexadecimal"), ("cpus: 0x0", "hexadecimal"), ("dscp: 0o50", "octal or binary"),
    ("dscp: 0b101", "octal or binary"), ("dscp: 050", "leading zero"), ("x: [1, 0x28]", "hexadecimal"),
])
def test_yaml_1_1_numeric_forms_are_refused_by_name_file_and_line(tmp_path, text, what):
    p = tmp_path / "x.yaml"
    p.write_text("name: n\n" + text + "\n")
    with pytest.raises(ConfigError) as e:
        read_yaml(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:2: {text.split(':')[0]}") and what in msg and "\n" not in msg, msg


def test_a_yaml_1_1_form_as_a_key_is_refused(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("queue_sets:\n  0x2: {}\n")
    with pytest.raises(ConfigError, match=r"x.yaml:2: queue_sets.0x2: key '0x2' is a hexadecimal number"):
        read_yaml(p)


@pytest.mark.parametrize("value", ["off", "yes", "2:11:12", "131_072", "0x28", "050", "1e3", "true", "null",
                                   "2026-11-29", "42", "~", ""])
def test_dump_quotes_every_string_either_version_reads_otherwise(tmp_path, value):
    p = tmp_path / "x.yaml"
    p.write_text(dump_yaml({"a": value, "n": 7, "f": 0.25, "b": False}))
    assert read_yaml(p)[0] == {"a": value, "n": 7, "f": 0.25, "b": False}


def test_each_field_takes_only_its_own_type(tmp_path):
    base = (REPO / "qos-profiles" / "thesis.yaml").read_text()
    assert "set_dscp: 40" in base
    for bad, why in (('"40"', "a string ('40') where a number is expected: write the number without quotes"),
                     ("40.0", "a fractional number (40.0) where an integer is expected: write 40"),
                     ("40.5", "a fractional number (40.5) where an integer is expected")):
        p = tmp_path / "p.yaml"
        p.write_text(base.replace("set_dscp: 40", f"set_dscp: {bad}", 1))
        with pytest.raises(ConfigError) as e:
            load_profile(p)
        assert "set_dscp: " + why in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_boolean_field_given_a_yaml_1_1_word_says_so(tmp_path):
    text = (REPO / "playbooks" / "topologies" / "ecenet.yaml").read_text()
    p = tmp_path / "t.yaml"
    assert "offloads: false" in text
    p.write_text(text.replace("offloads: false", "offloads: off", 1))
    with pytest.raises(ConfigError, match=r"t.yaml:\d+: link.offloads: a string \('off': a boolean in YAML 1.1 only\)"
                                          r" where a boolean is expected: write true or false"):
        load_topology(p)


@pytest.mark.parametrize("text", ["\u0660", "\u0661-\u0663", "0,\u0662", "\uff11"])
def test_non_ascii_digits_are_no_cpus_nor_sizes(text):
    with pytest.raises(ValueError):
        parse_cpulist(text)
    with pytest.raises(ValueError):
        parse_size(text)
    with pytest.raises(ValueError):
        parse_rate(text + "Mbit")


def _shipped(pattern: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", pattern], capture_output=True, text=True, cwd=REPO, check=True).stdout
    return [f for f in out.split() if "malformed" not in f]


LOADERS = [("playbooks/topologies/*.yaml", load_topology), ("qos-profiles/*.yaml", load_profile),
           ("traffic-gen/*.yaml", load_flood), ("playbooks/*.yaml", load_playbook)]


@pytest.mark.parametrize("pattern,loader", LOADERS, ids=[p for p, _ in LOADERS])
def test_every_shipped_file_still_loads(pattern, loader):
    files = [f for f in _shipped(pattern) if f.count("/") == pattern.count("/")]
    assert len(files) >= 3, pattern
    for f in files:
        loader(REPO / f)


def test_every_yaml_file_in_the_repository_reads(tmp_path):
    files = [f for f in _shipped("*.yaml") + _shipped("*.yml") if not f.startswith(".")]
    assert len(files) > 100
    for f in files:
        read_yaml(REPO / f)


def test_the_python_and_libyaml_loaders_read_alike(tmp_path, monkeypatch):
    """Where PyYAML lacks libyaml the all-Python loader reads the same data, lines and refusals."""
    import qoslab.yamlio as yamlio
    files = [REPO / f for f in _shipped("playbooks/topologies/*.yaml")[:3] + _shipped("qos-profiles/*.yaml")[:3]]
    fast = [read_yaml(f) for f in files]
    monkeypatch.setattr(yamlio, "_StrictLoader", yamlio._PyStrictLoader)
    slow = [read_yaml(f) for f in files]
    for (d1, n1), (d2, n2) in zip(fast, slow, strict=True):
        assert d1 == d2 and n1.value[-1][0].start_mark.line == n2.value[-1][0].start_mark.line
    p = tmp_path / "x.yaml"
    for text, want in (("a: 0x28\n", "hexadecimal"), ("a: &x [1]\nb: *x\n", "aliases"), ("a: off\n", None)):
        p.write_text(text)
        if want is None:
            assert read_yaml(p)[0] == {"a": "off"}
        else:
            with pytest.raises(ConfigError, match=want):
                read_yaml(p)


def _many_keys(tmp_path, n: int):
    p = tmp_path / f"keys-{n}.yaml"
    p.write_text((REPO / "playbooks" / "topologies" / "ecenet.yaml").read_text()
                 + "".join(f"k{i}: {i}\n" for i in range(n)))
    return p


def test_a_topology_with_60000_unknown_keys_is_refused_fast_in_a_bounded_line(tmp_path):
    """Issue 50's acceptance: ``topology validate`` of a 60,000-key file ends within a generous
    margin of a small file's time (it took minutes: a line lookup per key) and its one line lists
    a few problems and counts the rest."""
    import sys
    import time
    times, lines = {}, {}
    for n in (3, 60_000):
        p = _many_keys(tmp_path, n)
        t = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "qoslab", "topology", "validate", str(p)], capture_output=True,
                           text=True, timeout=120, cwd=REPO)
        times[n] = time.monotonic() - t
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
        [lines[n]] = [x for x in r.stderr.splitlines() if x.strip()]
    assert f"keys-60000.yaml:{len(ECENET_LINES) + 1}: k0: unknown field (typo?); 59999 more: " in lines[60_000]
    assert lines[60_000].endswith("; and 59997 more") and len(lines[60_000]) < 1000, lines[60_000][:2000]
    assert times[60_000] < times[3] + 10.0, times


def test_refusing_unknown_keys_is_linear_in_their_number(tmp_path):
    import time
    cost = {}
    for n in (6_000, 60_000):
        p = _many_keys(tmp_path, n)
        t = time.process_time()
        with pytest.raises(ConfigError, match=f"{n - 1} more"):
            load_topology(p)
        cost[n] = time.process_time() - t
    assert cost[60_000] < 30 * cost[6_000] + 0.5, cost  # linear: ~10x; the old lookup per key was ~100x


ECENET_LINES = (REPO / "playbooks" / "topologies" / "ecenet.yaml").read_text().splitlines()
