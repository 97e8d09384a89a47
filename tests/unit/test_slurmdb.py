"""The embedded Slurm cluster's accounting (issue 51: ``sacct`` lists a campaign's steps on their
nodes): the ``slurm.conf`` lines, ``slurmdbd.conf`` with a password made per testbed and never
in ``slurm.conf``, the accounts registered, the per-node ``TmpFS`` that ``srun --mpi=pmix`` needs
on one file system, and a machine without slurmdbd or MariaDB refused in one line. (The daemons
themselves run on the testbed: tests/integration/test_slurm_campaign.py.)"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import slurm_topology
from qoslab.errors import EnvironmentProblem
from qoslab.testbed import slurm as tbslurm
from qoslab.testbed import slurmdb
from qoslab.topology import load_topology

D = Path("/run/qoslab/slurm-ecenet")


def test_slurm_conf_records_to_the_slurmdbd_on_the_head_node(tmp_path):
    text = tbslurm.config_text(load_topology(slurm_topology(tmp_path, {})), D, 2)
    assert "AccountingStorageType=accounting_storage/slurmdbd\n" in text
    assert "AccountingStorageHost=198.18.0.1\n" in text  # the head node, where slurmctld runs
    assert f"AccountingStoragePort={slurmdb.DBD_PORT}\n" in text
    # sacctmgr and sacct authenticate to slurmdbd through this socket, not the machine's munged
    assert f"AccountingStoragePass={D}/munge.socket\n" in text
    assert "accounting_storage/none" not in text
    assert "StoragePass" not in text.replace("AccountingStoragePass", "")  # no database password here


def test_each_node_has_its_own_tmpfs_for_the_pmix_client_folders(tmp_path):
    text = tbslurm.config_text(load_topology(slurm_topology(tmp_path, {})), D, 2)
    assert f"TmpFS={D}/tmp-%n\n" in text  # %n: the node's name (one file system, eight nodes)


def test_slurmdbd_conf_holds_the_password_and_the_private_database():
    text = slurmdb.dbd_conf_text("198.18.0.1", D, "s3cret_-X")
    lines = text.splitlines()
    assert "StoragePass=s3cret_-X" in lines and f"StorageUser={slurmdb.DB_USER}" in lines
    assert "StorageHost=127.0.0.1" in lines and f"StoragePort={slurmdb.DB_PORT}" in lines  # the head's loopback
    assert "DbdAddr=198.18.0.1" in lines and "DbdHost=localhost" in lines
    assert f"AuthInfo=socket={D}/munge.socket" in lines
    assert f"PidFile={D}/slurmdbd.pid" in lines and f"LogFile={D}/slurmdbd.log" in lines


@pytest.mark.parametrize("bad", ["", "two words", "a'b", 'a"b', "a#b", "a\\b", "line\nbreak", "tab\tx"])
def test_a_password_that_would_not_survive_the_conf_file_is_refused(bad):
    with pytest.raises(ValueError, match="password"):
        slurmdb.dbd_conf_text("198.18.0.1", D, bad)


def test_the_generated_password_fits_the_conf_file():
    import secrets

    for _ in range(200):  # what start() makes: URL-safe base64, never a quote, blank or '#'
        slurmdb.dbd_conf_text("198.18.0.1", D, secrets.token_urlsafe(24))


def test_the_private_file_is_0600_from_its_creation_and_never_overwritten(tmp_path):
    p = tmp_path / "slurmdbd.conf"
    old = os.umask(0)
    try:
        slurmdb._write_private(p, "StoragePass=x\n")
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        slurmdb._write_private(p, "StoragePass=y\n")
    assert p.read_text() == "StoragePass=x\n"


def test_accounts_registered_are_qoslab_and_the_topologys_own(tmp_path):
    assert slurmdb.accounts_of(load_topology(slurm_topology(tmp_path, {}))) == ["qoslab"]
    assert slurmdb.accounts_of(load_topology(slurm_topology(tmp_path, {"account": "physics"}))) == ["qoslab", "physics"]
    assert slurmdb.accounts_of(load_topology(slurm_topology(tmp_path, {"account": "qoslab"}))) == ["qoslab"]


def test_a_machine_without_slurmdbd_or_mariadb_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(slurmdb, "SLURMDBD", tmp_path / "no-slurmdbd")
    monkeypatch.setattr(slurmdb, "MARIADBD", tmp_path / "no-mariadbd")
    topo = load_topology(slurm_topology(tmp_path, {}))
    with pytest.raises(EnvironmentProblem) as e:
        slurmdb.start(topo, "ecenet", tmp_path, {}, 0.0)
    msg = str(e.value)
    assert "\n" not in msg and re.search(r"no-mariadbd, .*no-slurmdbd missing: install mariadb-server and slurmdbd",
                                         msg), msg
    assert list(tmp_path.iterdir()) == [tmp_path / "topo.yaml"]  # nothing made


def test_no_daemon_is_reported_from_a_folder_without_pid_files(tmp_path):
    assert slurmdb.daemon_pids(tmp_path) == {}
    (tmp_path / "mariadbd.pid").write_text(f"{os.getpid()}\n")  # a live PID that is not a mariadbd
    (tmp_path / "slurmdbd.pid").write_text("not a pid\n")
    assert slurmdb.daemon_pids(tmp_path) == {}


def test_a_daemon_that_is_not_ready_by_its_deadline_is_ended_and_named(tmp_path):
    import subprocess
    import time

    from qoslab.errors import QoslabError
    from qoslab.testbed.daemon import await_ready, spawn

    log = tmp_path / "d.out"
    p = spawn(["sh", "-c", "echo starting slowly; exec sleep 30"], log, {})
    with pytest.raises(QoslabError, match=r"^fake daemon did not start: starting slowly$"):
        await_ready(lambda: False, p, "fake daemon", log, time.monotonic() + 0.3)
    assert p.poll() is not None  # ended, not left running without a pid file
    q = spawn(["sh", "-c", "echo bad config >&2; exit 3"], log, {})
    with pytest.raises(QoslabError, match=r"did not start: starting slowly / bad config$"):
        await_ready(lambda: False, q, "fake daemon", log, time.monotonic() + 10)
    assert isinstance(q, subprocess.Popen)
