"""The Meter protocol (meters/base.py): a meter registered from a test gets its store column
and its values in the trial row; a failing meter never fails the trial; the built-ins' order."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from qoslab.errors import QoslabError
from qoslab.meters.base import BaseMeter, Meter, MeterSet, TrialContext, meter_columns
from qoslab.meters.drops import CaptureDropsMeter
from qoslab.registry import meters
from qoslab.trials.playbook import ScheduledTrial
from qoslab.trials.store import SCHEMA, Store


class HookOrderMeter(BaseMeter):
    """A test meter: records the order of its hooks and what the context held at each."""

    COLUMNS: ClassVar[dict[str, str]] = {"test_hooks": "TEXT", "test_workers": "INTEGER"}

    def __init__(self, ctx: TrialContext) -> None:
        super().__init__(ctx)
        self.hooks: list[str] = []
        self.workers = None

    def begin(self, ctx: TrialContext) -> None:
        self.hooks.append("begin")

    def window_begin(self, ctx: TrialContext) -> None:
        self.hooks.append("window_begin")
        self.workers = len(ctx.workers)

    def window_end(self, ctx: TrialContext) -> None:
        self.hooks.append("window_end")

    def end(self, ctx: TrialContext) -> None:
        self.hooks.append("end" if ctx.capture_summary is not None else "end-without-capture")

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        return {"test_hooks": ",".join(self.hooks), "test_workers": self.workers}


class FailingMeter(BaseMeter):
    COLUMNS: ClassVar[dict[str, str]] = {"test_failing": "REAL"}

    def window_begin(self, ctx: TrialContext) -> None:
        raise RuntimeError("sensor unplugged")

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        return {"test_failing": 1.0}


class SloppyMeter(BaseMeter):
    COLUMNS: ClassVar[dict[str, str]] = {"test_sloppy": "INTEGER"}

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        return {"test_sloppy": 3, "undeclared": 4}


@pytest.fixture
def registered():
    names = {"test-hooks": HookOrderMeter, "test-failing": FailingMeter, "test-sloppy": SloppyMeter}
    for n, cls in names.items():
        meters.register(n, cls)
    yield list(names)
    for n in names:
        meters.unregister(n)


def _ctx(tmp_path: Path, log: list[str]) -> TrialContext:
    return TrialContext(condition="c", congestion=False, trial_dir=tmp_path, local=False, switch=None, ports=[],
                        log=log.append)


def _trial(ms: MeterSet, ctx: TrialContext) -> dict[str, Any]:
    """The hook sequence run_trial drives (campaign/trial.py)."""
    ms.begin()
    ctx.workers = {"jp-1": object(), "jp-2": object()}
    ms.window_begin()
    ctx.result = {"valid": True, "per_worker": []}
    ms.window_end()
    ctx.capture_summary = {"drops": {"received": 10, "dropped_total": 0}}
    ms.end()
    try:
        return ms.columns()
    finally:
        ms.close()


def test_a_meter_registered_from_a_test_gets_its_column_and_values(tmp_path, registered):
    assert meters.names_in_order()[:3] == ["switch", "cpu", "capture"]
    assert {"test_hooks": "TEXT", "test_workers": "INTEGER"}.items() <= meter_columns().items()
    log: list[str] = []
    ctx = _ctx(tmp_path, log)
    ms = MeterSet(ctx, ["capture", *registered])
    assert isinstance(ms.meters["test-hooks"], Meter)
    cols = _trial(ms, ctx)
    assert cols["test_hooks"] == "begin,window_begin,window_end,end" and cols["test_workers"] == 2
    assert cols["capture_received"] == 10 and cols["capture_drops"] == 0
    with Store(tmp_path / "trials.sqlite") as st:  # opened after the registration: the columns exist
        assert {"test_hooks", "test_workers", "test_failing", "test_sloppy"} <= set(st.columns())
        st.init([ScheduledTrial(0, "c", 1, False)], {})
        st.record(0, status="done", **cols)
        [row] = st.trials()
    assert row.get("test_hooks") == "begin,window_begin,window_end,end" and row.measurements["test_workers"] == 2


def test_a_failing_meter_loses_its_columns_not_the_trial(tmp_path, registered):
    log: list[str] = []
    ctx = _ctx(tmp_path, log)
    ms = MeterSet(ctx, registered)
    cols = _trial(ms, ctx)
    assert cols["test_failing"] is None  # its window_begin raised: NULL, though columns() would say 1.0
    assert ms.errors == ["test-failing.window_begin: sensor unplugged"]
    assert any("meter test-failing failed in window_begin: sensor unplugged" in line for line in log)
    assert cols["test_sloppy"] == 3 and "undeclared" not in cols  # undeclared keys are left out, logged
    assert any("undeclared columns ['undeclared']" in line for line in log)
    assert set(ms.seconds) == set(registered)


def test_an_unknown_or_broken_meter_is_reported_not_raised(tmp_path):
    meters.register("test-not-a-meter", lambda ctx: object())
    try:
        log: list[str] = []
        ms = MeterSet(_ctx(tmp_path, log), ["test-not-a-meter", "no-such-meter"])
        assert ms.meters == {}
        assert "test-not-a-meter.create: object is not a Meter" in ms.errors[0]
        assert "unknown meter 'no-such-meter'" in ms.errors[1]
    finally:
        meters.unregister("test-not-a-meter")


def test_a_store_opened_before_the_registration_names_the_missing_column(tmp_path):
    with Store(tmp_path / "trials.sqlite") as st:
        st.init([ScheduledTrial(0, "c", 1, False)], {})
        with pytest.raises(Exception, match="no column test_late in trials"):
            st.record(0, test_late=1)


def test_conflicting_column_types_are_refused(registered):
    class Clash(BaseMeter):
        COLUMNS: ClassVar[dict[str, str]] = {"test_hooks": "REAL"}

    meters.register("test-clash", Clash)
    try:
        with pytest.raises(ValueError, match="test_hooks"):
            meter_columns()
    finally:
        meters.unregister("test-clash")


def test_capture_meter_is_all_null_without_a_capture(tmp_path):
    m = CaptureDropsMeter(_ctx(tmp_path, []))
    assert set(m.columns(_ctx(tmp_path, [])).values()) == {None}


def test_a_readonly_store_neither_migrates_nor_writes(tmp_path):
    import hashlib
    import sqlite3

    db = tmp_path / "trials.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)  # the first qoslab store's schema (user_version 0): no later column
    con.execute("INSERT INTO trials (idx, condition, trial, warmup, status, elapsed_s, valid) VALUES (0, 'c', 1, 0, "
                "'done', 1.5, 1)")
    con.commit()
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with Store(db, readonly=True) as st:
        [row] = st.trials(counted=True)
        assert row.elapsed_s == 1.5 and row.busy_max_s is None and "cpu_flood_s" not in st.columns()
        with pytest.raises(QoslabError, match="opened read-only"):
            st.set_meta("x", 1)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    with pytest.raises(Exception, match="no campaign store there"):
        Store(tmp_path / "missing.sqlite", readonly=True)
    (tmp_path / "junk.sqlite").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(Exception, match="not a qoslab campaign store"):
        Store(tmp_path / "junk.sqlite", readonly=True)
