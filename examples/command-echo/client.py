#!/usr/bin/env python3
"""Head command of the `command` workload example (stdlib only): sends --requests request/response
round trips of --bytes bytes to each echo server of --servers (ADDRESS:PORT,...) in parallel, one
connection per server, checks every echo and prints ONE JSON line on stdout (the qoslab command
contract): elapsed_s (required: wall seconds of the whole exchange), valid, the declared metrics
(``metrics``: rtt_p99_ms primary, rtt_p50_ms, requests_per_s) and extra keys (requests,
rtt_median_s, rtt_p99_s, bytes). Exit code 0 = valid."""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import threading
import time


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("server closed the connection")
        buf += chunk
    return bytes(buf)


def exchange(server: str, requests: int, size: int, tos: int, timeout: float, rtts: list[float],
             errors: list[str], server_closes: bool = False) -> None:
    host, port = server.rsplit(":", 1)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tos:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            s.connect((host, int(port)))
            for i in range(requests):
                payload = os.urandom(size)
                t0 = time.perf_counter()
                s.sendall(struct.pack("!I", size) + payload)
                (n,) = struct.unpack("!I", recv_exact(s, 4))
                back = recv_exact(s, n)
                rtts.append(time.perf_counter() - t0)
                if back != payload:
                    errors.append(f"{server}: echo {i} differs")
                    return
            if server_closes:  # a 0-byte request: the server closes first (its port keeps the TIME-WAIT)
                s.sendall(struct.pack("!I", 0))
                while s.recv(4096):
                    pass
    except (OSError, EOFError) as e:
        errors.append(f"{server}: {e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--servers", required=True, help="ADDRESS:PORT,...")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=1024)
    ap.add_argument("--dscp", default="", help="DSCP (0-63) of the requests; empty = unmarked")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds one socket operation may take")
    ap.add_argument("--server-closes", action="store_true", help="end each connection with a 0-byte request the "
                    "server answers by closing first (as many real servers do: the TIME-WAIT is then theirs)")
    a = ap.parse_args()
    tos = int(a.dscp) << 2 if a.dscp != "" else 0
    servers = [s for s in a.servers.split(",") if s]
    rtts: list[float] = []
    errors: list[str] = []
    t0 = time.perf_counter()
    threads = [threading.Thread(target=exchange,
                                args=(s, a.requests, a.bytes, tos, a.timeout, rtts, errors, a.server_closes))
               for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    rtts.sort()
    p50 = statistics.median(rtts) if rtts else None
    p99 = rtts[min(len(rtts) - 1, int(0.99 * len(rtts)))] if rtts else None
    result = {"elapsed_s": elapsed, "valid": not errors, "servers": len(servers), "requests": len(rtts),
              "bytes": a.bytes, "rtt_median_s": p50, "rtt_p99_s": p99}
    if rtts:  # the metrics this workload is about (qoslab's contract: `metrics` names them, with units)
        result.update({"rtt_p99_ms": p99 * 1e3, "rtt_p50_ms": p50 * 1e3, "requests_per_s": len(rtts) / elapsed,
                       "metrics": {"rtt_p99_ms": {"unit": "ms", "primary": True}, "rtt_p50_ms": {"unit": "ms"},
                                   "requests_per_s": {"unit": "req/s", "direction": "higher"}}})
    if errors:
        result["error"] = "; ".join(errors)[:500]
        print(result["error"], file=sys.stderr)
    print("echo client done", flush=True)  # other output is fine: only the last JSON line counts
    print(json.dumps(result), flush=True)
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
