"""Which sort sizes run within the workload JVMs' heap (qoslab.workloads.pool.JVM_FLAGS): sort
servers on loopback (127.0.0.2.., base port 13100) and the sort client on 127.0.0.1, one run per
size; one JSON line per run (exit code, valid, the client's peak RSS, whether the servers live).
The evidence behind qoslab.workloads.sort.MAX_SIZE:

    python bench/sort_heap.py SERVERS MECHANISM SIZE...   # e.g. 1 corba 16000000 20000000
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from qoslab.workloads.pool import java_command

BASE = 13100


def wait_port(ip: str, port: int, timeout_s: float = 30) -> bool:
    """True once something listens on ``ip:port``."""
    end = time.time() + timeout_s
    while time.time() < end:
        try:
            socket.create_connection((ip, port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def one(spec: str, mechanism: str, size: int, servers: list[subprocess.Popen]) -> dict:
    """One sort client run of ``size`` integers against ``spec``; its facts."""
    t0 = time.time()
    argv = java_command("sort", "--servers", spec, "--mechanism", mechanism, "--size", str(size), "--seed", "1",
                        "--port", str(BASE), "--timeout", "300", hostname="127.0.0.1")
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True, timeout=900)
    out = [line for line in r.stdout.splitlines() if line.startswith("{")]
    res = json.loads(out[-1]) if out else {}
    tail = r.stderr.strip().splitlines()
    return {"mechanism": mechanism, "size": size, "rc": r.returncode, "valid": res.get("valid"),
            "total_s": res.get("total_s"), "client_rss_kb": int(tail[-1]) if tail and tail[-1].isdigit() else None,
            "servers_alive": all(p.poll() is None for p in servers),
            "error": [line for line in tail if "Error" in line][-1:], "wall_s": round(time.time() - t0, 1)}


def main(n_servers: int, mechanism: str, sizes: list[int]) -> None:
    servers: list[subprocess.Popen] = []
    try:
        for i in range(n_servers):
            ip = f"127.0.0.{2 + i}"
            servers.append(subprocess.Popen(java_command("sort-worker", "--advertise", ip, "--port", str(BASE),
                                                         "--timeout", "300", hostname=ip),
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if not all(wait_port(f"127.0.0.{2 + i}", BASE) for i in range(n_servers)):
            raise SystemExit("a sort server did not start")
        spec = ",".join(f"s{i}=127.0.0.{2 + i}:{BASE}" for i in range(n_servers))
        for size in sizes:
            rec = {"servers": n_servers, **one(spec, mechanism, size, servers)}
            print(json.dumps(rec), flush=True)
            if not rec["servers_alive"]:
                break
    finally:
        for p in servers:
            p.terminate()
        for p in servers:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], [int(x) for x in sys.argv[3:]])
