"""The plumbing under the ``ssh`` executor: one asyncio event loop in a daemon thread for all
SSH connections of this program, TCP sockets opened from inside a network namespace, and the
client side of the command agent (:class:`AgentClient`, the node side is :mod:`.sshagent`).

asyncssh is asynchronous and the :class:`~qoslab.executors.base.Executor` contract is not: every
executor call hands a coroutine to the loop (:func:`call`) and blocks on its result, so any
number of threads (parallel starts on N nodes) share one loop and one connection per node.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import json
import os
import shlex
import socket
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, TypeVar

from ..errors import QoslabError
from ..testbedplan import NETNS_DIR

T = TypeVar("T")

CLONE_NEWNET = 0x40000000  # <linux/sched.h>
#: The agent's program (see :mod:`.sshagent`), run as ``python3 -c`` on the node.
AGENT_SOURCE = (Path(__file__).parent / "sshagent.py").read_text()

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The shared event loop (started on first use in a daemon thread named ``qoslab-ssh``)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            lp = asyncio.new_event_loop()
            threading.Thread(target=lp.run_forever, name="qoslab-ssh", daemon=True).start()
            _loop = lp
        return _loop


def call(coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """Run ``coro`` on the shared loop and wait at most ``timeout_s`` seconds for its result
    (the coroutine is cancelled when that passes). Raises what the coroutine raises, or
    TimeoutError."""
    fut = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return fut.result(timeout_s)
    except FutureTimeout:
        fut.cancel()
        raise TimeoutError(f"no answer within {timeout_s:g} s") from None


def spawn(coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
    """Run ``coro`` on the shared loop in the background; returns its future (cancel it to stop)."""
    return asyncio.run_coroutine_threadsafe(coro, loop())


async def close_connection(conn: Any, timeout_s: float) -> None:
    """Close an asyncssh connection on the loop it runs on and wait at most ``timeout_s``
    seconds for it to end (a peer that does not answer is left to the transport's abort).
    Closing from another thread races the loop's own handling of the transport (asyncio's
    transports are not thread-safe)."""
    conn.close()
    try:
        await asyncio.wait_for(conn.wait_closed(), timeout_s)
    except TimeoutError:
        conn.abort()


def netns_socket(namespace: str, host: str, port: int, timeout_s: float) -> socket.socket:
    """A TCP socket connected to ``host:port`` from inside the network namespace ``namespace``
    (``/run/netns/NAME``): a short-lived thread enters the namespace (``setns``, which changes only
    that thread) and creates the socket, which keeps the namespace for its whole life.
    Raises QoslabError when the namespace is missing or the connection fails."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            fd = os.open(NETNS_DIR / namespace, os.O_RDONLY)
        except OSError as e:
            out["error"] = f"no network namespace {namespace}: {e.strerror}"
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                out["error"] = f"cannot enter network namespace {namespace}: {os.strerror(ctypes.get_errno())}"
                return
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(timeout_s)
            try:
                s.connect((host, port))
            except OSError as e:
                s.close()
                out["error"] = f"cannot connect to {host}:{port} from {namespace}: {e.strerror or e}"
                return
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small control messages, no Nagle wait
            s.setblocking(False)
            out["sock"] = s
        finally:
            os.close(fd)

    t = threading.Thread(target=work, name=f"netns-{namespace}")
    t.start()
    t.join()
    if "sock" not in out:
        raise QoslabError(out.get("error", f"cannot connect to {host}:{port} from {namespace}"))
    return out["sock"]


class AgentClient:
    """The client side of a node's :mod:`.sshagent`: requests by id, answers matched by a reader task."""

    def __init__(self, proc: Any, node: str) -> None:
        self.proc, self.node = proc, node
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 1
        self.reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, conn: Any, node: str) -> AgentClient:
        """Start the agent on ``conn``. Raises QoslabError when the node cannot run it (no python3)."""
        proc = await conn.create_process(f"exec python3 -u -c {shlex.quote(AGENT_SOURCE)}", encoding="utf-8")
        first = await proc.stdout.readline()
        if not first.startswith('{"id": 0'):
            err = (await proc.stderr.read()).strip()[-300:]
            raise QoslabError(f"on {node}: the command agent did not start (python3 3.6+ is needed on the node): "
                              f"{err or first.strip() or 'no output'}")
        agent = cls(proc, node)
        agent.reader = asyncio.get_running_loop().create_task(agent._read())
        return agent

    def alive(self) -> bool:
        """True while the agent's output is open."""
        return self.reader is not None and not self.reader.done()

    async def _read(self) -> None:
        try:
            async for line in self.proc.stdout:
                msg = json.loads(line)
                fut = self.pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        except Exception:  # noqa: BLE001 - a dead channel fails every pending request below
            pass
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(QoslabError(f"on {self.node}: the SSH connection or its agent ended"))
        self.pending.clear()

    async def request(self, script: str, input: str | None, timeout_s: float) -> tuple[int, str, str]:
        """Run ``script`` on the node; (rc, stdout, stderr). Raises QoslabError when the agent
        ends or does not answer within ``timeout_s`` + 10 s."""
        i = self.next_id
        self.next_id += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[i] = fut
        self.proc.stdin.write(json.dumps({"id": i, "script": script, "input": input, "timeout": timeout_s}) + "\n")
        try:
            msg = await asyncio.wait_for(fut, timeout_s + 10)
        except TimeoutError:
            self.pending.pop(i, None)
            raise QoslabError(f"on {self.node}: no answer over SSH within {timeout_s + 10:g} s") from None
        return int(msg["rc"]), msg["out"], msg["err"]
