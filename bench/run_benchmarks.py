"""qoslab benchmarks. Each writes bench/results/<name>.json with the machine's facts.

Benchmarks, not tests: timings on a shared 2-core machine are noisy, so each records repeated
samples and their median instead of asserting a bound.

    python bench/run_benchmarks.py [--only testbed] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from machinefacts import RESULTS, machine_facts  # noqa: E402
from qoslab.testbed import Testbed  # noqa: E402
from qoslab.topology import load_topology  # noqa: E402


def bench_testbed(repeat: int) -> dict:
    """Time `up` and `down` of the 8-host ecenet testbed (seconds), all-pairs ping, and iperf3
    TCP throughput (bits/s) against the 50 Mbit/s link rate. Target: up < 2 s."""
    tb = Testbed(load_topology(None, name="bench"))
    tb.down()
    ups, downs, iperf = [], [], []
    for i in range(repeat):
        ups.append(tb.up().seconds)
        if i == 0:
            pings = tb.ping_matrix()
            reachable = sum(v is not None for v in pings.values())
            for _ in range(3):
                iperf.append(tb.iperf_tcp("jp-2", "jp-1", seconds=5)["bits_per_second"])
        downs.append(tb.down().seconds)
    rate = tb.topo.link.rate
    return {
        "up_s": {"samples": ups, "median": statistics.median(ups), "target": 2.0,
                 "met": statistics.median(ups) < 2.0},
        "down_s": {"samples": downs, "median": statistics.median(downs)},
        "ping_pairs_reachable": f"{reachable}/{len(pings)}",
        "ping_rtt_ms_median": statistics.median(v for v in pings.values() if v is not None),
        "iperf_tcp_bps": {"samples": iperf, "median": statistics.median(iperf),
                          "share_of_link_rate": statistics.median(iperf) / rate, "link_rate_bps": rate},
    }


from capture_bench import bench_capture  # noqa: E402
from capture_live_bench import bench_capture_live  # noqa: E402
from cluster_bench import bench_cluster  # noqa: E402
from cpubudget_bench import bench_cpubudget  # noqa: E402
from flood_bench import bench_flood  # noqa: E402
from floodcost_bench import bench_floodcost  # noqa: E402
from matmul_bench import bench_matmul  # noqa: E402
from nft_bench import bench_nft  # noqa: E402
from overhead_bench import bench_overhead  # noqa: E402
from sort_bench import bench_sort  # noqa: E402
from switch_bench import bench_switch  # noqa: E402
from workload_bench import bench_workload  # noqa: E402

BENCHES = {"testbed": bench_testbed, "workload": bench_workload, "flood": bench_flood, "floodcost": bench_floodcost, "switch": bench_switch,
           "capture": bench_capture, "capture_live": bench_capture_live, "nft": bench_nft,
           "cluster": bench_cluster, "matmul": bench_matmul, "overhead": bench_overhead, "sort": bench_sort,
           "cpubudget": bench_cpubudget}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(BENCHES), action="append")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    facts = machine_facts()
    for name in args.only or BENCHES:
        print(f"[bench] {name} ...", flush=True)
        result = {"benchmark": name, "machine": facts, "result": BENCHES[name](args.repeat)}
        out = RESULTS / f"{name}.json"
        out.write_text(json.dumps(result, indent=1))
        print(json.dumps(result["result"], indent=1))
        print(f"[bench] wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
