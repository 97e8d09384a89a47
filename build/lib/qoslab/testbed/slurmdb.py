"""Slurm's accounting for the embedded cluster (:mod:`.slurm`): a private MariaDB and a
``slurmdbd``, so ``sacct`` lists a campaign's jobs and steps with their nodes (Slurm 22.05 keeps
no step record without them; Debian 12 ``slurmdbd`` and ``mariadb-server``).

In the cluster's state folder ``/run/qoslab/slurm-<topology>/`` (mode 0700):

- ``mariadb/``: a database made per testbed (``mariadb-install-db``), served by one ``mariadbd``
  started by qoslab in the **head node's** network namespace (the management side, beside
  ``slurmctld``), on that namespace's loopback (127.0.0.1:``DB_PORT``) and ``mariadb.sock``;
  never the machine's MariaDB service. Its ``root`` logs in only through the socket (unix_socket
  authentication); ``slurmdbd`` logs in as ``slurm`` with a password made per testbed
  (``secrets.token_urlsafe``), which is written only to ``slurmdbd.conf`` (mode 0600 from its
  creation; slurmdbd reads it beside ``slurm.conf``).
- ``slurmdbd`` in the head's namespace, listening on the head's testbed address, ``DBD_PORT``;
  ``slurm.conf`` points ``AccountingStorageType=accounting_storage/slurmdbd`` at it
  (:func:`accounting_lines`); the cluster, the account ``qoslab`` (and the topology's
  ``slurm.account``) and the user ``root`` are registered with ``sacctmgr -i`` before
  ``slurmctld`` starts.

:mod:`.slurm` ends both daemons by PID (``slurmdbd`` after ``slurmctld``, ``mariadbd`` after
``slurmdbd``) and removes the folder with the database in it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

from ..errors import EnvironmentProblem, QoslabError
from ..topology import Topology
from .daemon import await_ready, in_namespace, pid_of, spawn, tail

#: The binaries this needs (Debian ``mariadb-server``, ``slurmdbd``, ``slurm-client``; ``make setup``).
MARIADBD, INSTALL_DB = Path("/usr/sbin/mariadbd"), Path("/usr/bin/mariadb-install-db")
MARIADB, SLURMDBD, SACCTMGR = Path("/usr/bin/mariadb"), Path("/usr/sbin/slurmdbd"), Path("/usr/bin/sacctmgr")
#: MariaDB's TCP port on the head namespace's loopback, and slurmdbd's on the head's address.
DB_PORT, DBD_PORT = 3306, 6819
#: The database slurmdbd keeps, its MariaDB user, and the Slurm account every job is charged to.
DB_NAME, DB_USER, ACCOUNT = "slurm_acct_db", "slurm", "qoslab"
#: mariadbd's settings: a throwaway database (no doublewrite, the log flushed once a second) with
#: the InnoDB sizes slurmdbd asks for (it logs "Database settings not recommended" below them).
DB_OPTIONS = ("--innodb-buffer-pool-size=128M", "--innodb-log-file-size=64M", "--innodb-lock-wait-timeout=900",
              "--innodb-flush-method=fsync", "--innodb-doublewrite=0", "--innodb-flush-log-at-trx-commit=0",
              "--skip-name-resolve", "--skip-log-bin")
#: Seconds ``mariadb-install-db``, the ``mariadb`` client and ``sacctmgr`` may take.
CLIENT_TIMEOUT_S = 60.0


def missing() -> list[str]:
    """The accounting binaries not installed here (paths), [] when all are."""
    return [str(p) for p in (MARIADBD, INSTALL_DB, MARIADB, SLURMDBD, SACCTMGR) if not p.exists()]


def accounting_lines(head_ip: str, d: Path) -> list[str]:
    """The accounting lines of the testbed's ``slurm.conf`` (pure): records to ``slurmdbd`` on the
    head's address, authenticated through the cluster's munge socket in ``d``."""
    return ["AccountingStorageType=accounting_storage/slurmdbd", f"AccountingStorageHost={head_ip}",
            f"AccountingStoragePort={DBD_PORT}", f"AccountingStoragePass={d / 'munge.socket'}"]


def dbd_conf_text(head_ip: str, d: Path, password: str) -> str:
    """The ``slurmdbd.conf`` of the testbed (pure): listening on ``head_ip``:``DBD_PORT``, storing
    in the private MariaDB on the head's loopback as ``DB_USER`` with ``password``. Raises
    ValueError for a password that would not survive the file's ``KEY=VALUE`` form."""
    if not password or any(c.isspace() or c in "#'\"\\" for c in password):
        raise ValueError("the database password must be non-empty, without blanks, quotes, '#' or '\\'")
    return "\n".join([
        "AuthType=auth/munge", f"AuthInfo=socket={d / 'munge.socket'}",
        "DbdHost=localhost", f"DbdAddr={head_ip}", f"DbdPort={DBD_PORT}", "SlurmUser=root",
        "DebugLevel=info", f"LogFile={d / 'slurmdbd.log'}", f"PidFile={d / 'slurmdbd.pid'}",
        "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={DB_PORT}",
        f"StorageUser={DB_USER}", f"StoragePass={password}", f"StorageLoc={DB_NAME}",
    ]) + "\n"


