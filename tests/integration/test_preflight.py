"""``qoslab preflight`` over the testbed's per-namespace sshd: passes on a healthy testbed, and
each thing broken on purpose (sshd down on one host, port 1099 taken, a jar of another
version) fails naming the host and the check."""

from __future__ import annotations

import shutil

import pytest
import yaml

from conftest import ECENET
from qoslab.campaign import load_playbook
from qoslab.executors.nodes import Nodes
from qoslab.executors.ssh import SshExecutor, SshTarget
from qoslab.preflight import preflight
from qoslab.testbed import sshd
from qoslab.workloads.pool import JAR

from .conftest import qoslab


@pytest.fixture(scope="module")
def setup(testbed, tmp_path_factory):
    testbed.sshd_up()
    d = tmp_path_factory.mktemp("preflight")
    topo = d / "topo.yaml"
    topo.write_text(yaml.safe_dump(testbed.topo.model_dump(mode="json"), sort_keys=False))
    pb = yaml.safe_load((ECENET.parents[1] / "quick-ssh.yaml").read_text())
    path = d / "pb.yaml"
    path.write_text(yaml.safe_dump({**pb, "topology": str(topo)}))
    return testbed, load_playbook(path), path


def _failures(setup, nodes_hook=None):
    tb, pb, _ = setup
    nodes = Nodes("ssh", tb.topo, testbed=tb, run_id="pf")
    if nodes_hook:
        nodes_hook(nodes)
    try:
        rep = preflight(pb, nodes)
    finally:
        nodes.close()
    return rep, [(c.node, c.check) for c in rep.failures]


def test_healthy_testbed_passes_through_the_cli(setup):
    tb, pb, path = setup
    r = qoslab("preflight", str(path), timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    for check in ("reach", "versions", "jar", "clock", "ports", "leftovers", "link", "switch", "span"):
        assert f" {check} " in r.stdout, check
    rep, bad = _failures(setup)
    assert bad == [] and set(rep.facts) >= {"jp-1", "jp-4", "switch"}
    assert abs(rep.facts["jp-2"]["clock_offset_ms"]) < 50 and rep.facts["jp-2"]["permits"]["realtime"] is True


def test_sshd_down_on_one_host(setup):
    tb = setup[0]
    sshd.stop(tb.topo, ["jp-3"])
    try:
        rep, bad = _failures(setup)
    finally:
        tb.sshd_up()
    assert bad == [("jp-3", "reach")], rep.failures
    assert "198.18.0.3:22" in rep.failures[0].detail


def test_port_1099_taken(setup):
    tb = setup[0]
    ex = tb.executor("jp-2")
    blocker = ex.start(["python3", "-c", "import socket, time; s = socket.socket(); "
                        "s.bind(('198.18.0.2', 1099)); s.listen(); time.sleep(60)"], lifetime_s=60)
    try:
        import time

        deadline = time.monotonic() + 10
        while ":1099" not in ex.run(["ss", "-Htln"]).stdout and time.monotonic() < deadline:
            time.sleep(0.05)
        rep, bad = _failures(setup)
    finally:
        ex.stop(blocker)
    assert bad == [("jp-2", "ports")], rep.failures
    assert "tcp/1099" in rep.failures[0].detail


def test_jar_of_another_version_on_one_node(setup, tmp_path):
    tb = setup[0]
    other = tmp_path / "opt-qoslab"
    (other / "java-workload" / "target").mkdir(parents=True)
    shutil.copytree(JAR.parent / "lib", other / "java-workload" / "target" / "lib")
    (other / "java-workload" / "target" / JAR.name).write_bytes(JAR.read_bytes() + b"another build")
    t = tb.ssh_targets()["jp-4"]

    def hook(nodes):
        nodes.use("jp-4", SshExecutor("jp-4", SshTarget(**{**t.__dict__, "qoslab_root": str(other)}), run_id="pf"))

    rep, bad = _failures(setup, hook)
    assert bad == [("jp-4", "jar")], rep.failures
    assert "is not this checkout's" in rep.failures[0].detail


def test_catalyst_device_file_takes_the_same_push_path(setup, tmp_path, monkeypatch):
    """A real switch is a device file (`device: catalyst`, credentials from a 0600 file or the
    environment, a pinned host key): here it points at the virtual Catalyst, and the push goes
    render -> push -> verify -> save, with rollback on a rejected line, exactly as `virtual`."""
    from qoslab.errors import QoslabError
    from qoslab.profiles import load_profile, render
    from qoslab.switch.backends import CatalystSwitch, open_switch
    from qoslab.switch.push import PushError

    from .conftest import catalyst_device_file

    tb = setup[0]
    sw = open_switch(str(catalyst_device_file(tb.topo, tmp_path)), tb.topo)
    assert isinstance(sw, CatalystSwitch) and tb.topo.switch.model in sw.show(["show version"])["show version"]
    thesis = render(load_profile("thesis"), tb.topo)
    sw.push(render(load_profile("fifo"), tb.topo), tmp_path / "p", "fifo")
    rep = sw.push(thesis, tmp_path / "p", "thesis")
    assert rep.changed and "verify" in rep.seconds and "save" in rep.seconds
    assert not sw.push(thesis, tmp_path / "p", "thesis").changed
    broken = [*thesis[:10], "mls qos srr-queue input priority-queue input 2 bandwidth 40", *thesis[10:]]
    with pytest.raises(PushError) as e:
        sw.push(broken, tmp_path / "p", "broken")
    assert e.value.rolled_back and "bandwidth 40" in str(e.value)
    assert not sw.push(thesis, tmp_path / "p", "thesis").changed  # rolled back to thesis exactly
    other = tmp_path / "other"
    other.mkdir()
    mg = tb.topo.switch.management
    bad_key = f"[{mg.host}]:{mg.port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA4yS8nKcGQbqfp0K2QjQy0bXh0pS5pS5pS5pS5pS5pS\n"
    with pytest.raises(QoslabError, match="REFUSED, host key not the one in"):
        open_switch(str(catalyst_device_file(tb.topo, other, known_hosts_text=bad_key)), tb.topo).show(["show version"])
    loose = tmp_path / "loose"
    loose.mkdir()
    with pytest.raises(QoslabError, match="is readable by others"):
        open_switch(str(catalyst_device_file(tb.topo, loose, mode=0o644)), tb.topo).show(["show version"])
    for k, v in (("QOSLAB_SWITCH_USERNAME", "qoslab"), ("QOSLAB_SWITCH_PASSWORD", "wrong"),
                 ("QOSLAB_SWITCH_SECRET", "wrong")):
        monkeypatch.setenv(k, v)  # the environment's credentials win over the file's
    sw.close()  # the kept show session was logged in with the file's; the next login reads them anew
    with pytest.raises(QoslabError, match="authentication failed"):
        sw.show(["show version"])
