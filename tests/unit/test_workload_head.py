"""The head command's result, recorded in one place (``workloads.base.record_head``) for the
head command run by an executor (``head_result``: command, matmul, mpj, mpi on the testbed) and
for the mpi workload's Slurm launch (``mpi.slurm_head``: one step of ``srun --mpi=pmix`` or
``mpirun`` inside the allocation). The Slurm side runs the real :class:`SlurmExecutor` against a
stand-in for Slurm's clients (a script that answers ``srun --mpi=list`` and ``ompi_info`` as
Debian 12's and plays the launcher's output the test gives it), with hostile launcher outputs:
no JSON line, broken and non-object JSON, NUL bytes, a result without ``elapsed_s``."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from qoslab.errors import QoslabError
from qoslab.executors import CommandResult, LocalExecutor
from qoslab.workloads import settings_of
from qoslab.workloads.base import RESULT_FILE, head_result, record_head
from qoslab.workloads.mpi import slurm_head

SRUN_LIST = "MPI plugin types are...\n\tpmix\n\tnone\n\tpmi2\nspecific pmix plugin versions available: pmix_v4\n"
OMPI_DEBIAN = "                MCA pmix: ext3x (MCA v2.1.0, API v2.0.0, Component v4.1.4)\n"


def launcher_stub(tmp_path: Path) -> Path:
    """A Slurm client prefix: ``srun --mpi=list`` and ``ompi_info`` answered as Debian 12's; any
    other command line prints ``out`` to stdout, ``err`` to stderr and exits ``rc`` (files in
    ``tmp_path`` the test writes)."""
    (tmp_path / "srun-list.txt").write_text(SRUN_LIST)
    (tmp_path / "ompi-info.txt").write_text(OMPI_DEBIAN)
    stub = tmp_path / "slurm-stub"
    stub.write_text(f"""#!/bin/sh
case "$*" in
  "srun --mpi=list") cat {tmp_path}/srun-list.txt;;
  *" ompi_info") cat {tmp_path}/ompi-info.txt;;
  *) echo "$*" > {tmp_path}/argv; cat {tmp_path}/out; cat {tmp_path}/err >&2; exit "$(cat {tmp_path}/rc)";;
