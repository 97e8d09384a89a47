"""The command agent the ``ssh`` executor runs on a node: one process per SSH connection that
runs shell scripts on request, so a command costs a fork of ``/bin/sh`` instead of a new SSH
session (a session runs the login shell's start-up files first: 150 ms for this machine's root
``.bashrc``, and PAM's session modules on a real cluster).

This file is sent as the program of ``python3 -c`` (Python 3.6+, standard library only) and
speaks JSON lines on stdin/stdout: a request ``{"id": N, "script": TEXT, "input": TEXT|null,
"timeout": SECONDS}`` is answered, in any order, by ``{"id": N, "rc": CODE, "out": TEXT, "err":
TEXT}``; each request runs in its own thread as ``/bin/sh -c SCRIPT`` in its own session, and a
script that overruns ``timeout`` has its process group killed (rc -9). The agent exits when its
stdin closes (the connection ended: the runner is gone). A script still running then is one the
runner waits for and nobody will read: its process group gets SIGTERM, and SIGKILL
``END_GRACE_S`` seconds later (a workload client run in the foreground ends with its runner, not
at its own timeout). What the scripts started in the background lives on under the executor's
guard (:mod:`.sshscripts`), which ends it once the lease expires.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

#: Seconds between the SIGTERM and the SIGKILL to the scripts still running when stdin closes.
END_GRACE_S = 2.0

_out_lock = threading.Lock()
_running = {}  # type: dict  # pid -> Popen of the scripts in flight (a type comment: the node may run Python 3.6)
_running_lock = threading.Lock()


def _reply(obj):
    line = json.dumps(obj) + "\n"
    with _out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def _handle(req):
    data = req.get("input")
    try:
        p = subprocess.Popen(["/bin/sh", "-c", req["script"]], stdin=subprocess.PIPE if data is not None else
                             subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    except OSError as e:
        _reply({"id": req["id"], "rc": 255, "out": "", "err": f"agent: cannot run /bin/sh: {e}"})
        return
    with _running_lock:
        _running[p.pid] = p
    try:
        out, err = p.communicate(data.encode() if data is not None else None, timeout=req.get("timeout"))
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        rc = -9
    finally:
        with _running_lock:
            _running.pop(p.pid, None)
    _reply({"id": req["id"], "rc": rc, "out": out.decode("utf-8", "replace"), "err": err.decode("utf-8", "replace")})


def _end_running():
    """SIGTERM to the process group of every script still running, SIGKILL to those left after
    ``END_GRACE_S`` seconds."""
    with _running_lock:
        procs = list(_running.values())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in procs:
            try:
                os.killpg(p.pid, sig)
            except OSError:
                pass
        if sig == signal.SIGTERM and procs:
            end = time.monotonic() + END_GRACE_S
            while time.monotonic() < end and any(p.poll() is None for p in procs):
                time.sleep(0.05)


def main():
    """Serve requests until stdin closes, then end the scripts still running."""
    _reply({"id": 0, "rc": 0, "out": f"ready {os.getpid()}", "err": ""})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        threading.Thread(target=_handle, args=(req,), daemon=True).start()
    _end_running()
    os._exit(0)


if __name__ == "__main__":
    main()
