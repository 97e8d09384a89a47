"""Which sizes of a Java workload run within the workload JVMs' heap (qoslab.workloads.pool.JVM_FLAGS):
its workers on loopback (127.0.0.2.., base port 13100) and its manager (the sort client, the matmul
manager) on 127.0.0.1, one run per size; one JSON line per run (exit code, valid, the manager's
peak RSS, whether the workers live). The evidence behind qoslab.workloads.sort.MAX_SIZE and
qoslab.workloads.matmul.MAX_SIZE:

    python bench/heap_probe.py sort WORKERS MECHANISM SIZE...     # e.g. sort 1 corba 16000000 20000000
    python bench/heap_probe.py matmul WORKERS MECHANISM SIZE...   # e.g. matmul 2 rmi-serializable 3000 4000
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


def one(kind: str, spec: str, mechanism: str, size: int, servers: list[subprocess.Popen]) -> dict:
    """One manager run of ``kind`` (sort: ``size`` integers; matmul: order ``size``) against ``spec``; its facts."""
    t0 = time.time()
    argv = java_command(kind, "--servers" if kind == "sort" else "--workers", spec, "--mechanism", mechanism,
                        "--size", str(size), "--seed", "1", "--port", str(BASE), "--timeout", "600",
                        hostname="127.0.0.1")
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True, timeout=1800)
    out = [line for line in r.stdout.splitlines() if line.startswith("{")]
    res = json.loads(out[-1]) if out else {}
    tail = r.stderr.strip().splitlines()
    return {"kind": kind, "mechanism": mechanism, "size": size, "rc": r.returncode, "valid": res.get("valid"),
            "total_s": res.get("total_s"), "client_rss_kb": int(tail[-1]) if tail and tail[-1].isdigit() else None,
            "servers_alive": all(p.poll() is None for p in servers),
            "error": [line for line in tail if "Error" in line][-1:], "wall_s": round(time.time() - t0, 1)}


def main(kind: str, n_servers: int, mechanism: str, sizes: list[int]) -> None:
    servers: list[subprocess.Popen] = []
    try:
        for i in range(n_servers):
            ip = f"127.0.0.{2 + i}"
            servers.append(subprocess.Popen(java_command(f"{kind}-worker", "--advertise", ip, "--port", str(BASE),
                                                         "--timeout", "600", hostname=ip),
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if not all(wait_port(f"127.0.0.{2 + i}", BASE) for i in range(n_servers)):
            raise SystemExit(f"a {kind} worker did not start")
        spec = ",".join(f"s{i}=127.0.0.{2 + i}:{BASE}" for i in range(n_servers))
        for size in sizes:
            rec = {"workers": n_servers, **one(kind, spec, mechanism, size, servers)}
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
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], [int(x) for x in sys.argv[4:]])
