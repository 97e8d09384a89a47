"""The EOS management sub-modes (qoslab.eos.interpret): ``management api http-commands`` and
``management ssh``, entered, edited line by line, negated and refused, as EOS keeps them."""

from __future__ import annotations

import pytest

from qoslab.eos import EosConfig, EosError, Mode, interpret

API, SSH = "management api http-commands", "management ssh"


def _run(cfg: EosConfig, *lines: str) -> Mode:
    mode = Mode()
    for line in lines:
        mode = interpret(cfg, mode, line)
    return mode


def _cfg() -> EosConfig:
    return EosConfig.factory("leaf1", [f"Ethernet{n}" for n in range(1, 5)])


def test_the_api_block_starts_shut_down_and_no_shutdown_is_a_line_of_it():
    cfg = _cfg()
    cfg.mgmt_api = None
    assert _run(cfg, API) == Mode("mgmt") and cfg.mgmt_api == ["shutdown"]
    assert _run(cfg, API, "no shutdown") == Mode("mgmt") and cfg.mgmt_api == ["no shutdown"]
    _run(cfg, API, "shutdown")
    assert cfg.mgmt_api == ["shutdown"]
    _run(cfg, API, "no shut", "protocol https", "protocol http", "protocol https")
    assert cfg.mgmt_api == ["no shutdown", "protocol http", "protocol https"]
    _run(cfg, API, "no protocol http")
    assert cfg.mgmt_api == ["no shutdown", "protocol https"]
    _run(cfg, API)  # entering a configured block keeps its lines
    assert cfg.mgmt_api == ["no shutdown", "protocol https"]


def test_no_management_removes_the_block_and_a_new_one_starts_fresh():
    cfg = _cfg()
    _run(cfg, API, "no shutdown", "exit", SSH, "idle-timeout 5", "exit")
    assert _run(cfg, f"no {API}") == Mode("config") and cfg.mgmt_api is None
    assert _run(cfg, f"default {SSH}") == Mode("config") and cfg.mgmt_ssh is None
    _run(cfg, API, "exit", SSH)
    assert cfg.mgmt_api == ["shutdown"] and cfg.mgmt_ssh == []


def test_ssh_keeps_one_service_acl_one_idle_timeout_and_shutdown():
    cfg = _cfg()
    assert _run(cfg, SSH) == Mode("mgmt-ssh") and cfg.mgmt_ssh == []
    _run(cfg, SSH, "ip access-group A in", "idle-timeout 10", "ip access-group B vrf MGMT in", "idle-timeout 20",
         "shutdown")
    assert cfg.mgmt_ssh == ["ip access-group B vrf MGMT in", "idle-timeout 20", "shutdown"]
    _run(cfg, SSH, "no shutdown", "no ip access-group B vrf MGMT in")
    assert cfg.mgmt_ssh == ["idle-timeout 20"]
    _run(cfg, SSH, "default idle-timeout")
    assert cfg.mgmt_ssh == []


def test_a_line_of_another_mode_leaves_the_sub_mode():
    cfg = _cfg()
    assert _run(cfg, SSH, "hostname spine1") == Mode("config") and cfg.hostname == "spine1"
    assert _run(cfg, API, SSH) == Mode("mgmt-ssh")


@pytest.mark.parametrize("block, line", [(API, "protocol ftp"), (API, "idle-timeout 5"), (SSH, "idle-timeout 86401"),
                                         (SSH, "ip access-group A out"), (SSH, "protocol https"),
                                         (SSH, "ip access-group"), (API, "shutdown now")])
def test_a_line_the_sub_mode_does_not_know_is_refused_and_changes_nothing(block, line):
    cfg = _cfg()
    _run(cfg, block, "shutdown")
    before = (list(cfg.mgmt_api or []), list(cfg.mgmt_ssh or []))
    with pytest.raises(EosError):
        interpret(cfg, Mode("mgmt" if block == API else "mgmt-ssh"), line)
    assert (list(cfg.mgmt_api or []), list(cfg.mgmt_ssh or [])) == before
