"""Runs malformed files through the real CLI entry point (``qoslab.cli.main``), many in one
process, and prints one JSON record per file: exit code, what went to stderr, seconds, and the
process's peak RSS so far (kB, VmHWM of /proc/self/status: this program's own, unlike ru_maxrss,
which Linux carries over from the parent that forked it; a peak over all files bounds each
one's). Used by
test_malformed_corpus.py: ``python corpus_driver.py OUT_DIR KIND=FILE ...``."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time

import qoslab.campaign.runner as runner_mod
from qoslab.cli import main

COMMANDS = {
    "topology": lambda f, out: ["topology", "validate", f],
    "flood": lambda f, out: ["flood", "validate", f],
    "profile": lambda f, out: ["switch", "render", f],
    "playbook": lambda f, out: ["campaign", "run", f, "--out", out],
    "cli": lambda f, out: f.split(" ") + ["--out", out],
    "argv": lambda f, out: json.loads(f),  # a whole command line as a JSON list (test_campaign_folders.py)
}


def peak_rss_kb() -> int:
    """This process's peak resident set size (kB) since its exec."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def _accepted(self):  # a malformed playbook must never reach the runner (no testbed is touched)
    raise AssertionError("ACCEPTED: the campaign runner was started")


def run(out_dir: str, items: list[str]) -> list[dict]:
    runner_mod.Runner.run = _accepted  # type: ignore[method-assign]
    records = []
    for n, item in enumerate(items):
        kind, _, f = item.partition("=")
        sys.argv = ["qoslab", *COMMANDS[kind](f, f"{out_dir}/c{n}")]
        err, out = io.StringIO(), io.StringIO()
        t0 = time.monotonic()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                main()
                code: object = 0
            except SystemExit as e:
                code = e.code
            except BaseException as e:  # noqa: BLE001 - recorded, the test fails on it
                code = f"raised {type(e).__name__}: {e}"
        records.append({"kind": kind, "file": f, "code": code, "stderr": err.getvalue(),
                        "seconds": time.monotonic() - t0,
                        "maxrss_kb": peak_rss_kb()})
    return records


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2:])))
