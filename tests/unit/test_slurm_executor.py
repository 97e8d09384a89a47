"""The ``slurm`` executor's inputs (issue 51): the topology's ``slurm:`` block, the allocation's
environment (``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST``), the host -> node binding, missing
client commands, and the testbed's ``slurm.conf``. Each refusal is one line naming the file and
line or the variable, and comes before anything is submitted. (The executor itself runs on the
embedded Slurm cluster: tests/integration/test_slurm_campaign.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conftest import ECENET, REPO, slurm_topology
from qoslab.errors import ConfigError, QoslabError
from qoslab.executors import slurmalloc
from qoslab.executors.slurmalloc import SlurmClient, bind, from_environment
from qoslab.registry import executors
from qoslab.testbed import slurm as tbslurm
from qoslab.topology import load_topology

HOSTS = ["jp-1", "jp-2", "jp-3", "jp-4"]
needs_scontrol = pytest.mark.skipif(shutil.which("scontrol") is None, reason="slurm-client not installed")


@pytest.fixture
def conf_client(tmp_path) -> SlurmClient:
    """A client with a minimal slurm.conf: ``scontrol show hostnames`` reads no controller."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=t\nSlurmctldHost=ctl(127.0.0.1)\nNodeName=n[1-8] CPUs=1\nPartitionName=p Nodes=ALL\n")
    return SlurmClient((), {"SLURM_CONF": str(conf)})


def test_the_executor_is_registered_beside_local_and_ssh():
    assert {"local", "netns", "ssh", "slurm"} <= set(executors.names())
    assert executors.get("slurm").__name__ == "SlurmExecutor"


def test_hosts_bind_to_nodes_by_name_or_by_order():
    assert bind(HOSTS, ["jp-4", "jp-3", "jp-2", "jp-1", "jp-9"], "name", "allocation 7") == {h: h for h in HOSTS}
    assert bind(HOSTS, ["n1", "n2", "n3", "n4", "n5"], "order", "allocation 7") == {
        "jp-1": "n1", "jp-2": "n2", "jp-3": "n3", "jp-4": "n4"}


def test_a_node_list_shorter_than_the_topology_names_both():
    with pytest.raises(QoslabError) as e:
        bind(HOSTS, ["n1", "n2"], "order", "allocation 7")
    msg = str(e.value)
    assert "\n" not in msg
    assert "allocation 7 has 2 node(s) (n1, n2)" in msg and "4 hosts (jp-1, jp-2, jp-3, jp-4)" in msg
    with pytest.raises(QoslabError, match=r"allocation 7: node\(s\) n1, jp-2 do not include the topology's "
                                          r"host\(s\) jp-1, jp-3, jp-4"):
        bind(HOSTS, ["n1", "jp-2"], "name", "allocation 7")


def test_outside_a_job_there_is_no_given_allocation():
    assert from_environment({"PATH": "/usr/bin"}, SlurmClient()) is None


@pytest.mark.parametrize("job", ["12x", "", "-1", "1;scancel -u root", "1 2"])
def test_a_malformed_job_id_names_the_variable(job):
    with pytest.raises(QoslabError, match=r"^SLURM_JOB_ID=.*: not a Slurm job ID"):
        from_environment({"SLURM_JOB_ID": job, "SLURM_JOB_NODELIST": "n1"}, SlurmClient())


