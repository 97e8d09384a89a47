"""The mpi workload (issue 34): its settings, the launcher agent it writes per run and the mpirun
command line with everything qoslab owns; the agent is run for real (with `ip` and `unshare`
replaced by stubs that print what they were asked) so its argument handling is checked."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from qoslab.workloads import settings_of
from qoslab.workloads.mpi import MpiSettings, agent_script, mpirun_argv

HOSTS = {"198.18.0.1": ("qsl-ecenet-jp-1", "jp-1"), "198.18.0.2": ("qsl-ecenet-jp-2", "jp-2")}


def test_settings_and_the_mpirun_command_line():
    s = settings_of({"kind": "mpi", "hosts": ["jp-1", "jp-2"], "slots": 2, "args": "--iters 50 --bytes {ranks}"})
    assert isinstance(s, MpiSettings) and s.describe().startswith("mpi osu-qoslab --iters 50")
    assert s.listen_ports()[0] == ("btl_port_min", "tcp", 7400) and len(s.listen_ports()) == 32
    argv = mpirun_argv(s, ["198.18.0.1", "198.18.0.2"], Path("/run/x/mpi-agent.sh"), "/repo/")
    assert argv[:6] == ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", "--host"]
    assert argv[6] == "198.18.0.1:2,198.18.0.2:2"
    mca = dict(zip(argv[8:-5:3], argv[9:-4:3], strict=True))
    assert mca == {"plm_rsh_agent": "/run/x/mpi-agent.sh", "plm_rsh_no_tree_spawn": "1", "btl": "tcp,self",
                   "pml": "ob1", "btl_tcp_if_include": "eth0", "oob_tcp_if_include": "eth0",
                   "btl_tcp_port_min_v4": "7400", "btl_tcp_port_range_v4": "32", "mpi_yield_when_idle": "1"}
    spin = mpirun_argv(s.model_copy(update={"yield_when_idle": False}), ["198.18.0.1"], Path("/a"), "/repo/")
    assert spin[spin.index("mpi_yield_when_idle") + 1] == "0"
    assert argv[-5:] == ["/repo/examples/mpi-osu/build/osu-qoslab", "--iters", "50", "--bytes", "4"]
    with pytest.raises(ValueError, match="interface"):
        settings_of({"kind": "mpi", "hosts": ["jp-1"], "interface": "eth0; rm -rf /"})


def test_the_agent_runs_orted_in_the_hosts_namespace_under_its_hostname(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("ip",):  # a stub: prints its arguments, one per line
        stub = bin_dir / tool
        stub.write_text(f'#!/bin/sh\necho "{tool}"; for a in "$@"; do echo "  $a"; done\n')
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    agent = tmp_path / "mpi-agent.sh"
    agent.write_text(agent_script(HOSTS))
    agent.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    r = subprocess.run([str(agent), "-x", "198.18.0.2", "orted", "-mca", "ess", "env"], capture_output=True,
                       text=True, env=env)
    lines = [line.strip() for line in r.stdout.splitlines()]
    assert r.returncode == 0 and lines == ["ip", "netns", "exec", "qsl-ecenet-jp-2", "unshare", "--uts", "sh", "-c",
                                           "hostname jp-2; orted -mca ess env"]
    r = subprocess.run([str(agent), "10.0.0.9", "orted"], capture_output=True, text=True, env=env)
    assert r.returncode == 255 and "unknown host 10.0.0.9" in r.stderr
