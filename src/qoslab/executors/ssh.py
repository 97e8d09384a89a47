"""The ``ssh`` executor: commands on a remote Linux node over SSH (asyncssh), for real clusters
and for the embedded testbed driven as one (an sshd in every host namespace).

- **One connection per node** per :class:`SshExecutor` (a campaign keeps one executor per node),
  opened on first use and re-opened when it dropped. Commands go through one agent process per
  connection (:mod:`.sshagent`, ``python3`` on the node), a few milliseconds each instead of a
  new SSH session each; files come back over SFTP on the same connection.
- **Host keys pinned** through a known_hosts file: an unknown or changed key refuses the
  connection, nothing is ever accepted automatically. **Key or agent authentication** only.
- **Background processes** (:meth:`SshExecutor.start`) run in their own session on the node; the
  PID returned is the session leader's; ``poll``/``wait`` read the exit status a waiter shell
  writes; ``stop`` signals the process group by PID (see :mod:`.sshscripts`).
- **Bounded lifetime**: ``lifetime_s`` runs the command under GNU ``timeout``; on top of it every
  node has a guard that ends all of the run's processes once the runner has not renewed its lease
  for ``lease_s`` seconds (a runner killed with SIGKILL leaves nothing running on the cluster).
- **Timer slack / real-time class** where the node permits them (:meth:`SshExecutor.permits`);
  elsewhere the process starts without and ``BackgroundProcess.notes`` records the fallback.
- **Remote paths**: the node's file system is not this machine's. Artifacts go to the run's work
  root on the node, ``/tmp/qoslab-<run>/<node>/`` + their path relative to ``local_root``
  (:meth:`SshExecutor.node_dir`), come back with :meth:`SshExecutor.fetch` (SFTP), and
  :meth:`SshExecutor.close` removes the work root: nothing is left on the node.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CommandFailed, CommandTimeout, QoslabError
from . import sshio
from . import sshscripts as S
from .base import BackgroundProcess, CommandResult

#: Default seconds after which a node's guard ends the run's processes when the lease is not renewed.
LEASE_S = 30.0
#: Seconds a control script (poll, stop bookkeeping) may take beyond its own waits.
CONTROL_MARGIN_S = 15.0
#: Seconds :meth:`SshExecutor.close` waits for the connection to end before aborting it.
CLOSE_WAIT_S = 5.0


@dataclass(frozen=True)
class SshTarget:
    """How to reach one node: ``host`` (address or name) and ``port``; ``username``;
    ``known_hosts`` (the pinned host keys); ``client_keys`` (private key files; empty = the SSH
    agent of ``SSH_AUTH_SOCK``); ``source_netns`` (open the TCP connection from inside this
    network namespace: the embedded testbed's head node); ``qoslab_root`` (where the node has
    qoslab's jars, the checkout layout: ``java-workload/target/...``); ``connect_timeout_s``."""

    host: str
    known_hosts: Path
    port: int = 22
    username: str = "root"
    client_keys: tuple[Path, ...] = ()
    source_netns: str | None = None
    qoslab_root: str = "/opt/qoslab"
    connect_timeout_s: float = 10.0


def run_id_for(name: str, folder: Path) -> str:
    """The run id of a campaign (``NAME-8 hex digits`` of its folder's absolute path): the same
    for every resume of it, different for another folder."""
    return f"{name}-{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:8]}"


class SshExecutor:
    """A remote node over SSH (see the module doc). ``run_id`` names the run (work root
    ``work_base/qoslab-<run_id>/<node>``, marker of its processes); ``local_root`` is the local
    folder whose tree :meth:`node_dir` mirrors on the node; ``lease_s`` is the guard's limit."""

    def __init__(self, node: str, target: SshTarget, *, run_id: str = "adhoc", local_root: Path | None = None,
                 work_base: str = "/tmp", lease_s: float = LEASE_S) -> None:
        if lease_s < 3:
            raise QoslabError(f"on {node}: lease must be >= 3 s, got {lease_s:g}")
        self.node, self.target, self.run_id = node, target, run_id
        self.qoslab_root = target.qoslab_root
        self.local_root = local_root.resolve() if local_root is not None else None
        self.work_root = f"{work_base.rstrip('/')}/qoslab-{run_id}/{node}"
        self.lease_s = lease_s
        self._conn: Any = None
        self._lock: asyncio.Lock | None = None
        self._sftp: Any = None
        self._agent: sshio.AgentClient | None = None
        self._lease: Any = None
        self._dirs: set[str] = set()
        self._facts: dict[str, bool] | None = None
        self.connects = 0  # connections opened so far (reconnects show here)

    @classmethod
    def for_topology(cls, node: str, topology: Any, *, testbed: Any = None, local_root: Path | None = None,
                     run_id: str = "adhoc", **_: Any) -> SshExecutor:
        """The executor of ``node`` of ``topology``: on the embedded testbed through its sshd
        (``testbed.ssh_targets()``), on a cluster from the topology's ``ssh:`` settings."""
        if testbed is not None:
            target = testbed.ssh_targets()[node]
        else:
            target = cluster_target(topology, node)
        lease = topology.ssh.lease_s if getattr(topology, "ssh", None) is not None else LEASE_S
        base = topology.ssh.work_dir if getattr(topology, "ssh", None) is not None else "/tmp"
        return cls(node, target, run_id=run_id, local_root=local_root, work_base=base, lease_s=lease)

    # -- connection ---------------------------------------------------------------------------
    async def _connection(self) -> Any:
        import asyncssh

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._conn is not None and not self._conn.is_closed():
                return self._conn
            t = self.target
            sock = None
            if t.source_netns is not None:
                sock = await asyncio.get_running_loop().run_in_executor(
                    None, sshio.netns_socket, t.source_netns, t.host, t.port, t.connect_timeout_s)
            try:
                self._conn = await asyncssh.connect(
                    t.host, t.port, sock=sock, username=t.username, known_hosts=str(t.known_hosts),
                    client_keys=[str(k) for k in t.client_keys] or None, preferred_auth="publickey",
                    password=None, kbdint_auth=False, config=None, connect_timeout=t.connect_timeout_s,
                    keepalive_interval=10, keepalive_count_max=3)
            except asyncssh.HostKeyNotVerifiable as e:
                raise QoslabError(f"on {self.node}: REFUSED, host key of {t.host}:{t.port} is not the one pinned in "
                                  f"{t.known_hosts} ({e.reason})") from None
            except asyncssh.PermissionDenied:
                raise QoslabError(f"on {self.node}: SSH login as {t.username}@{t.host}:{t.port} refused "
                                  "(key or agent authentication only)") from None
            except (TimeoutError, OSError, asyncssh.Error) as e:
                raise QoslabError(f"on {self.node}: cannot reach {t.host}:{t.port} over SSH: "
                                  f"{getattr(e, 'reason', '') or e or type(e).__name__}") from None
            self._sftp, self._agent = None, None
            self.connects += 1
            return self._conn

    async def _exec(self, script: str, input: str | None, timeout_s: float) -> tuple[int, str, str]:
        """Run ``script`` through the node's agent (started on the connection when needed)."""
        import asyncssh

        conn = await self._connection()
        try:
            if self._agent is None or not self._agent.alive():
                self._agent = await sshio.AgentClient.start(conn, self.node)
            return await self._agent.request(script, input, timeout_s)
        except (asyncssh.ConnectionLost, asyncssh.DisconnectError, asyncssh.ChannelOpenError, BrokenPipeError) as e:
            conn.close()  # the next call reconnects; this command's fate is unknown
            raise QoslabError(f"on {self.node}: SSH connection lost: {getattr(e, 'reason', '') or e}") from None

    def _script(self, script: str, timeout_s: float, input: str | None = None) -> tuple[int, str, str]:
        try:
            return sshio.call(self._exec(script, input, timeout_s + CONTROL_MARGIN_S), timeout_s + 2 * CONTROL_MARGIN_S)
        except TimeoutError:
            raise QoslabError(f"on {self.node}: no answer over SSH within {timeout_s + 2 * CONTROL_MARGIN_S:g} s") \
                from None

    def _checked(self, script: str, timeout_s: float, what: str) -> str:
        rc, out, err = self._script(script, timeout_s)
        if rc != 0:
            raise QoslabError(f"on {self.node}: {what} failed (exit {rc}): {err.strip()[-300:] or 'no output'}")
        return out

    # -- the Executor contract ----------------------------------------------------------------
    def run(self, argv: Sequence[str], *, timeout: float = 60.0, check: bool = True, input: str | None = None,
            cwd: str | Path | None = None, env: Mapping[str, str] | None = None) -> CommandResult:
        """See :meth:`qoslab.executors.base.Executor.run` (the node's ``timeout`` kills the
        command's process group when it overruns)."""
        if isinstance(argv, str):
            raise TypeError("argv must be a sequence of strings, not one string")
        t0 = time.monotonic()
        rc, out, err = self._script(S.run_script([str(a) for a in argv], timeout, str(cwd) if cwd else None, env),
                                    timeout, input)
        dt = time.monotonic() - t0
        if rc in (124, 137) and dt >= timeout * 0.95:
            raise CommandTimeout(self.node, list(argv), timeout)
        if rc in (126, 127) and "timeout: failed to run command" in err:
            raise QoslabError(f"on {self.node}: cannot run {argv[0]}: {err.strip().rsplit(': ', 1)[-1]}")
        if rc == S.PREPARE_FAILED and cwd:
            raise QoslabError(f"on {self.node}: no directory {cwd}")
        res = CommandResult(self.node, list(argv), rc, out, err, dt)
        if check and rc != 0:
            raise CommandFailed(self.node, list(argv), rc, err or out)
        return res

    def start(self, argv: Sequence[str], *, stdout: str | Path | None = None, stderr: str | Path | None = None,
              cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
              timer_slack_ns: int | None = None, lifetime_s: float | None = None) -> BackgroundProcess:
        """See :meth:`qoslab.executors.base.Executor.start`. ``stdout``/``stderr``/``cwd`` are
        paths on the node (see :meth:`node_dir`). A timer slack the node does not permit is left
        out and noted in the returned process's ``notes``."""
        if lifetime_s is not None and lifetime_s <= 0:
            raise QoslabError(f"on {self.node}: lifetime must be > 0 s, got {lifetime_s:g}")
        if timer_slack_ns is not None and timer_slack_ns < 1:
            raise ValueError(f"timer slack must be >= 1 ns, got {timer_slack_ns}")
        notes = []
        if timer_slack_ns is not None and not self.permits("timer_slack"):
            notes.append(f"timer slack {timer_slack_ns} ns not permitted on {self.node}: kernel default")
            timer_slack_ns = None
        self._ensure_lease()
        script = S.ensure_guard_lines(self.work_root, self.run_id, self.lease_s) + S.start_script(
            [str(a) for a in argv], root=self.work_root, run_id=self.run_id,
            stdout=str(stdout) if stdout else None, stderr=str(stderr) if stderr else None,
            cwd=str(cwd) if cwd else None, env=env, timer_slack_ns=timer_slack_ns, lifetime_s=lifetime_s)
        rc, out, err = self._script(script, 10.0)
        if rc != 0 or not out.strip().isdigit():
            raise QoslabError(f"on {self.node}: cannot start `{' '.join(map(str, argv))}`: "
                              f"{err.strip()[-200:] or f'exit {rc}'}")
        return BackgroundProcess(node=self.node, argv=list(argv), pid=int(out.strip()),
                                 stdout_path=Path(stdout) if stdout else None,
                                 stderr_path=Path(stderr) if stderr else None, handle=self, notes=notes,
                                 deadline=None if lifetime_s is None else time.monotonic() + lifetime_s)

    @staticmethod
    def _status(text: str) -> int | None:
        """``running`` -> None; a shell status (128+N = killed by signal N) -> returncode."""
        word = text.strip().splitlines()[-1] if text.strip() else "gone"
        if word == "running":
            return None
        if word == "gone":  # its waiter was killed with it: the exit status is lost
            return -9
        rc = int(word)
        return -(rc - 128) if rc > 128 else rc

    def poll(self, proc: BackgroundProcess) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.poll`."""
        if proc.returncode is None:
            proc.returncode = self._status(self._checked(S.poll_script(self.work_root, proc.pid), 5.0, "poll"))
        return proc.returncode

    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        """See :meth:`qoslab.executors.base.Executor.wait`."""
        if proc.returncode is not None:
            return proc.returncode
        rc = self._status(self._checked(S.wait_script(self.work_root, proc.pid, timeout), timeout, "wait"))
        if rc is None:
            raise CommandTimeout(self.node, proc.argv, timeout)
        proc.returncode = rc
        return rc

    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.stop`."""
        rc = self._status(self._checked(S.stop_script(self.work_root, proc.pid, grace_s), grace_s + 3, "stop"))
        if proc.returncode is None:
            proc.returncode = rc
        return proc.returncode

    def fetch(self, remote_path: str | Path, local_path: str | Path) -> Path:
        """See :meth:`qoslab.executors.base.Executor.fetch` (SFTP)."""
        dst = Path(local_path)
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            sshio.call(self._get(str(remote_path), dst), 600)
        except TimeoutError:
            raise QoslabError(f"on {self.node}: fetching {remote_path} took over 600 s") from None
        return dst

    async def _get(self, remote: str, dst: Path) -> None:
        import asyncssh

        conn = await self._connection()
        try:
            if self._sftp is None:
                self._sftp = await conn.start_sftp_client()
            await self._sftp.get(remote, str(dst))
        except asyncssh.SFTPNoSuchFile:
            raise QoslabError(f"on {self.node}: no such file: {remote}") from None
        except (asyncssh.Error, OSError) as e:
            self._sftp = None
            raise QoslabError(f"on {self.node}: cannot fetch {remote}: {e}") from None

    def node_dir(self, local_dir: str | Path) -> str:
        """The directory on the node standing for ``local_dir`` (created there): the work root +
        ``local_dir`` relative to ``local_root`` (a folder outside it gets ``x-<hash>/<name>``)."""
        p = Path(local_dir).resolve()
        if self.local_root is not None and p.is_relative_to(self.local_root):
            rel = p.relative_to(self.local_root).as_posix()
        else:
            rel = f"x-{hashlib.sha256(str(p).encode()).hexdigest()[:8]}/{p.name}"
        d = self.work_root if rel in ("", ".") else f"{self.work_root}/{rel}"
        if d not in self._dirs:
            self._checked(f"mkdir -p {S.q(d)}", 10.0, f"mkdir {d}")
            self._dirs.add(d)
        return d

    # -- node facts, the guard, leftovers, close -----------------------------------------------
    def permits(self, what: str) -> bool:
        """Whether the node permits ``timer_slack`` (a process sets its own to 1 ns) or
        ``realtime`` (``chrt -f 1``); probed once per executor."""
        if self._facts is None:
            out = self._checked(S.facts_script(), 10.0, "probe")
            self._facts = {k: v == "1" for k, _, v in (l.partition("=") for l in out.split())}
        return self._facts.get(what, False)

    def _ensure_lease(self) -> None:
        """Renew the run's lease on the node from now on (the guard itself is (re)started by every
        start script: :func:`.sshscripts.ensure_guard_lines`)."""
        if self._lease is None or self._lease.done():
            self._lease = sshio.spawn(self._renew_lease())

    async def _renew_lease(self) -> None:
        touch = f"touch {S.q(self.work_root + '/.lease')}"
        while True:
            await asyncio.sleep(self.lease_s / 4)
            try:
                await self._exec(touch, None, 10.0)
            except QoslabError:
                pass  # the next round reconnects; a lease left to expire ends the run's processes

    def leftovers(self, any_run: bool = False) -> list[int]:
        """PIDs of processes on the node marked as this run's (or any qoslab run's)."""
        out = self._checked(S.leftovers_script(None if any_run else self.run_id), 20.0, "leftover scan")
        return [int(x) for x in out.split() if x.isdigit()]

    def end_leftovers(self) -> list[int]:
        """End (by PID) the processes an earlier, killed run with this run id left on the node and
        remove its work root; returns their PIDs."""
        pids = self.leftovers()
        if pids:
            self._checked(S.end_pids_script(pids), 10.0, "ending leftovers")
        self._checked(S.close_script(self.work_root), 10.0, "removing the old work root")
        self._dirs.clear()
        return pids

    def close(self) -> None:
        """End every process of this executor still running on the node, the guard and the
        lease, remove the work root, close the connection. Idempotent."""
        if self._lease is not None:
            self._lease.cancel()
            self._lease = None
        conn = self._conn
        if conn is None:
            self._dirs.clear()
            return
        first: QoslabError | None = None
        if not conn.is_closed():
            try:
                self._checked(S.close_script(self.work_root), 10.0, "clean-up")
            except QoslabError as e:
                first = e
        self._conn, self._sftp, self._agent = None, None, None
        self._dirs.clear()
        try:  # on the loop's thread: asyncio's transports are not thread-safe (ci51 failed on that)
            sshio.call(sshio.close_connection(conn, CLOSE_WAIT_S), 2 * CLOSE_WAIT_S)
        except Exception as e:  # noqa: BLE001 - any failure of the close itself, named
            first = first or QoslabError(f"on {self.node}: closing the SSH connection failed: "
                                         f"{type(e).__name__}: {e}")
        if first is not None:
            raise first


def cluster_target(topology: Any, node: str) -> SshTarget:
    """The SSH target of ``node`` from a cluster topology's ``ssh:`` settings. Raises
    QoslabError when the topology has none."""
    s = getattr(topology, "ssh", None)
    if s is None:
        raise QoslabError(f"topology {topology.name} has no `ssh:` settings (user, known_hosts, ...): "
                          "the ssh executor cannot reach its hosts")
    host = topology.host(node)
    return SshTarget(host=s.addresses.get(node, host.ip), port=s.port, username=s.user,
                     known_hosts=Path(s.known_hosts).expanduser(),
                     client_keys=(Path(s.identity_file).expanduser(),) if s.identity_file else (),
                     qoslab_root=s.qoslab_dir, connect_timeout_s=s.connect_timeout_s)
