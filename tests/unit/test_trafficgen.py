"""Flood definitions, rate resolution, the safety interlock, ITGDec parsing, calibration maths.
Pure: no packets are sent here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ECENET, REPO
from qoslab.errors import ConfigError, QoslabError, UnsafeTarget
from qoslab.topology import Host, Topology, load_topology
from qoslab.trafficgen import Calibration, check_target, load_flood, resolve
from qoslab.trafficgen.ditg import DitgGenerator as FloodRun
from qoslab.trafficgen.ditgpacing import pacing_for
from qoslab.trafficgen.itgdec import parse_itgdec_series, parse_itgdec_summary

DATA = Path(__file__).resolve().parents[1] / "data"
THESIS = REPO / "traffic-gen" / "thesis-flood.yaml"


def ecenet_50() -> Topology:
    """ecenet at 50 Mbit/s (its rate before the scale-model sweep chose 10): the numbers below."""
    return load_topology(ECENET, link={"rate": "50Mbit", "burst_ms": 2.5, "offloads": False})


def test_thesis_flood_definition():
    d = load_flood(THESIS)
    assert [(f.src, f.dst) for f in d.flows] == [("jp-5", "jp-1"), ("jp-6", "jp-2"), ("jp-7", "jp-3"), ("jp-8", "jp-4")]
    assert d.payload_bytes == 1400 and d.rate == "1.5x" and d.protocol == "UDP" and d.duration_s is None


def test_rate_multiple_resolves_to_wire_packets_per_second():
    topo = ecenet_50()
    flows = resolve(load_flood(THESIS), topo)
    f = flows[0]
    # 1.5 x 50 Mbit/s over 1442-byte frames (1400 + UDP 8 + IP 20 + Ethernet 14)
    assert f.frame_bytes == 1442
    assert f.pps == pytest.approx(1.5 * 50e6 / (1442 * 8))
    assert pacing_for(load_flood(THESIS), f, None) == (6501, True)  # no calibration: -poll at the wanted rate
    assert f.dst_ip == "198.18.0.1" and f.port == 10001 and flows[3].port == 10004


def test_calibrated_pacing_interpolates_the_itgsend_rate():
    topo = ecenet_50()
    cal = Calibration("ecenet", 1400, [(4334, 2740.0, 8), (8668, 4079.0, 10), (17336, 5755.0, 5), (34672, 6674.0, 6)])
    f = resolve(load_flood(THESIS), topo)[0]
    itg_rate, poll = pacing_for(load_flood(THESIS), f, cal)
    assert poll is False
    assert 17336 < itg_rate < 34672  # 6501 pkt/s lies between the last two measured points
    assert cal.rate_for(2740.0) == pytest.approx(4334, rel=0.01)
    assert cal.rate_for(1370.0) == pytest.approx(2167, rel=0.01)  # below the first point: proportional
    assert not cal.covers(7000)
    with pytest.raises(QoslabError, match="at most 6674"):
        cal.rate_for(7000)


@pytest.mark.parametrize("ip", ["8.8.8.8", "224.0.0.1", "127.0.0.1", "255.255.255.255", "198.18.0.255",
                                "198.18.0.0", "198.18.0.99", "10.1.2.3", "0.0.0.0", "not-an-ip"])
def test_interlock_refuses(ip):
    with pytest.raises(UnsafeTarget, match="refusing flood target"):
        check_target(load_topology(ECENET), ip)


def test_interlock_accepts_testbed_hosts():
    topo = load_topology(ECENET)
    for h in topo.hosts:
        check_target(topo, h.ip)


def test_interlock_stops_a_flood_before_anything_starts():
    """A topology that bypassed validation with a host outside the testbed range: the driver
    refuses at construction, before any executor is asked to run anything."""
    good = load_topology(ECENET)
    hosts = list(good.hosts)
    hosts[0] = Host.model_construct(name="jp-1", address=__import__("ipaddress").ip_interface("8.8.8.8/24"),
                                    port="Gi1/0/1")
    bad = Topology.model_construct(**{**dict(good), "hosts": hosts})
    calls = []
    with pytest.raises(UnsafeTarget, match="8.8.8.8"):
        FloodRun(load_flood(THESIS), bad, lambda h: calls.append(h), Path("/nonexistent"))
    assert calls == []


def test_unknown_host_in_a_flow(write_yaml):
    p = write_yaml({"name": "x", "flows": [{"src": "jp-5", "dst": "jp-42"}]})
    with pytest.raises(QoslabError, match="flows\\[0\\].dst: no host 'jp-42'"):
        resolve(load_flood(p), load_topology(ECENET))


@pytest.mark.parametrize("data,expect", [
    ({"name": "x", "flows": [{"src": "jp-5", "dst": "jp-1"}], "rat": "1x"}, "rat: unknown field (typo?)"),
    ({"name": "x", "rate": "fast", "flows": [{"src": "jp-5", "dst": "jp-1"}]}, "rate: rate must be packets/s (1-1000000 or '800 pps'), a link-rate multiple like '1.5x' (at most 10x) or "
     "bits/s on the wire like '20 Mbit/s', got 'fast'"),
    ({"name": "x", "flows": [{"src": "jp-5", "dst": "jp-5"}]}, "flows[0].dst: flow jp-5 -> jp-5 sends to itself"),
    ({"name": "x", "flows": [{"src": "jp-5", "dst": "jp-1"}, {"src": "jp-6", "dst": "jp-2", "rate": "2y"}]},
     "flows[1].rate: rate must be"),
    ({"name": "x", "flows": []}, "flows: a flood needs at least one flow"),
    ({"name": "x", "payload_bytes": 3, "flows": [{"src": "jp-5", "dst": "jp-1"}]}, "payload_bytes"),
    ({"flows": [{"src": "jp-5", "dst": "jp-1"}]}, "name: Field required"),
])
def test_bad_flood_files_name_file_and_field(write_yaml, data, expect):
    p = write_yaml(data)
    with pytest.raises(ConfigError) as e:
        load_flood(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:") and expect in msg, msg


def test_parse_real_itgdec_summary():
    s = parse_itgdec_summary((DATA / "itgdec-recv-summary.txt").read_text())
    assert s["total_packets"] == 42816 and s["bytes_received"] == 59942400
    assert s["bytes_received"] == 1400 * s["total_packets"]
    assert 0 < s["avg_delay_s"] < s["max_delay_s"] < 1
    assert s["error_lines"] == 0


def test_parse_itgdec_rejects_garbage():
    with pytest.raises(QoslabError, match="no TOTAL RESULTS"):
        parse_itgdec_summary("\x00\x01 garbage " * 1000)
    with pytest.raises(QoslabError, match="unreadable value"):
        parse_itgdec_summary("TOTAL RESULTS\nTotal packets = lots\n")
    with pytest.raises(QoslabError, match="lacks total_time_s"):
        parse_itgdec_summary("TOTAL RESULTS\nTotal packets = 3\n")


def test_parse_itgdec_summary_of_an_empty_log_is_zero_packets_without_sentinels():
    # ITGDec 2.8.1 on an empty receiver log (a flooded receiver that got nothing, seen in CI on a
    # loaded machine): "-nan" average delay and -90000 s total time must not fail the trial's decode
    s = parse_itgdec_summary((DATA / "itgdec-empty-log-summary.txt").read_text())
    assert s["total_packets"] == 0 and s["total_time_s"] == 0 and s["bytes_received"] == 0
    assert not {"avg_delay_s", "min_delay_s", "max_delay_s", "avg_jitter_s", "delay_std_s"} & set(s)


def test_parse_itgdec_summary_of_garbage_is_refused_not_an_empty_flood():
    # ITGDec 2.8.1 on 200 kB of random bytes: the same empty TOTAL block, but 1388 error lines
    with pytest.raises(QoslabError, match="no packet and 1388 unreadable lines: not a D-ITG log"):
        parse_itgdec_summary((DATA / "itgdec-garbage-log-summary.txt").read_text(errors="replace"))


def test_parse_itgdec_summary_refuses_nan_beside_packets():
    text = (DATA / "itgdec-recv-summary.txt").read_text()
    bad = re.sub(r"(Average delay\s*=\s*)\S+", r"\1-nan", text)
    assert bad != text
    with pytest.raises(QoslabError, match="Average delay.*'nan' over 42816 packets"):
        parse_itgdec_summary(bad)


def test_parse_itgdec_series():
    rows = parse_itgdec_series((DATA / "itgdec-recv-series.txt").read_text() + "\nnot a row\n1 2 3\n")
    assert len(rows) == 11 and rows[0]["time_s"] == 0 and rows[1]["time_s"] == 1
    assert all(40_000 < r["bitrate_kbps"] < 50_000 for r in rows[:9])


def test_kernel_pacing_asks_itgsend_twice_the_link_and_reports_the_link_rate():
    """pacing: kernel (the default `auto` where the flood qualifies): the thesis flood at 1.5x
    is one constant UDP flow per source host, so each sender runs unpaced at -C = 2 x the
    link's packets/s and is judged against the link's packets/s, not the asked 1.5x."""
    from qoslab.trafficgen.ditgpacing import KERNEL_C_FACTOR, plan_pacing

    topo = ecenet_50()
    defn = load_flood(THESIS)
    flows = resolve(defn, topo)
    link_pps = 50e6 / (1442 * 8)  # 4334.3 packets/s
    for pacing in ("auto", "kernel"):
        plan = plan_pacing(defn.model_copy(update={"pacing": pacing}), flows, topo.link.rate, None)
        assert set(plan) == {0, 1, 2, 3}
        for p in plan.values():
            assert p.mode == "kernel" and p.poll is False
            assert p.sender_pps == pytest.approx(link_pps)
            assert p.itg_rate == 8669 == int(-(-KERNEL_C_FACTOR * link_pps // 1))
    # the old modes stay selectable
    poll = plan_pacing(defn.model_copy(update={"pacing": "poll"}), flows, topo.link.rate, None)
    assert {(p.mode, p.itg_rate, p.poll) for p in poll.values()} == {("poll", 6501, True)}
    assert poll[0].sender_pps == pytest.approx(1.5 * link_pps)


def _flood(**kw):
    from qoslab.trafficgen.definitions import FloodDefinition

    return FloodDefinition(**{"name": "k", "rate": "1.1x", "flows": [{"src": "jp-5", "dst": "jp-1"}], **kw})


@pytest.mark.parametrize("kw, reason", [
    ({"protocol": "TCP"}, "kernel pacing is for UDP"),
    ({"flows": [{"src": "jp-5", "dst": "jp-1", "idt": "exponential"}]}, "not a constant-rate flow"),
    ({"flows": [{"src": "jp-5", "dst": "jp-1", "on_ms": 100, "off_ms": 100}]}, "not a constant-rate flow"),
    ({"flows": [{"src": "jp-5", "dst": "jp-1"}, {"src": "jp-5", "dst": "jp-2"}]}, "one flow per source host"),
])
def test_kernel_pacing_refuses_a_flood_it_cannot_rate(kw, reason):
    """Explicit `kernel` on a flood whose rate the host link would not set is an error naming the
    flow; `auto` falls back to poll (no calibration) for the same flood."""
    from qoslab.trafficgen.definitions import kernel_rates
    from qoslab.trafficgen.ditgpacing import plan_pacing

    topo = load_topology(ECENET)
    defn = _flood(**kw)
    flows = resolve(defn, topo)
    assert reason in kernel_rates(flows, topo.link.rate)
    with pytest.raises(QoslabError, match=f"pacing 'kernel': flow jp-5 -> jp-.*{reason}"):
        plan_pacing(defn.model_copy(update={"pacing": "kernel"}), flows, topo.link.rate, None)
    auto = plan_pacing(defn, flows, topo.link.rate, None)
    assert {p.mode for p in auto.values()} == {"poll"}


def test_kernel_rates_at_exactly_the_link_rate_and_the_pacing_value_is_validated():
    from qoslab.trafficgen.definitions import kernel_rates

    topo = load_topology(ECENET)
    flows = resolve(_flood(rate="1x", payload_bytes=200), topo)
    assert kernel_rates(flows, topo.link.rate) == {0: pytest.approx(10e6 / (242 * 8))}
    with pytest.raises(ValueError, match="pacing"):
        _flood(pacing="nic")


def test_kernel_queue_limit_lets_the_socket_fill_first():
    from qoslab.trafficgen.definitions import KERNEL_QUEUE_HEADROOM, kernel_queue_limit

    assert kernel_queue_limit(131072, 212992) == 212992 + KERNEL_QUEUE_HEADROOM > 131072
    assert kernel_queue_limit(1_000_000, 212992) == 1_000_000  # a deeper host queue stays as it is


def _tc_answers(tc: str):
    """An executor whose every command prints ``tc`` (a ``tc -j qdisc show`` answer) and exits 0."""
    from types import SimpleNamespace

    class Ex:
        def run(self, argv, check=False, timeout=None):
            return SimpleNamespace(stdout=tc, returncode=0)

    return Ex()


def test_host_queue_drops_reads_the_root_qdiscs_only():
    """The counts come from the root qdiscs only (a root's include its children's); an unreadable
    tc answer is None."""

    from qoslab.trafficgen.ditgpacing import host_queue_drops

    tc = ('[{"kind":"htb","handle":"1:","root":true,"drops":7,"qlen":3},'
          '{"kind":"bfifo","handle":"10:","parent":"1:10","drops":7,"qlen":3},'
          '{"kind":"noqueue","handle":"0:","root":true}]')

    assert host_queue_drops(_tc_answers(tc)) == (7, 3)
    tc = "not json"
    assert host_queue_drops(_tc_answers(tc)) is None


def test_pin_cpu_prefixes_taskset_and_refuses_a_cpu_this_machine_lacks():
    import os

    from qoslab.trafficgen.ditgpacing import placement, plan_pacing

    n = os.cpu_count() or 1
    assert placement(_flood()) == []
    assert placement(_flood(pin_cpu="last")) == ["taskset", "-c", str(n - 1)]
    assert placement(_flood(pin_cpu=0)) == ["taskset", "-c", "0"]
    topo = load_topology(ECENET)
    bad = _flood(pin_cpu=n)
    with pytest.raises(QoslabError, match=f"pin_cpu {n}: this machine has CPUs 0..{n - 1}"):
        plan_pacing(bad, resolve(bad, topo), topo.link.rate, None)
    for wrong in (-1, "first", 1.5):
        with pytest.raises(ValueError, match="pin_cpu"):
            _flood(pin_cpu=wrong)


def test_a_decoded_log_on_this_machines_file_system_is_removed_without_a_command(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from qoslab.executors import LocalExecutor, NetnsExecutor
    from qoslab.trafficgen.itgdec import keep_or_drop

    log, local = tmp_path / "node" / "recv-0.log", tmp_path / "here" / "recv-0.log"
    ran = []
    for ex in (LocalExecutor("jp-1"), NetnsExecutor("jp-1", "qsl-x-jp-1")):
        for f in (log, local):
            f.parent.mkdir(exist_ok=True)
            f.write_bytes(b"\0" * 64)
        monkeypatch.setattr(type(ex), "run", lambda self, argv, **kw: ran.append(argv))
        keep_or_drop(ex, str(log), local, keep=False)
        assert not log.exists() and not local.exists() and ran == []
    # a node elsewhere (ssh): the log is removed there by `rm -f`, the local copy here
    remote = SimpleNamespace(calls=[], run=lambda argv, **kw: remote.calls.append(argv))
    local.write_bytes(b"\0")
    keep_or_drop(remote, "/srv/qoslab/recv-0.log", local, keep=False)
    assert remote.calls == [["rm", "-f", "/srv/qoslab/recv-0.log"]] and not local.exists()


def test_a_kept_log_is_fetched_and_one_that_cannot_be_stays_on_its_node(tmp_path):
    from qoslab.executors import LocalExecutor
    from qoslab.trafficgen.itgdec import keep_or_drop

    log, local = tmp_path / "node" / "recv-0.log", tmp_path / "here" / "recv-0.log"
    log.parent.mkdir()
    log.write_bytes(b"\1" * 8)
    keep_or_drop(LocalExecutor("jp-1"), str(log), local, keep=True)
    assert log.read_bytes() == local.read_bytes() == b"\1" * 8
    keep_or_drop(LocalExecutor("jp-1"), str(tmp_path / "node" / "gone.log"), tmp_path / "here" / "gone.log", keep=True)
    assert not (tmp_path / "here" / "gone.log").exists()


@pytest.mark.parametrize("rate, share", [("0.5x", 0.5), ("0.95x", 0.95), ("0.9999x", 0.9999), ("1x", 1.0), ("1.5x", 1.0)])
def test_kernel_pacing_below_and_at_the_link_tells_the_kernel_the_asked_rate(rate, share):
    """Issue 48: on the testbed `auto` kernel-paces a constant UDP flood at any rate; the HTB class
    each flow gets is set to exactly the asked wire rate (the link's above 1x), and the sender is
    judged against that rate. Fails when the rate given to tc is not the asked one."""
    import re

    from qoslab.trafficgen.ditgpacing import KERNEL_C_FACTOR, flood_class_plan, plan_pacing

    topo = ecenet_50()
    defn = load_flood(THESIS).model_copy(update={"rate": rate})
    flows = resolve(defn, topo)
    link_pps = 50e6 / (1442 * 8)
    plan = plan_pacing(defn, flows, topo.link.rate, None)
    for f in flows:
        p = plan[f.index]
        assert (p.mode, p.poll) == ("kernel", False)
        assert p.sender_pps == pytest.approx(share * link_pps)
        assert p.itg_rate == int(-(-KERNEL_C_FACTOR * link_pps // 1))  # unpaced: always behind its schedule
        lines, teardown = flood_class_plan(f, p.sender_pps, topo)
        cls = next(l for l in lines if f"classid 1:{0x100 + f.index:x} " in l)
        told = int(re.search(r"htb rate (\d+)bit ceil (\d+)bit", cls).group(1))
        assert told == pytest.approx(share * 50e6, abs=1)
        # rate = ceil, under the link class, the link's buckets: a wait is not made up, and the
        # class never sends above its rate (kernelpace.py: both ways of making it up changed the flood)
        ceil = int(re.search(r"htb rate \d+bit ceil (\d+)bit", cls).group(1))
        burst, cburst = map(int, re.search(r"burst (\d+)b cburst (\d+)b", cls).groups())
        assert ceil == told and burst == cburst == topo.link.burst_bytes and " parent 1:1 classid " in cls
        assert f"burst {topo.link.burst_bytes}b cburst {topo.link.burst_bytes}b" in lines[0]  # the other class's
        # everything to the destination, D-ITG's signalling too (it must queue behind the flood)
        assert lines[-1].endswith(f"u32 match ip dst {f.dst_ip}/32 flowid 1:{0x100 + f.index:x}")
        other = int(re.search(r"classid 1:10 htb rate (\d+)bit", lines[0]).group(1))
        assert other == max(50_000_000 - told, 500_000)  # the host stays within its link
        assert teardown[1] == f"class del dev eth0 classid 1:{0x100 + f.index:x}"


def test_kernel_pacing_below_the_link_off_the_testbed_is_refused_by_name():
    """Off the embedded testbed qoslab does not own the node's qdisc: below 1x only a paced
    sender sets the rate (`kernel` refused naming the flow, `auto` falls back)."""
    from qoslab.trafficgen.definitions import kernel_rates
    from qoslab.trafficgen.ditgpacing import plan_pacing

    topo = load_topology(ECENET)
    defn = _flood(rate="0.8x")
    flows = resolve(defn, topo)
    assert "off the embedded testbed" in kernel_rates(flows, topo.link.rate, below_link=False)
    with pytest.raises(QoslabError, match="pacing 'kernel': flow jp-5 -> jp-1: asks .* below its link"):
        plan_pacing(defn.model_copy(update={"pacing": "kernel"}), flows, topo.link.rate, None, below_link=False)
    assert {p.mode for p in plan_pacing(defn, flows, topo.link.rate, None, below_link=False).values()} == {"poll"}
    assert {p.mode for p in plan_pacing(defn, flows, topo.link.rate, None).values()} == {"kernel"}


def test_flood_class_lines_refuse_rates_outside_the_link():
    from qoslab.trafficgen.kernelpace import flood_class_lines, teardown_lines

    with pytest.raises(ValueError, match="outside"):
        flood_class_lines(0, "198.18.0.1", 0, 10_000_000, 3028, 300_000)
    with pytest.raises(ValueError, match="outside"):
        flood_class_lines(0, "198.18.0.1", 10_000_001, 10_000_000, 3028, 300_000)
    t = teardown_lines(3, 10_000_000, 3028)
    assert t[0] == "filter del dev eth0 parent 1: pref 103" and "classid 1:10 htb rate 10000000bit" in t[2]


def test_flush_lines_show_the_queue_replace_it_and_show_the_class():
    """Issue 48: at the flood's stop a kernel-paced class's queue is emptied, not drained at the
    flood's rate: its bfifo shown (sent + queued: all it was given), deleted and put back empty
    under the same handle and limit as installed, then the class's own count shown (what left)."""
    from qoslab.trafficgen.ditgpacing import flood_class_plan, flood_flush_plan, plan_pacing

    topo = load_topology(ECENET)
    defn = load_flood(THESIS).model_copy(update={"rate": "0.95x"})
    flows = resolve(defn, topo)
    plan = plan_pacing(defn, flows, topo.link.rate, None)
    for f in flows:
        install, _ = flood_class_plan(f, plan[f.index].sender_pps, topo)
        show, delete, add, cls = flood_flush_plan(f, plan[f.index].sender_pps, topo)
        minor = f"{0x100 + f.index:x}"
        assert show == f"qdisc show dev eth0 parent 1:{minor}"
        assert delete == f"qdisc del dev eth0 parent 1:{minor} handle {minor}:"
        assert add == install[2].replace("qdisc replace", "qdisc add")  # the installed bfifo, empty
        assert cls == f"class show dev eth0 classid 1:{minor}"


def test_parse_flush_of_a_real_tc_batch_and_of_what_does_not_add_up():
    from qoslab.trafficgen.kernelpace import parse_flush

    text = (DATA / "tc-flush-batch.txt").read_text()  # 100 datagrams: 51 had left, 49 were queued
    assert parse_flush(0, text) == (51, 49)
    assert parse_flush(1, text) is None  # another flow's class: not in this output
    assert parse_flush(0, text.split("class htb")[0]) is None  # the class's count missing (tc stopped)
    assert parse_flush(0, text.replace(" 49p", " 48p").replace("bytes 51 pkt (dropped 0, overlimits 49",
                                                                "bytes 101 pkt (dropped 0, overlimits 49")) is None
    assert parse_flush(0, "") is None and parse_flush(0, "Error: Invalid handle.\nCommand failed -:2\n") is None


@pytest.mark.parametrize("value, ok", [("", 1), ("50000", 50000), ("0", None), ("-3", None), ("1e3", None),
                                       ("٣", None), ("10000000000", None)])
def test_sender_timer_slack_from_the_environment(monkeypatch, value, ok):
    from qoslab.trafficgen.ditgsched import TIMER_SLACK_ENV, sender_timer_slack_ns

    monkeypatch.setenv(TIMER_SLACK_ENV, value)
    if ok is None:
        with pytest.raises(QoslabError, match=TIMER_SLACK_ENV):
            sender_timer_slack_ns()
    else:
        assert sender_timer_slack_ns() == ok


def test_host_queue_state_reads_every_qdiscs_sent_packets_by_handle():

    from qoslab.trafficgen.ditgpacing import host_queue_state

    tc = ('[{"kind":"htb","handle":"1:","root":true,"drops":2,"qlen":63,"packets":900},'
          '{"kind":"bfifo","handle":"10:","parent":"1:10","drops":0,"qlen":0,"packets":8},'
          '{"kind":"bfifo","handle":"100:","parent":"1:100","drops":2,"qlen":63,"packets":892}]')

    assert host_queue_state(_tc_answers(tc)) == (2, 63, {"1:": (900, 63), "10:": (8, 0), "100:": (892, 63)})
