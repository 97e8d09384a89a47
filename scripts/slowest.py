"""The slowest tests of a ``make test`` run over its pytest runs (the unit and client tests in
parallel, the integration tests serial): ``python scripts/slowest.py N JUNIT.xml...`` prints the
N slowest test cases (setup + call + teardown, seconds as pytest's junit XML records them)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def slowest(files: list[Path], n: int) -> list[tuple[float, str]]:
    """(seconds, node id) of the ``n`` slowest test cases in the junit XML ``files`` (missing
    files are skipped: a run that stopped early). Raises ValueError naming file:line and cause
    when a file is not junit XML (a run killed while writing it) or a case's time is no number."""
    cases = []
    for f in files:
        if not f.exists():
            continue
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError as e:
            raise ValueError(f"{f}:{e.position[0]}: not junit XML ({e})") from None
        for tc in root.iter("testcase"):
            try:
                sec = float(tc.get("time", 0))
            except ValueError:
                raise ValueError(f"{f}: testcase {tc.get('name')}: time {tc.get('time')!r} is not seconds") from None
            cases.append((sec, f"{tc.get('classname', '')}::{tc.get('name')}"))
    return sorted(cases, reverse=True)[:n]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: slowest.py N JUNIT.xml...", file=sys.stderr)
        return 2
    try:
        rows = slowest([Path(a) for a in argv[1:]], int(argv[0]))
    except ValueError as e:
        print(f"slowest.py: {e}", file=sys.stderr)
        return 1
    print(f"slowest {len(rows)} tests of this make test (setup + call + teardown):")
    for sec, node in rows:
        print(f"{sec:9.2f}s {node}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