@pytest.mark.parametrize("nodelist", ["n[1-", "n[1-3]]", "n1;reboot", "$(id)", "n 1", "-n1", "n[a-b]", ",n1", ""])
def test_a_malformed_node_list_names_the_variable_before_scontrol_runs(nodelist):
    client = SlurmClient(("/nonexistent/never-run",))  # a call would fail differently
    with pytest.raises(QoslabError) as e:
        from_environment({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": nodelist}, client)
    assert str(e.value).startswith("SLURM_JOB_NODELIST") and "\n" not in str(e.value)


@needs_scontrol
def test_the_node_list_is_expanded_by_slurm_and_slurm_refusals_name_the_variable(conf_client):
    assert from_environment({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[1-3,5],login2"}, conf_client) == (
        "42", ["n1", "n2", "n3", "n5", "login2"])
    with pytest.raises(QoslabError, match=r"^SLURM_JOB_NODELIST='n\[3-1\]': not a Slurm node list \(scontrol: "
                                          r".*Invalid"):
        from_environment({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[3-1]"}, conf_client)


def test_srun_missing_is_one_line_and_nothing_is_submitted(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    topo = load_topology(ECENET)
    with pytest.raises(QoslabError) as e:
        slurmalloc.acquire(topo, "unit-missing", SlurmClient())
    assert str(e.value) == ("srun not found on PATH: the slurm executor needs Slurm's client commands "
                            "(Debian slurm-client); nothing was submitted")
    assert ("ecenet", "unit-missing") not in slurmalloc._shared


def _playbook(tmp_path: Path, topo: Path) -> Path:
    pb = tmp_path / "pb.yaml"
    pb.write_text(yaml.safe_dump({**yaml.safe_load((REPO / "playbooks" / "quick-slurm.yaml").read_text()),
                                  "topology": str(topo)}, sort_keys=False))
    return pb


def test_a_slurm_block_with_fewer_nodes_than_hosts_is_refused_at_its_line(tmp_path):
    from qoslab.campaign import load_playbook
    from qoslab.campaign.checks import check_references

    topo = slurm_topology(tmp_path, {"partition": "batch", "nodes": ["jp-1", "jp-2"]})
    pb = _playbook(tmp_path, topo)
    line = next(i for i, text in enumerate(topo.read_text().splitlines(), 1) if text.startswith("  nodes:"))
    with pytest.raises(ConfigError) as e:
        check_references(load_playbook(pb), pb)
    assert str(e.value) == (f"{topo}:{line}: slurm.nodes: 2 node(s) (jp-1, jp-2) for the 8 hosts "
                            "(jp-1, jp-2, jp-3, jp-4, jp-5, jp-6, jp-7, jp-8)")
    topo = slurm_topology(tmp_path, {"nodes": [f"n{i}" for i in range(8)]})  # bind: name, other names
    with pytest.raises(ConfigError, match=r"topo.yaml:\d+: slurm.nodes: nodes n0, .* do not include the host\(s\) "
                                          r"jp-1, .*jp-8 \(bind: name\)"):
        check_references(load_playbook(pb), pb)
    topo = slurm_topology(tmp_path, {"nodes": [f"n{i}" for i in range(8)], "bind": "order"})
    check_references(load_playbook(pb), pb)  # by order: any eight nodes


def test_check_request_refuses_fewer_nodes_before_asking_the_cluster(tmp_path):
    topo = load_topology(slurm_topology(tmp_path, {"nodes": ["a", "b", "c"], "bind": "order"}))
    with pytest.raises(ConfigError, match=r"topo.yaml:\d+: slurm.nodes: 3 node\(s\) \(a, b, c\) for 8 hosts"):
        slurmalloc.check_request(topo, SlurmClient(("/nonexistent/never-run",)))


def test_the_testbed_slurm_conf_names_every_host_at_its_address(tmp_path):
    topo = load_topology(slurm_topology(tmp_path, {"partition": "exp"}))
    text = tbslurm.config_text(topo, Path("/run/qoslab/slurm-ecenet"), 2)
    assert "SlurmctldHost=qoslab-ctl(198.18.0.1)\n" in text  # on the head node's testbed address
    assert "NodeName=jp-5 NodeAddr=198.18.0.5 NodeHostname=jp-5 CPUs=2 State=UNKNOWN\n" in text
    assert "PartitionName=exp Nodes=ALL Default=YES" in text
    assert "SlurmdSpoolDir=/run/qoslab/slurm-ecenet/spool-%n\n" in text
    assert "AuthInfo=socket=/run/qoslab/slurm-ecenet/munge.socket\n" in text
    assert "ProctrackType=proctrack/pgid" in text  # no cgroups needed in a namespace
    assert tbslurm.partition_of(load_topology(ECENET)) == "qoslab"
    assert tbslurm.cluster_name("ecenet-T1.x") == "ecenet_t1_x"


def test_the_sbatch_script_carries_the_slurm_block_and_resumes_the_folder(tmp_path):
    from qoslab.campaign.submit import sbatch_script

    topo = load_topology(slurm_topology(tmp_path, {"partition": "batch", "time_limit": "0-02:00:00",
                                                    "account": "proj42", "constraint": "ib&haswell"}))
    text = sbatch_script(topo, tmp_path / "c", "qoslab-submit-x", root_netns=None, env={"SLURM_CONF": "/x/slurm.conf"})
    lines = text.splitlines()
    assert lines[0] == "#!/bin/sh"
    assert {"#SBATCH --job-name=qoslab-submit-x", "#SBATCH --nodes=8", "#SBATCH --time=0-02:00:00",
            "#SBATCH --partition=batch", "#SBATCH --account=proj42", "#SBATCH --constraint=ib&haswell",
            f"#SBATCH --output={tmp_path / 'c'}/slurm/job-%j.out"} \
        <= set(lines)
    assert lines[-1].startswith("exec env SLURM_CONF=/x/slurm.conf ") and lines[-1].endswith(
        f"-m qoslab campaign run --resume {tmp_path / 'c'}")
    embedded = sbatch_script(topo, tmp_path / "c", "j", root_netns=Path("/run/qoslab/slurm-t/root-netns"))
    assert embedded.splitlines()[-1].startswith("exec nsenter --net=/run/qoslab/slurm-t/root-netns ")
    quiet = sbatch_script(topo, tmp_path / "c", "j", root_netns=None, report=False)  # campaign submit --no-report
    assert quiet.splitlines()[-1].endswith(f"-m qoslab campaign run --resume {tmp_path / 'c'} --no-report")
    assert quiet.splitlines()[:-1] == sbatch_script(topo, tmp_path / "c", "j", root_netns=None).splitlines()[:-1]


def test_submit_refuses_a_playbook_of_another_executor(tmp_path):
    from qoslab.campaign import load_playbook
    from qoslab.campaign.submit import client_for

    pb = REPO / "playbooks" / "quick.yaml"
    with pytest.raises(QoslabError, match=r"quick.yaml: campaign submit runs `executor: slurm` playbooks \(this one: "
                                          r"netns\)"):
        client_for(load_playbook(pb), pb)


def test_step_managers_are_found_through_the_alternatives_symlink(tmp_path):
    """Debian's /usr/sbin/slurmstepd is a symlink (alternatives) to slurmstepd-wlm, which is what
    /proc/PID/exe reads: a step manager is known by the binary's identity, not its path's name
    (by name, a campaign's clean-up of the hosts ended the batch step's manager of its own job,
    which then stayed RUNNING until its time limit)."""
    import subprocess

    real = Path(shutil.which("sleep") or "/bin/sleep").resolve()
    link = tmp_path / "slurmstepd"
    link.symlink_to(real)
    p = subprocess.Popen([str(real), "30"])
    try:
        assert p.pid in tbslurm.stepd_pids(link)
        assert p.pid not in tbslurm.stepd_pids(Path(shutil.which("true") or "/bin/true").resolve())
    finally:
        p.kill()
        p.wait()
    assert tbslurm.stepd_pids(tmp_path / "no-such-binary") == set()


# -- a submitted campaign's job record (FOLDER/slurm/jobs.json), read by `campaign status` ------

GOOD_JOBS = {"jobs": ["12", "13"], "topology": "ecenet", "head": "jp-1"}
HOSTILE_JOBS = {
    "not-json": (b"{jobs: [12]", "not JSON"),
    "a-list": (b'["12"]', "not a job record"),
    "extra-key": (b'{"jobs": ["12"], "topology": "t", "head": null, "prefix": ["rm", "-rf", "/"]}', "not a job record"),
    "job-injection": (b'{"jobs": ["12; scancel -u root"], "topology": "t", "head": null}', "jobs: not a list"),
    "job-number": (b'{"jobs": [12], "topology": "t", "head": null}', "jobs: not a list"),
    "no-jobs": (b'{"jobs": [], "topology": "t", "head": null}', "jobs: not a list"),
    "too-many-jobs": (('{"jobs": [' + ", ".join(['"1"'] * 22) + '], "topology": "t", "head": null}').encode(),
                      "jobs: not a list"),
    "topology-escapes": (b'{"jobs": ["1"], "topology": "../../etc", "head": null}', "topology: '../../etc' is not a name"),
    "head-option": (b'{"jobs": ["1"], "topology": "t", "head": "jp-1 --net=/proc/1/ns/net"}', "head: "),
    "topology-null": (b'{"jobs": ["1"], "topology": null, "head": "jp-1"}', "topology: 'None' is not a name"),
    "huge": (b'{"jobs": ["1"], "topology": "t", "head": null, "x": "' + b"a" * 5000 + b'"}', "larger than a job record"),
    "not-utf8": (b'{"jobs": ["\xff"], "topology": "t", "head": null}', "not JSON"),
}


@pytest.mark.parametrize("case", list(HOSTILE_JOBS))
def test_a_hostile_job_record_is_one_line_naming_the_file(tmp_path, case):
    from qoslab.campaign.submit import read_jobs

    data, why = HOSTILE_JOBS[case]
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "jobs.json").write_bytes(data)
    with pytest.raises(QoslabError) as e:
        read_jobs(tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'slurm' / 'jobs.json'}: ") and why in msg and "\n" not in msg, msg
    assert len(msg) < 300


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink"])
def test_a_job_record_that_is_not_a_regular_file_is_refused_without_reading(tmp_path, kind):
    import os

    from qoslab.campaign.submit import read_jobs

    (tmp_path / "slurm").mkdir()
    path = tmp_path / "slurm" / "jobs.json"
    {"fifo": lambda: os.mkfifo(path), "folder": path.mkdir,
     "symlink": lambda: path.symlink_to("/etc/passwd")}[kind]()
    with pytest.raises(QoslabError, match="not a regular file"):
        read_jobs(tmp_path)  # a FIFO would block a reader: never opened


def test_a_job_record_reads_back_and_an_unreachable_slurm_leaves_the_states_unknown(tmp_path):
    import json

    from qoslab.campaign.submit import job_states, read_jobs

    assert read_jobs(tmp_path) is None  # not submitted
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "jobs.json").write_text(json.dumps(GOOD_JOBS))
    assert read_jobs(tmp_path) == (["12", "13"], "ecenet", "jp-1")
    states = job_states(["12", "13"], SlurmClient(("/nonexistent/nsenter",)))
    assert set(states) == {"12", "13"} and all(s.startswith("unknown (") for s in states.values()), states


def test_campaign_status_of_a_folder_with_a_hostile_job_record_is_one_line(tmp_path):
    import subprocess
    import sys

    from test_campaign_folders import _campaign

    folder = _campaign(tmp_path)
    (folder / "slurm").mkdir()
    (folder / "slurm" / "jobs.json").write_text('{"jobs": ["1`id`"], "topology": "t", "head": null}')
    r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "status", str(folder)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"error: {folder / 'slurm' / 'jobs.json'}: jobs: not a list of 1-21 "
                                             "Slurm job IDs (digits)"], r.stderr


def test_follow_ups_are_cancelled_only_from_a_job_of_the_record(tmp_path):
    import json

    from qoslab.campaign.submit import cancel_follow_ups

    assert cancel_follow_ups(tmp_path, {"SLURM_JOB_ID": "12"}) == []  # not submitted
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "jobs.json").write_text(json.dumps({**GOOD_JOBS, "topology": "t-not-up"}))
    assert cancel_follow_ups(tmp_path, {}) == []  # not inside a job
    assert cancel_follow_ups(tmp_path, {"SLURM_JOB_ID": "99"}) == []  # another job's
    assert cancel_follow_ups(tmp_path, {"SLURM_JOB_ID": "13"}) == []  # the last one: none after it
    assert cancel_follow_ups(tmp_path, {"SLURM_JOB_ID": "12"}) == []  # its testbed's cluster is not running