esac
""")
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    return stub


@pytest.fixture
def slurm(tmp_path):
    """``(executor_of, answer)``: two workload hosts on Slurm nodes n1, n2 of job 7;
    ``answer(out, err="", rc=0)`` sets what the launcher prints."""
    from qoslab.executors.slurm import SlurmExecutor
    from qoslab.executors.slurmalloc import Allocation, SlurmClient

    stub = launcher_stub(tmp_path)
    alloc = Allocation("7", ["n1", "n2"], False, {"h1": "n1", "h2": "n2"}, SlurmClient((str(stub),), {}), "given")
    exs = {h: SlurmExecutor(h, alloc, run_id="r1", topo_name="t", local_root=tmp_path) for h in ("h1", "h2")}

    def answer(out: str, err: str = "", rc: int = 0) -> None:
        (tmp_path / "out").write_text(out)
        (tmp_path / "err").write_text(err)
        (tmp_path / "rc").write_text(str(rc))

    try:
        yield exs.__getitem__, answer
    finally:
        for ex in exs.values():
            ex.close()


def mpi(launcher: str = "auto"):
    return settings_of({"kind": "mpi", "hosts": ["h1", "h2"], "slots": 2, "launcher": launcher})


@pytest.mark.parametrize("launcher,described", [("auto", "srun --mpi=pmix"), ("mpirun", "mpirun")])
def test_the_slurm_launch_records_the_checked_result_as_the_head_command_does(slurm, tmp_path, launcher, described):
    executor_of, answer = slurm
    out = tmp_path / "trial"
    out.mkdir()
    answer('rank 0 warming up\n{"elapsed_s": 1.25}\n', err="mpi: 4 ranks\n")
    logs: dict[str, Path] = {}
    result = slurm_head(mpi(launcher), executor_of, out, logs)
    assert result["launch"] == described and result["elapsed_s"] == 1.25
    assert result["exit_code"] == 0 and result["valid"] is True  # check_result: exit 0 and no "valid" -> valid
    assert json.loads((out / RESULT_FILE).read_text()) == result
    assert logs["manager"] == out / "workload-manager.log" and logs["manager"].read_text() == "mpi: 4 ranks\n"
    assert json.loads((out / "mpi-launch.json").read_text())["launch"] == described
    argv = (tmp_path / "argv").read_text()
    assert ("--mpi=pmix" in argv) == (launcher == "auto") and ("mpirun" in argv) == (launcher == "mpirun")


def test_a_failing_launcher_is_recorded_invalid_with_its_exit_code(slurm, tmp_path):
    executor_of, answer = slurm
    answer('{"elapsed_s": 3.0}\n', err="rank 2 aborted\n", rc=3)
    result = slurm_head(mpi(), executor_of, tmp_path, {})
    assert (result["exit_code"], result["valid"], result["error"]) == (3, False, "head command exited with code 3")
    assert json.loads((tmp_path / RESULT_FILE).read_text())["valid"] is False


@pytest.mark.parametrize("out", ["", "rank 0 died\n", "{broken\n", "[1, 2]\n", '"elapsed_s"\n',
                                 "\x00\ufffd{\"elapsed_s\": 1\x00}\n", "{" * 5000 + "\n"])
def test_a_launcher_without_a_json_result_line_is_one_error_naming_launcher_and_nodes(slurm, tmp_path, out):
    executor_of, answer = slurm
    answer(out, err="rank 3: MPI_ABORT was invoked on rank 3, exit code 1\n", rc=1)
    logs: dict[str, Path] = {}
    with pytest.raises(QoslabError) as e:
        slurm_head(mpi(), executor_of, tmp_path, logs)
    msg = str(e.value)
    assert msg.startswith("srun --mpi=pmix on n1, n2 printed no JSON result line (exit 1): "), msg
    assert "\n" not in msg.strip() and len(msg) < 400 and msg.endswith("MPI_ABORT was invoked on rank 3, exit code 1")
    assert not (tmp_path / RESULT_FILE).exists() and "MPI_ABORT" in logs["manager"].read_text()


@pytest.mark.parametrize("line,field", [('{"valid": true}', "no numeric elapsed_s"),
                                        ('{"elapsed_s": "1.5"}', "no numeric elapsed_s"),
                                        ('{"elapsed_s": true}', "no numeric elapsed_s"),
                                        ('{"elapsed_s": 1, "metrics": {"x": 1}}', "metrics")])
def test_a_result_off_the_contract_is_refused_and_not_written(slurm, tmp_path, line, field):
    executor_of, answer = slurm
    answer(line + "\n")
    with pytest.raises(QoslabError, match=field):
        slurm_head(mpi(), executor_of, tmp_path, {})
    assert not (tmp_path / RESULT_FILE).exists()  # the Slurm launch writes only a checked result


def test_head_result_names_the_command_and_node_and_writes_the_raw_result(tmp_path):
    ex = LocalExecutor()
    logs: dict[str, Path] = {}
    script = 'echo starting; echo note >&2; echo \'{"elapsed_s": 0.5, "exit_code": 9}\'; exit 4'
    result = head_result(ex, ["sh", "-c", script], 30, tmp_path, logs, "head command")
    assert result == {"elapsed_s": 0.5, "exit_code": 9}  # the line's own exit_code is kept
    assert json.loads((tmp_path / RESULT_FILE).read_text()) == result and logs["manager"].read_text() == "note\n"
    with pytest.raises(QoslabError) as e:
        head_result(ex, ["sh", "-c", "echo no result; exit 2"], 30, tmp_path, logs, "head command")
    assert str(e.value) == f"head command on {ex.node} printed no JSON result line (exit 2): no result"


def test_record_head_applies_finish_before_writing(tmp_path):
    res = CommandResult("h1", ["x"], 0, '{"elapsed_s": 2}\n', "", 0.1)
    got = record_head(res, tmp_path, {}, "x on h1", lambda r: {**r, "launch": "mpirun"})
    assert got == {"elapsed_s": 2, "exit_code": 0, "launch": "mpirun"}
    assert json.loads((tmp_path / RESULT_FILE).read_text()) == got
