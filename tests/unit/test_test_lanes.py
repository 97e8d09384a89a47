"""The test suite's own structure (issue 53): the integration tests' lanes (tests/integration/lanes.py)
and the slowest-tests table ``make test`` prints (scripts/slowest.py)."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
INTEGRATION = REPO / "tests" / "integration"
_spec = importlib.util.spec_from_file_location("lanes", INTEGRATION / "lanes.py")
assert _spec and _spec.loader
lanes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lanes)

#: What a module of the concurrent lane must not do: measure against the wall clock or the link
#: (floods it drives itself, calibrated pacing, TCP rates, the fidelity monitor's CPU hog), or
#: snapshot every namespace of the machine (another worker's testbed would show in it).
MEASURES = ("netns_snapshot", "DitgGenerator", "tcp_under_flood", "calibrated", "iperf_tcp", "FloodRun",
            "open_flood", "tree_cpu_ticks", "cpuacct", "received_wire_bps")


def test_every_concurrent_module_exists_and_says_why():
    for name, (seconds, why) in lanes.CONCURRENT.items():
        assert (INTEGRATION / f"{name}.py").is_file(), name
        assert seconds > 0 and len(why) > 20, name


def _concurrent_code(name: str) -> str:
    """The source of module ``name`` that runs in the concurrent lane: without its imports and
    without the test functions kept serial (lanes.SERIAL_TESTS)."""
    src = (INTEGRATION / f"{name}.py").read_text()
    keep = [n for n in ast.parse(src).body
            if not isinstance(n, ast.Import | ast.ImportFrom)
            and not (isinstance(n, ast.FunctionDef) and n.name in lanes.SERIAL_TESTS.get(name, ()))]
    return "\n".join(ast.get_source_segment(src, n) or "" for n in keep)


@pytest.mark.parametrize("name", sorted(lanes.CONCURRENT))
def test_no_concurrent_module_measures_or_snapshots_the_machine(name):
    text = _concurrent_code(name)
    found = [m for m in MEASURES if re.search(rf"\b{m}\b", text)]
    assert not found, f"{name} uses {found}: it belongs in the serial lane"


def test_the_serial_tests_of_a_concurrent_module_exist_and_are_what_measures():
    for name, tests in lanes.SERIAL_TESTS.items():
        src = (INTEGRATION / f"{name}.py").read_text()
        defs = {n.name: n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)}
        assert tests <= set(defs), (name, tests - set(defs))
        assert not lanes.is_concurrent(name, next(iter(tests))) and lanes.is_concurrent(name, "test_other[bridge]")
    assert "calibrated" in (INTEGRATION / "test_switch.py").read_text()  # what the exception is for


def test_the_serial_lane_keeps_the_data_path_and_timing_modules():
    for name in ("test_datapath", "test_datapath_9300", "test_datapath_eos", "test_trafficgen", "test_patterns",
                 "test_kernel_pacing", "test_fidelity", "test_derive_onmachine", "test_calls", "test_cpu_budgets",
                 "test_campaign", "test_testbed", "test_scale", "test_slurm_campaign", "test_interrupt",
                 "test_ssh_campaign"):
        assert name not in lanes.CONCURRENT
    assert not lanes.is_concurrent("test_switch", "test_thesis_profile_wins_back_the_link_for_cluster_traffic[bridge]")


#: Modules that must stay alone (serial lane): which core does the work, CPU budgets and the
#: fidelity monitor's CPU view, timing against the wall clock, machine-wide snapshots.
ALONE = ("test_cpu_receive_on", "test_cpu_budgets", "test_fidelity", "test_derive_onmachine", "test_calls",
         "test_kernel_pacing", "test_testbed", "test_interrupt", "test_rtt_meter", "test_campaign",
         "test_ssh_campaign", "test_slurm_campaign", "test_scale")
#: What a paired module must not do: list the machine's namespaces or processes (the other worker's
#: testbed would show in them) or pace a flood by a process's timer against a calibration it makes
#: while the other module runs (the shared `calibrated` fixture is measured before any profile).
SNAPSHOTS = (r"\bnetns_snapshot\b", r"\bditg_pids\(", r"\blist_namespaces\(", r"scandir\(\"/proc\"\)")


def test_every_paired_module_exists_says_why_and_is_not_one_that_must_run_alone():
    for name, (seconds, why) in lanes.PAIRED.items():
        assert (INTEGRATION / f"{name}.py").is_file(), name
        assert seconds > 0 and len(why) > 20, name
        assert name not in ALONE, name
        text = (INTEGRATION / f"{name}.py").read_text()
        found = [m for m in SNAPSHOTS if re.search(m, text)]
        assert not found, f"{name} uses {found}: it would see the other paired module's testbed"


def test_a_test_is_in_one_lane_at_most():
    assert lanes.is_paired("test_datapath", "test_police_holds_a_udp_flow_to_the_police_rate[bridge]")
    assert not lanes.is_concurrent("test_datapath", "test_police_holds_a_udp_flow_to_the_police_rate[bridge]")
    flooded = "test_thesis_profile_wins_back_the_link_for_cluster_traffic[bridge]"
    assert lanes.is_paired("test_switch", flooded) and not lanes.is_concurrent("test_switch", flooded)
    assert lanes.is_concurrent("test_switch", "test_netmiko_round_trip_and_ios_errors[bridge]")
    assert not lanes.is_paired("test_switch", "test_netmiko_round_trip_and_ios_errors[bridge]")
    assert not lanes.is_paired("test_cpu_receive_on", "test_x") and not lanes.is_paired("test_ssh", "test_x")


def test_a_paired_modules_timer_paced_floods_stay_serial():
    """The patterns a process's timer paces (on-off, ramp: the kernel cannot express them) are not
    run beside another module: every test of a paired module that floods with one is listed in
    lanes.UNPAIRED_TESTS, and a listed test exists in its module."""
    for module, names in lanes.UNPAIRED_TESTS.items():
        assert module in lanes.PAIRED, module
        text = (INTEGRATION / f"{module}.py").read_text()
        for n in names:
            assert re.search(rf"^def {n}\(", text, re.M), (module, n)
            assert not lanes.is_paired(module, n) and not lanes.is_paired(module, n + "[x]")
    assert lanes.is_paired("test_patterns", "test_incast_three_senders_into_one_port")
    for module in lanes.PAIRED:
        text = (INTEGRATION / f"{module}.py").read_text()
        for m in re.finditer(r"^def (test_\w+)\(.*?(?=^def |\Z)", text, re.M | re.S):
            if re.search(r"[\"'](on-off|ramp)[\"']", m.group(0)):
                assert m.group(1) in lanes.UNPAIRED_TESTS.get(module, ()), (module, m.group(1))


def test_longest_first_orders_the_paired_lane_too():
    items = [_item("test_testbed", "a"), _item("test_scale_knobs", "k"), _item("test_trafficgen", "t1"),
             _item("test_trafficgen", "t2"), _item("test_datapath_eos", "e")]
    lanes.longest_first(items)
    assert [i.name for i in items] == ["a", "t1", "t2", "e", "k"]  # the serial one kept in place


def _item(module: str, test: str) -> SimpleNamespace:
    return SimpleNamespace(path=INTEGRATION / f"{module}.py", name=test)


def test_longest_first_reorders_the_concurrent_lane_only():
    items = [_item("test_calls", "a"), _item("test_ssh", "b1"), _item("test_ssh", "b2"), _item("test_datapath", "c"),
             _item("test_push_faults", "d"), _item("test_report", "e")]
    lanes.longest_first(items)
    assert [i.name for i in items] == ["a", "d", "e", "c", "b1", "b2"]  # serial ones kept in place
    items = [_item("test_switch", "test_thesis_profile_wins_back_the_link_for_cluster_traffic[bridge]"),
             _item("test_ssh", "s"), _item("test_switch", "test_netmiko_round_trip_and_ios_errors[bridge]")]
    lanes.longest_first(items)  # the switch's serial test keeps its place; its concurrent one goes first
    assert [i.name[:11] for i in items] == ["test_thesis", "test_netmik", "s"]


def test_a_process_owns_its_testbeds_not_those_of_a_pid_it_prefixes():
    assert lanes.named_by("qsl-t1234m-jp-1", "t1234") and lanes.named_by("qsl-t1234@switch", "t1234")
    assert lanes.named_by("qsl-t1234pf@span", "t1234")
    assert not lanes.named_by("qsl-t12345m-jp-1", "t1234") and not lanes.named_by("qsl-ecenet-jp-1", "t1234")
    assert not lanes.named_by("qsl-t123m-jp-1", "t1234")


def _junit(path: Path, cases: list[tuple[str, str, float]]) -> Path:
    body = "".join(f'<testcase classname="{c}" name="{n}" time="{t}"/>' for c, n, t in cases)
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    return path


def test_slowest_merges_the_lanes_junit_files(tmp_path):
    a = _junit(tmp_path / "junit-fast.xml", [("tests.unit.test_x", "t1", 1.5), ("tests.unit.test_x", "t2", 9.0)])
    b = _junit(tmp_path / "junit-integration.xml", [("tests.integration.test_y", "t3", 120.25)])
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "slowest.py"), "2", str(a), str(b),
                        str(tmp_path / "missing.xml")], capture_output=True, text=True, check=True)
    assert r.stdout.splitlines() == ["slowest 2 tests of this make test (setup + call + teardown):",
                                     "   120.25s tests.integration.test_y::t3", "     9.00s tests.unit.test_x::t2"]


def test_slowest_usage_error_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "slowest.py"), "x"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "usage: slowest.py N JUNIT.xml..."


@pytest.mark.parametrize("text,why", [
    ('<?xml version="1.0"?><testsuites><testsuite><testcase classname="a" name="b" time="1', ":1: not junit XML"),
    ("", ":1: not junit XML"),
    ('<testsuites>\n<testcase classname="a" name="b" time="fast"/></testsuites>', "testcase b: time 'fast' is not seconds"),
])
def test_slowest_names_the_file_of_a_broken_junit_in_one_line(tmp_path, text, why):
    bad = tmp_path / "junit-integration.xml"
    bad.write_text(text)
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "slowest.py"), "30", str(bad)], capture_output=True,
                       text=True)
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"slowest.py: {bad}") and why in r.stderr, r.stderr


def test_each_worker_picks_switch_ports_in_its_own_slice_below_the_ephemeral_range():
    slices = [lanes.port_slice(None)] + [lanes.port_slice(f"gw{i}") for i in range(lanes.PORT_SLICES - 1)]
    taken = [p for r in slices for p in r]
    assert len(taken) == len(set(taken)) == lanes.PORT_SLICES * lanes.PORT_SLICE  # disjoint
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert max(taken) < low and min(taken) >= 1024
    assert lanes.port_slice("gw11") == lanes.port_slice("gw0")  # past the slices: modulo


def test_an_idle_module_builds_no_testbed_measures_nothing_and_is_in_no_other_lane():
    """The idle lane (nice 19 beside the paired lane) takes only modules that compute: no testbed
    fixture or Testbed, nothing of MEASURES, no wall-clock bound; none is concurrent or paired."""
    assert lanes.IDLE
    for name, (seconds, why) in lanes.IDLE.items():
        text = (INTEGRATION / f"{name}.py").read_text()
        assert seconds > 0 and len(why) > 20, name
        found = [m for m in (*MEASURES, r"\btestbed\b", r"\bTestbed\(", r"monotonic\(") if re.search(m, text)]
        assert not found, f"{name} uses {found}: it does not belong in the idle lane"
        assert name not in lanes.CONCURRENT and name not in lanes.PAIRED, name
        assert lanes.is_idle(name, "test_x") and not lanes.is_idle("test_datapath", "test_x")


def test_make_test_runs_the_idle_lane_beside_the_paired_one_at_nice_19_and_not_in_the_serial_lane():
    make = (REPO / "Makefile").read_text()
    assert re.search(r"-j2 test-integration-paired test-integration-idle", make)
    assert re.search(r"nice -n 19 \$\(PYTEST\) -q -m idle ", make)
    assert re.search(r'-m "not concurrent and not paired and not idle"', make)
