#!/usr/bin/env python3
"""Head command of the sockperf example (a `command` workload, stdlib only): runs Debian's
``sockperf ping-pong`` (TCP, --full-rtt) against one ``sockperf server`` (--server ADDRESS:PORT)
for --seconds at --mps messages per second of --bytes bytes, parses its percentile lines
(microseconds) and prints ONE JSON line on stdout (qoslab's command contract): elapsed_s, valid
(sockperf exited 0 and reported observations), the round-trip percentiles in ms
(rtt_p50_ms, rtt_p99_ms primary, rtt_p999_ms, rtt_max_ms), observations, msgs_per_s and their
``metrics`` declaration. Exit code 0 = valid."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time

#: sockperf 3.7's summary lines: "---> percentile 99.000 =  382.656" and "---> <MAX> observation = 5120.512"
#: (microseconds, --full-rtt: round trips), "Total 309 observations".
PCT = re.compile(r"--->\s+percentile\s+([\d.]+)\s+=\s+([\d.]+)")
MAX = re.compile(r"--->\s+<MAX> observation\s+=\s+([\d.]+)")
TOTAL = re.compile(r"Total (\d+) observations")
VALID = re.compile(r"\[Valid Duration\] RunTime=([\d.]+) sec")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse(text: str) -> dict:
    """Percentiles (ms) and observation count of sockperf's output; {} when it printed none."""
    text = ANSI.sub("", text)
    pct = {float(p): float(v) / 1e3 for p, v in PCT.findall(text)}
    tot = TOTAL.search(text)
    mx = MAX.search(text)
    dur = VALID.search(text)
    if not pct or tot is None or mx is None or dur is None:
        return {}
    return {"msgs_per_s": int(tot.group(1)) / max(float(dur.group(1)), 1e-9),"rtt_p50_ms": pct.get(50.0), "rtt_p99_ms": pct.get(99.0), "rtt_p999_ms": pct.get(99.9),
            "rtt_max_ms": float(mx.group(1)) / 1e3, "observations": int(tot.group(1))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--server", required=True, help="ADDRESS:PORT of the sockperf server")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--mps", default="200", help="messages per second (sockperf --mps; 'max' = back to back)")
    ap.add_argument("--bytes", type=int, default=64)
    ap.add_argument("--dscp", default="", help="DSCP (0-63) set by sockperf (--tos); empty = unmarked")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds sockperf may take in all")
    a = ap.parse_args()
    host, port = a.server.rsplit(":", 1)
    cmd = ["sockperf", "ping-pong", "--tcp", "-i", host, "-p", port, "-t", f"{a.seconds:g}", "--mps", a.mps,
           "-m", str(a.bytes), "--full-rtt"] + (["--tos", str(int(a.dscp) << 2)] if a.dscp != "" else [])
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", -1
    elapsed = time.perf_counter() - t0
    result: dict = {"elapsed_s": elapsed, **parse(out)}
    result["valid"] = rc == 0 and "observations" in result
    if result["valid"]:
        result["metrics"] = {"rtt_p99_ms": {"unit": "ms", "primary": True}, "rtt_p50_ms": {"unit": "ms"},
                             "rtt_p999_ms": {"unit": "ms"}, "rtt_max_ms": {"unit": "ms"},
                             "msgs_per_s": {"unit": "msg/s", "direction": "higher"}}
    else:
        result["error"] = (f"sockperf exited {rc}" if rc != -1 else f"sockperf ran over {a.timeout:g} s") + \
            (": " + ANSI.sub("", out).strip().splitlines()[-1][:300] if out.strip() else "")
        print(result["error"], file=sys.stderr)
    print(json.dumps(result), flush=True)
    return 0 if result["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
