"""The mpi workload on a Slurm allocation (issue 51): what ``srun --mpi=list`` and ``ompi_info``
say, parsed (with hostile answers), the launcher chosen from them (srun --mpi=pmix where the
cluster offers it and Open MPI has a PMIx client, pmi2 only with Open MPI's s2, mpirun inside
the allocation otherwise) and the command lines of both launchers. (On the embedded cluster:
tests/integration/test_slurm_mpi.py.)"""

from __future__ import annotations

import pytest

from qoslab.errors import QoslabError
from qoslab.executors.slurmmpi import Launch, choose, parse_ompi_pmix, parse_srun_mpi_list
from qoslab.workloads import settings_of
from qoslab.workloads.mpi import allocation_env, mpirun_argv, program_argv, srun_env

#: `srun --mpi=list` of Debian 12's slurm-wlm 22.05.8 (the embedded cluster).
SRUN_LIST = ("MPI plugin types are...\n\tpmix\n\tnone\n\tcray_shasta\n\tpmi2\n"
             "specific pmix plugin versions available: pmix_v4\n")
#: The pmix lines of `ompi_info` of Debian 12's Open MPI 4.1.4 (no s1/s2: no PMI-1/PMI-2 client).
OMPI_DEBIAN = """                 Package: Debian OpenMPI
                MCA pmix: ext3x (MCA v2.1.0, API v2.0.0, Component v4.1.4)
                MCA pmix: isolated (MCA v2.1.0, API v2.0.0, Component v4.1.4)
                MCA pmix: flux (MCA v2.1.0, API v2.0.0, Component v4.1.4)
                 MCA ess: pmi (MCA v2.1.0, API v3.0.0, Component v4.1.4)
"""


def test_srun_mpi_list_and_ompi_info_are_read():
    assert parse_srun_mpi_list(SRUN_LIST) == ["pmix", "none", "cray_shasta", "pmi2", "pmix_v4"]
    assert parse_ompi_pmix(OMPI_DEBIAN) == ["ext3x", "isolated", "flux"]
    parsable = "mca:pmix:s2:version:mca:2.1.0\nmca:pmix:s2:version:api:2.0.0\nmca:pmix:pmix3x:version:mca:2.1.0\n"
    assert parse_ompi_pmix(parsable) == ["s2", "pmix3x"]


@pytest.mark.parametrize("text", ["", "\x00\xff garbage", "srun: fatal: Could not establish a configuration source\n",
                                  "MPI plugin types are...\n\tpmix; rm -rf /\n\t$(id)\n\tPMIX\n\t" + "a" * 500 + "\n",
                                  "specific pmix plugin versions available: ../../x, pmix v4\n"])
def test_hostile_srun_answers_offer_nothing(text):
    assert parse_srun_mpi_list(text) == []


@pytest.mark.parametrize("text", ["", "MCA pmix:\n", "MCA pmix: ../x (\n", "mca:pmix::version\n", "\x00" * 100])
def test_hostile_ompi_info_answers_name_no_component(text):
    assert parse_ompi_pmix(text) == []


def test_debian_12_gets_srun_pmix_and_why():
    launch = choose(parse_srun_mpi_list(SRUN_LIST), parse_ompi_pmix(OMPI_DEBIAN))
    assert (launch.launcher, launch.mpi, launch.describe()) == ("srun", "pmix", "srun --mpi=pmix")
    assert "ext3x" in launch.why
    j = launch.to_json()
    assert j["launch"] == "srun --mpi=pmix" and j["srun_types"][0] == "pmix" and j["open_mpi_pmix"][0] == "ext3x"


def test_pmi2_only_with_open_mpis_s2_client():
    assert choose(["pmi2"], ["s2"]).describe() == "srun --mpi=pmi2"
    # Debian's Open MPI without the PMIx plugin on the cluster: pmi2 is offered but has no client
    launch = choose(["none", "pmi2"], ["ext3x", "isolated", "flux"])
    assert launch.describe() == "mpirun" and "no PMI-2 client (s2)" in launch.why


def test_mpirun_inside_the_allocation_when_nothing_works_and_srun_refused_then():
    launch = choose(["none"], ["ext3x"])
    assert launch == Launch("mpirun", None, launch.why, ("none",), ("ext3x",))
    assert "offers no PMI plugin (none)" in launch.why
    assert "no PMIx client" in choose(["pmix"], ["isolated"]).why
    with pytest.raises(QoslabError, match=r"^launcher: srun: no srun --mpi plugin works here: .*offers no PMI"):
        choose([], [], "srun")
    assert choose(["pmix"], ["ext3x"], "mpirun").describe() == "mpirun"  # the playbook's word wins
    with pytest.raises(QoslabError, match="launcher 'ssh'"):
        choose(["pmix"], ["ext3x"], "ssh")


