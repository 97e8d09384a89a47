"""One walk of a running-config (``ios.qoswalk.qos_lines``) serves both the push's QoS split
(``split_qos``: what the diff and rollback compare) and the ownership's items
(``switch.ownership.walk``: what a push may change), so the two cannot classify a line apart:
the lines the ownership keys are exactly the QoS side of the split, on every platform's rules,
shipped profiles rendered over an operator's configuration, recorded switch configs and hostile
texts (banners, indented first lines, bare ``interface``, NUL and CR, tabs, deep nesting)."""

from __future__ import annotations

import pytest
from test_platforms import PLATFORMS, PROFILES, _Config
from test_push_ownership import FOREIGN_EOS, FOREIGN_IOS

from conftest import ECENET, REPO
from qoslab.ios.qoswalk import C3750_RULES, qos_lines, split_qos
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.switch.ownership import walk
from qoslab.topology import load_topology

TOPO = load_topology(ECENET)

EOS = """interface Ethernet1
   description uplink
   tx-queue 3
      bandwidth percent 40
      no priority
   tx-queue 7
      priority strict
   mtu 9000
qos map dscp 46 to traffic-class 5
"""

HOSTILE = ["", "\n\n", "Building configuration...\nCurrent configuration : 1 bytes\n",
           " indented first\n  deeper\nmls qos\n", "interface\ninterface \ninterface  X\n priority-queue out\n",
           "\x00\r\n mls qos\r\nmls qos\r\n", "interface Gi1\n\tservice-policy input x\n service-policy input y\n"
           "  under\n   under2\n service-policy z\n  description in a QoS block\nmls qos\n",
           "class-map c\n" + "".join(" " * i + f"match {i}\n" for i in range(1, 200)),
           "interface Gi1/0/1\n srr-queue bandwidth share 1 2 3 4\ninterface Gi1/0/2\n description none\n"]


def test_the_roles_of_an_eos_interface_with_tx_queue_blocks():
    rules = get_platform("arista_eos").qos_rules
    got = [(q.text.strip(), q.role, q.head.strip(), q.interface) for q in qos_lines(EOS, rules)]
    assert got == [("interface Ethernet1", "interface", "", "Ethernet1"),
                   ("description uplink", "other", "", "Ethernet1"),
                   ("tx-queue 3", "if-qos", "tx-queue 3", "Ethernet1"),
                   ("bandwidth percent 40", "if-qos", "tx-queue 3", "Ethernet1"),
                   ("no priority", "if-qos", "tx-queue 3", "Ethernet1"),
                   ("tx-queue 7", "if-qos", "tx-queue 7", "Ethernet1"),
                   ("priority strict", "if-qos", "tx-queue 7", "Ethernet1"),
                   ("mtu 9000", "other", "", "Ethernet1"),
                   ("qos map dscp 46 to traffic-class 5", "global", "qos map dscp 46 to traffic-class 5", "")]
    assert [k for _, k in walk(EOS, rules)] == [None, None, "if Ethernet1: tx-queue 3", "if Ethernet1: tx-queue 3",
                                               "if Ethernet1: tx-queue 3", "if Ethernet1: tx-queue 7",
                                               "if Ethernet1: tx-queue 7", None, "global qos map dscp 46 to "
                                               "traffic-class 5"]


def _configs() -> list[tuple[str, str]]:
    """(platform, config text): every shipped profile rendered alone and pushed over an
    operator's configuration, the recorded switch configs, the hostile texts."""
    out = []
    recorded = [p.read_text(errors="replace") for p in [*(REPO / "tests" / "data" / "ios-samples").glob("*.txt"),
                                                      REPO / "tests" / "data" / "eos" / "operator-qos.cfg"]]
    for name in PLATFORMS:
        p = get_platform(name)
        for prof in PROFILES:
            lines = p.render(load_profile(prof), TOPO)
            cfg = _Config(p, TOPO)
            assert cfg.load(FOREIGN_EOS if p.dialect == "eos" else FOREIGN_IOS) == []
            cfg.send(lines)
            out += [(name, "\n".join(lines)), (name, cfg.render())]
        out += [(name, t) for t in [*recorded, *HOSTILE, EOS]]
    return out


@pytest.mark.parametrize("platform,text", _configs())
def test_the_ownership_keys_exactly_the_qos_side_of_the_split(platform, text):
    rules = get_platform(platform).qos_rules
    keyed = walk(text, rules)
    other, qos = split_qos(text, rules)
    assert other == [line for line, key in keyed if key is None]
    with_items, header = [], None  # an interface header counts when a line under it has an item
    for line, key in keyed:
        if not line.startswith(" "):  # as IOS and the walk read it: a tab does not indent
            header = line if line.startswith("interface ") else None
        if key is not None and header is not None:
            with_items.append(header)
            header = None
        if key is not None:
            with_items.append(line)
    assert qos == with_items


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_texts_walk_without_error_and_keep_every_line(text):
    walked = list(qos_lines(text, C3750_RULES))
    kept = [line.rstrip() for line in text.splitlines() if line.strip()
            and not line.startswith(("Building configuration", "Current configuration"))]
    assert [q.text for q in walked] == kept
    assert all(q.role in ("section", "global", "interface", "if-qos", "other") for q in walked)