def accounts_of(topo: Topology) -> list[str]:
    """The accounts to register: ``qoslab`` and the topology's ``slurm.account`` when it has one."""
    s = topo.slurm
    return [ACCOUNT] + ([s.account] if s is not None and s.account and s.account != ACCOUNT else [])


def daemon_pids(d: Path) -> dict[str, int]:
    """Running accounting daemons of the cluster whose folder is ``d``: ``mariadbd``, ``slurmdbd`` -> PID."""
    found = {"mariadbd": pid_of(d / "mariadbd.pid", "mariadbd"), "slurmdbd": pid_of(d / "slurmdbd.pid", "slurmdbd")}
    return {k: v for k, v in found.items() if v is not None}


def _write_private(path: Path, text: str) -> None:
    """``text`` into a new file at ``path``, mode 0600 from its creation."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _run(argv: list[str], what: str, log: Path, env: dict[str, str], input: str | None = None) -> None:
    """Run a set-up command to its end, output appended to ``log``; QoslabError naming ``what``
    with the log's last lines when it fails."""
    with open(log, "ab") as f:
        try:
            r = subprocess.run(argv, input=input.encode() if input is not None else None, stdout=f, stderr=f,
                               env={**os.environ, **env}, timeout=CLIENT_TIMEOUT_S,
                               stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise QoslabError(f"{what}: no end within {CLIENT_TIMEOUT_S:g} s ({tail(log)})") from None
    if r.returncode != 0:
        raise QoslabError(f"{what} failed (exit {r.returncode}): {tail(log)}")


def start(topo: Topology, cluster: str, d: Path, env: dict[str, str], deadline: float) -> None:
    """Make and start the accounting of the cluster ``cluster`` in ``d`` (see the module doc): the database,
    ``mariadbd``, the ``slurm`` user with a fresh password, ``slurmdbd``, then the cluster, its
    accounts and ``root`` registered. ``slurm.conf`` (with :func:`accounting_lines`) and the munge
    socket must exist. Raises EnvironmentProblem when a binary is missing, QoslabError naming the
    step or daemon that failed (with the last lines of its log); the caller ends what started."""
    gone = missing()
    if gone:
        raise EnvironmentProblem(f"{', '.join(gone)} missing: install mariadb-server and slurmdbd (make setup)")
    head = topo.hosts[0]
    data, sock = d / "mariadb", d / "mariadb.sock"
    _run([str(INSTALL_DB), "--no-defaults", f"--datadir={data}", "--user=root",
          "--auth-root-authentication-method=socket", "--skip-test-db", *DB_OPTIONS],
         "mariadb-install-db", d / "mariadb-install.out", env)
    db = spawn(in_namespace(topo, head.name, [
        str(MARIADBD), "--no-defaults", f"--datadir={data}", "--user=root", f"--socket={sock}", f"--port={DB_PORT}",
        "--bind-address=127.0.0.1", f"--pid-file={d / 'mariadbd.pid'}", f"--log-error={d / 'mariadbd.err'}",
        *DB_OPTIONS]), d / "mariadbd.out", env)
    await_ready(lambda: sock.exists() and pid_of(d / "mariadbd.pid", "mariadbd") is not None, db, "mariadbd",
                d / "mariadbd.err", deadline)
    password = secrets.token_urlsafe(24)
    sql = (f"CREATE USER '{DB_USER}'@'127.0.0.1' IDENTIFIED BY '{password}';\n"
           f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'127.0.0.1';\n")
    _run([str(MARIADB), "--no-defaults", f"--socket={sock}", "-u", "root"], "creating the database user",
         d / "mariadb-client.out", env, input=sql)
    _write_private(d / "slurmdbd.conf", dbd_conf_text(head.ip, d, password))
    dbd = spawn(in_namespace(topo, head.name, [str(SLURMDBD), "-D"]), d / "slurmdbd.out", env)

    def dbd_ready() -> bool:
        try:
            return "slurmdbd version" in (d / "slurmdbd.log").read_text(errors="replace")
        except OSError:
            return False

    await_ready(dbd_ready, dbd, "slurmdbd", d / "slurmdbd.log", deadline)
    register(topo, cluster, env, d / "sacctmgr.out")


def register(topo: Topology, cluster: str, env: dict[str, str], log: Path) -> None:
    """Register ``cluster`` (the ``ClusterName``), its accounts (:func:`accounts_of`) and the user
    ``root`` in each (default ``qoslab``) with ``sacctmgr -i`` in the head's namespace. Raises
    QoslabError naming the command that failed."""
    accounts = accounts_of(topo)
    for argv in (["add", "cluster", cluster],
                 ["add", "account", ",".join(accounts), "Description=qoslab", "Organization=qoslab"],
                 ["add", "user", "root", f"Account={','.join(accounts)}", f"DefaultAccount={ACCOUNT}"]):
        _run(in_namespace(topo, topo.hosts[0].name, [str(SACCTMGR), "-i", *argv]), f"sacctmgr {' '.join(argv[:2])}",
             log, env)
