"""Per-packet agreement with tshark on crafted captures of every encapsulation (VLAN, QinQ, three
tags, PPPoE, IPv6 + extension headers, IPv4/IPv6 fragments, AH, SLL, SLL2, raw IP, PPP, Cisco
HDLC, BSD loopback, IP-in-IP, GRE, ERSPAN), in both tunnel modes, classified in one JVM per mode
(the batch path). No namespaces: runs the capture jar and tshark on files."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("scapy")
from crafted_captures import captures  # noqa: E402
from qoslab.capture import JAR, classify_files  # noqa: E402
from tshark_ref import tshark_classes, tshark_dscp, tshark_rows  # noqa: E402

pytestmark = pytest.mark.skipif(not JAR.exists() or shutil.which("tshark") is None,
                                reason="needs the capture jar (make setup) and tshark")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    d = tmp_path_factory.mktemp("crafted")
    caps = captures(d / "pcaps")
    out = {}
    for mode in ("inner", "outer"):
        res = classify_files([d / "pcaps"], d / mode, rmi_mode="ethereal", per_packet=True, tunnel=mode)
        assert res["done"]["failed"] == 0 and res["done"]["files"] == len(caps)
        out[mode] = {Path(r["file"]).stem: Path(r["summary"]).parent for r in res["files"]}
    return caps, out


def ours(folder: Path) -> dict[int, dict]:
    with open(folder / "packets.csv") as f:
        return {int(r["index"]): r for r in csv.DictReader(f)}


@pytest.mark.parametrize("mode", ["inner", "outer"])
def test_every_crafted_capture_agrees_with_tshark_per_packet(crafted, mode):
    caps, out = crafted
    for name, pcap in caps.items():
        mine = {n: r["class"] for n, r in ours(out[mode][name]).items()}
        assert mine == tshark_classes(pcap, mode), f"{name} ({mode})"


def test_dscp_agrees_with_tshark_for_ipv4_and_ipv6(crafted):
    caps, out = crafted
    seen = set()
    for name, pcap in caps.items():
        mine = ours(out["inner"][name])
        for n, dscp in tshark_dscp(pcap).items():
            assert int(mine[n]["dscp"]) == dscp, f"{name} frame {n}"
            seen.add(dscp)
    assert {0, 10, 40, 46} <= seen  # the crafted DS fields and traffic classes were really compared


def test_the_crafted_classes_are_what_they_were_built_to_be(crafted):
    _, out = crafted
    tun = [r["class"] for r in ours(out["inner"]["tunnels"]).values()]
    assert tun == ["data", "ssh", "udp", "control/ack", "data", "rmi", "udp", "data", "other"]
    assert {r["class"] for r in ours(out["outer"]["tunnels"]).values()} == {"other"}
    eth = ours(out["inner"]["ethernet"])
    assert {r["class"] for r in eth.values()} == {"control/ack", "ssh", "rmi", "data", "udp", "short-frame", "other"}
    for name in ("sll", "sll2", "raw-ip", "raw-ipv4", "raw-ipv6", "ppp", "cisco-hdlc", "loopback"):
        assert "data" in {r["class"] for r in ours(out["inner"][name]).values()} or name == "raw-ipv6", name


def test_encapsulation_labels_follow_tsharks_layers(crafted):
    caps, out = crafted
    for name, pcap in caps.items():
        mine = ours(out["inner"][name])
        for r in tshark_rows(pcap):
            toks = r["frame.protocols"].split(":")
            label = mine[int(r["frame.number"])]["encap"]
            outer = toks[:toks.index("gre")] if "gre" in toks else toks
            tags = outer.count("vlan") + outer.count("ieee8021ad")
            assert ("802.1q-x3+" if tags >= 3 else "qinq" if tags == 2 else "802.1q" if tags else "/") in label \
                or tags == 0, (name, label, toks)
            assert ("gre" in toks) == ("gre" in label), (name, label, toks)
            assert ("ipv6" in toks) == ("ipv6" in label), (name, label, toks)


def test_summary_counts_encapsulations_fragments_and_undecodable(crafted):
    _, out = crafted
    eth = json.loads((out["inner"]["ethernet"] / "summary.json").read_text())
    enc = eth["encapsulations"]
    assert enc["ethernet/qinq/ipv4"] == 1 and enc["ethernet/802.1q-x3+/ipv6"] == 1
    assert enc["ethernet/ipv6+ext"] >= 5 and enc["ethernet/pppoe/ipv4"] == 1 and enc["ethernet/non-ip"] == 1
    assert eth["fragments"] == {"first": 3, "later_followed": 6, "later_unseen": 1}
    # the two snaplen cuts inside headers (IPv6 extension chain, TCP header), nothing else
    assert eth["undecodable"]["packets"] == 2, eth["undecodable"]
    assert eth["other_breakdown"]["non_ip"] == 1 and eth["other_breakdown"]["ip_protocols"] == {"1": 1, "50": 1, "58": 1}
    tun = json.loads((out["outer"]["tunnels"] / "summary.json").read_text())
    assert tun["tunnel"] == "outer" and tun["encapsulations"]["ethernet/ipv4/gre"] == 3
    assert json.loads((out["inner"]["tunnels"] / "summary.json").read_text())["tunnel"] == "inner"


def test_cli_classifies_a_folder_in_one_command(crafted, tmp_path):
    caps, _ = crafted
    folder = next(iter(caps.values())).parent
    (folder / "not-a-capture.pcap").write_text("hello, this is not a capture file at all")
    try:
        r = subprocess.run([sys.executable, "-m", "qoslab", "capture", "classify", str(folder), "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    finally:
        (folder / "not-a-capture.pcap").unlink()
    assert r.returncode == 2, r.stderr
    assert "1 of 11 files could not be read" in r.stderr and "Traceback" not in r.stderr
    assert f"{len(caps) + 1} capture files" in r.stdout and "wrong magic" in (tmp_path / "combined.csv").read_text()
    rows = list(csv.DictReader(open(tmp_path / "combined.csv")))
    assert len(rows) == len(caps) + 1 and sum(int(r["packets"] or 0) for r in rows) > 60