def test_the_launchers_command_lines_on_slurm_nodes():
    s = settings_of({"kind": "mpi", "hosts": ["jp-1", "jp-2"], "slots": 2, "launcher": "mpirun",
                     "args": "--iters 50 --bytes {ranks}"})
    assert s.launcher == "mpirun"
    argv = mpirun_argv(s, ["jp-1", "jp-2"], None, "/repo")
    assert argv[:5] == ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4"] and "--host" not in argv
    mca = dict(zip(argv[6:-5:3], argv[7:-4:3], strict=True))
    # orted through Slurm (a nested srun) on the nodes and slots of the step's environment, set to
    # the workload's: a step's own variables name only its node
    assert mca["plm"] == "slurm" and "ras" not in mca and "plm_rsh_agent" not in mca
    assert allocation_env(["jp-1", "jp-2", "jp-3"], 2) == {
        "SLURM_OVERLAP": "1", "SLURM_NODELIST": "jp-1,jp-2,jp-3", "SLURM_JOB_NODELIST": "jp-1,jp-2,jp-3",
        "SLURM_NNODES": "3", "SLURM_JOB_NUM_NODES": "3", "SLURM_TASKS_PER_NODE": "2(x3)",
        "SLURM_JOB_CPUS_PER_NODE": "2(x3)"}
    assert mca["btl_tcp_if_include"] == "eth0" and mca["btl_tcp_port_min_v4"] == "7400"
    assert program_argv(s, 4, "/repo/") == ["/repo/examples/mpi-osu/build/osu-qoslab", "--iters", "50", "--bytes", "4"]
    env = srun_env(s)  # the same settings for ranks srun starts
    assert env["OMPI_MCA_btl"] == "tcp,self" and env["OMPI_MCA_mpi_yield_when_idle"] == "1"
    assert env["OMPI_MCA_btl_tcp_port_range_v4"] == "32" and not any(k.endswith(("plm", "ras")) for k in env)
    # one PMIx fence in MPI_Init, after the PML's callbacks (a congested run's SIGSEGV, workloads/mpi.py)
    assert env["OMPI_MCA_pmix_base_async_modex"] == "1" and env["OMPI_MCA_pmix_base_collect_data"] == "0"
    assert "pmix_base_async_modex" not in mca  # mpirun's orted fences are not Slurm's: as before
    assert settings_of({"kind": "mpi", "hosts": ["jp-1"]}).launcher == "auto"
    with pytest.raises(ValueError, match="launcher"):
        settings_of({"kind": "mpi", "hosts": ["jp-1"], "launcher": "pdsh"})


def test_an_mpi_playbook_loads_on_slurm_and_is_refused_on_ssh_in_one_line(tmp_path):
    import yaml

    from conftest import ECENET, REPO
    from qoslab.campaign.checks import load_playbook
    from qoslab.errors import ConfigError

    topo = yaml.safe_load(ECENET.read_text())
    topo["slurm"] = {"time_limit": "20"}
    tfile = tmp_path / "topo.yaml"
    tfile.write_text(yaml.safe_dump(topo, sort_keys=False))
    data = yaml.safe_load((REPO / "playbooks" / "examples" / "mpi-allreduce.yaml").read_text())
    data.update(topology=str(tfile), executor="slurm")
    data["workload"]["launcher"] = "srun"
    pb = tmp_path / "pb.yaml"
    pb.write_text(yaml.safe_dump(data, sort_keys=False))
    assert load_playbook(pb).workload.launcher == "srun"
    data["executor"] = "ssh"
    data["workload"]["launcher"] = "auto"
    pb.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError) as e:
        load_playbook(pb)
    line = next(i for i, t in enumerate(pb.read_text().splitlines(), 1) if t.startswith("executor:"))
    assert str(e.value) == (f"{pb}:{line}: executor: ssh: kind mpi runs only on the netns or slurm executor (the "
                            "embedded testbed's namespaces, or a Slurm allocation: srun or mpirun through Slurm)")


def test_the_executor_asks_once_and_launches_one_step_over_the_nodes(tmp_path):
    """SlurmExecutor.mpi_launch and .step against a stand-in for Slurm's clients (a script in the
    client prefix that answers ``srun --mpi=list`` and ``ompi_info`` as Debian 12's and prints any
    other command line it is given), so the step's srun options are checked as sent."""
    import stat

    from qoslab.executors.slurm import SlurmExecutor
    from qoslab.executors.slurmalloc import Allocation, SlurmClient

    calls, listed, info = tmp_path / "calls", tmp_path / "srun-list.txt", tmp_path / "ompi-info.txt"
    listed.write_text(SRUN_LIST)
    info.write_text(OMPI_DEBIAN)
    stub = tmp_path / "slurm-stub"
    stub.write_text(f"""#!/bin/sh
echo "$*" >> {calls}
case "$*" in
  "srun --mpi=list") cat {listed};;
  *" ompi_info") cat {info};;
  *) echo "argv: $*";;
esac
""")
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    alloc = Allocation("7", ["n1", "n2"], False, {"jp-1": "n1", "jp-2": "n2"}, SlurmClient((str(stub),), {}), "given")
    ex = SlurmExecutor("jp-1", alloc, run_id="r1", topo_name="t", local_root=tmp_path)
    try:
        assert ex.mpi_launch().describe() == "srun --mpi=pmix"
        assert ex.mpi_launch("mpirun").describe() == "mpirun"
        assert ex.facts()["mpi"]["launch"] == "srun --mpi=pmix"
        asked = calls.read_text().splitlines()
        assert asked.count("srun --mpi=list") == 1 and sum(a.endswith(" ompi_info") for a in asked) == 1  # once
        res = ex.step(["osu", "--iters", "5"], nodes=["n1", "n2"], tasks_per_node=2, mpi="pmix", timeout=30)
        assert res.returncode == 0
        assert res.stdout.split() == ["argv:", "srun", "--jobid=7", "--nodelist=n1,n2", "--nodes=2", "--ntasks=4",
                                      "--ntasks-per-node=2", "--overlap", "--quiet", "--kill-on-bad-exit=1",
                                      "--mpi=pmix", "--job-name=qoslab-r1", "timeout", "--kill-after=2", "30.000",
                                      "osu", "--iters", "5"]
        with pytest.raises(ValueError):
            ex.step(["osu"], nodes=[], mpi="pmix")
    finally:
        ex.close()
