"""Campaign playbooks and the schedule (pure parts)."""

from __future__ import annotations

import pytest

from conftest import REPO
from qoslab.campaign import SCHEMA, Store, create, load_playbook, schedule
from qoslab.errors import ConfigError, QoslabError
from qoslab.stats import export_csv

PLAYBOOKS = ["quick", "thesis-table5", "thesis-table3"]


@pytest.mark.parametrize("name", PLAYBOOKS)
def test_shipped_playbooks_load(name):
    pb = load_playbook(REPO / "playbooks" / f"{name}.yaml")
    assert pb.conditions and pb.trials >= 2


def test_table5_matrix_and_table3_scaling():
    t5 = load_playbook(REPO / "playbooks" / "thesis-table5.yaml")
    assert {(c.congestion, c.profile) for c in t5.conditions} == {(False, "fifo"), (True, "fifo"), (False, "thesis"),
                                                                  (True, "thesis")}
    assert t5.trials == 50 and len(t5.workload.hosts) == 4
    t3 = load_playbook(REPO / "playbooks" / "thesis-table3.yaml")
    assert [len(c.workload.get("hosts", t3.workload.hosts)) for c in t3.conditions] == [2, 3, 4, 6, 8]
    assert not any(c.congestion for c in t3.conditions)


def test_schedule_interleaved_is_seeded_and_blocked_is_in_order():
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    a, b = schedule(pb, 42), schedule(pb, 42)
    assert a == b and a != schedule(pb, 43)
    assert [t.warmup for t in a[:4]] == [True] * 4 and not any(t.warmup for t in a[4:])
    assert sorted((t.condition, t.trial) for t in a[4:]) == sorted(
        (c.name, i) for c in pb.conditions for i in range(1, pb.trials + 1))
    blocked = schedule(pb.model_copy(update={"order": "blocked", "warmup": 0}), 1)
    assert [t.condition for t in blocked] == [c.name for c in pb.conditions for _ in range(pb.trials)]


def test_bad_playbooks_name_file_and_field(write_yaml):
    base = {"name": "x", "workload": {"hosts": ["jp-1"]}, "conditions": [{"name": "a", "congestion": False,
                                                                           "profile": "fifo"}]}
    p = write_yaml({**base, "trails": 5})
    with pytest.raises(ConfigError, match="trails: unknown field"):
        load_playbook(p)
    p = write_yaml({**base, "conditions": [{"name": "a", "congestion": False, "profile": "nope"}]})
    with pytest.raises(QoslabError, match=r"conditions\[0\]\.profile: no profile 'nope'"):
        load_playbook(p)
    p = write_yaml({**base, "order": "random"})
    with pytest.raises(ConfigError, match="order"):
        load_playbook(p)
    p = write_yaml({**base, "settle": "queue-full"})
    with pytest.raises(ConfigError, match="settle"):
        load_playbook(p)
    assert load_playbook(write_yaml(base)).settle == "saturated"


def test_store_resume_semantics(tmp_path):
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    store = create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c", trials=2)
    total = len(store.pending())
    assert total == 4 + 4 * 2
    idx = store.pending()[0][0]
    store.record(idx, status="done", elapsed_s=1.5, valid=1)
    killed = store.pending()[0][0]
    store.record(killed, status="running")      # killed mid-trial: runs again
    store.record(store.pending()[1][0], status="failed", error="x")  # failed: a resume runs it again
    again = Store(tmp_path / "c" / "trials.sqlite")
    assert len(again.pending()) == total - 1
    assert again.reset_interrupted() == [killed] and again.counts()["pending"] == total - 2
    assert idx not in [p[0] for p in again.pending()]
    with pytest.raises(QoslabError, match="already holds a campaign"):
        create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c")
    assert export_csv(again, tmp_path / "t.csv") == 0  # the done trial was a warm-up
    assert again.captured_conditions() == set()
    cond = store.pending()[0][1]
    store.record(store.pending()[0][0], status="done", elapsed_s=1.0, valid=1, capture_summary="s.json")
    assert again.captured_conditions() == {cond}  # a resumed "first" capture policy skips it


def test_network_wait_metric_and_old_store_migration(tmp_path):
    """A store made before busy_max_s existed gains the column on open; the network-wait CSV
    holds render time minus the busiest worker's, and leaves out trials without it."""
    import sqlite3

    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA.replace(", busy_max_s REAL", ""))
    con.executemany("INSERT INTO trials (idx, condition, trial, warmup, status, elapsed_s, valid) VALUES (?,?,?,?,?,?,?)",
                    [(0, "a", 1, 0, "done", 2.5, 1), (1, "a", 2, 0, "done", 3.0, 1), (2, "b", 1, 0, "done", 4.0, 1)])
    con.commit()
    con.close()
    store = Store(db)
    store.record(0, busy_max_s=2.0)
    store.record(2, busy_max_s=1.25)
    assert export_csv(store, tmp_path / "e.csv") == 3
    assert export_csv(store, tmp_path / "n.csv", "network_s") == 2
    assert (tmp_path / "n.csv").read_text().splitlines() == ["condition,trial,elapsed_s", "a,1,0.5", "b,1,2.75"]
    with pytest.raises(QoslabError, match="unknown metric"):
        export_csv(store, tmp_path / "x.csv", "cpu")


def test_bare_yaml_off_means_capture_off(tmp_path):
    text = (REPO / "playbooks" / "quick.yaml").read_text().replace("capture: first", "capture: off")
    (tmp_path / "p.yaml").write_text(text)
    assert load_playbook(tmp_path / "p.yaml").capture == "off"


@pytest.mark.parametrize("shared_rel, copy_rel", [
    ("data/thesis-table3-scaling.csv", "analysis/data/thesis-table3-scaling.csv"),
    ("data/thesis-table5-qos.csv", "analysis/data/thesis-table5-qos.csv"),
    ("reference/thesis-appendix-b-running-config.txt", "switch-configs/reference/thesis-appendix-b-running-config.txt")])
def test_reference_copies_match_shared(shared_rel, copy_rel):
    """The repository keeps copies of ../shared inputs (for checkouts without ../shared); no drift."""
    shared = REPO.parent / "shared" / shared_rel
    if not shared.exists():
        pytest.skip("no ../shared next to this checkout")
    assert (REPO / copy_rel).read_bytes() == shared.read_bytes()


def test_reset_invalid_makes_counted_invalid_trials_pending_again(tmp_path):
    """`campaign run --resume --rerun-invalid`: counted trials judged fidelity-invalid (outside
    load) run again; ok ones, warm-ups and failed ones are left as they are."""
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    store = create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c", trials=2)
    store.close()
    store = Store(tmp_path / "c" / "trials.sqlite")
    rows = store.trials()
    warm = next(r.idx for r in rows if r.warmup)
    counted = [r.idx for r in rows if not r.warmup]
    why = '[{"check": "outside_cores", "value": 0.42}]'
    store.record(warm, status="done", valid=1, fidelity="invalid", fidelity_reasons=why)
    store.record(counted[0], status="done", valid=1, fidelity="invalid", fidelity_reasons=why)
    store.record(counted[1], status="done", valid=1, fidelity="ok")
    pending_before = {i for i, *_ in store.pending()}
    assert store.reset_invalid() == [(counted[0], why)]
    r = next(x for x in store.trials() if x.idx == counted[0])
    assert r.status == "pending" and "rerun: fidelity invalid" in r.error and "outside_cores" in r.error
    assert {i for i, *_ in store.pending()} == pending_before | {counted[0]}
    assert store.reset_invalid() == []


def test_tear_down_tries_every_step_and_raises_the_first_failure_named():
    from qoslab.campaign.runner import tear_down
    ran, said = [], []

    def step(name, exc=None):
        def fn():
            ran.append(name)
            if exc is not None:
                raise exc
        return (name, fn)

    steps = [step("closing the nodes' executors", AttributeError("'NoneType' object has no attribute 'get_debug'")),
             step("removing the run's cgroup", QoslabError("cgroup busy")), step("taking the testbed down")]
    with pytest.raises(QoslabError, match=r"^closing the nodes' executors failed: AttributeError: 'NoneType'"):
        tear_down(steps, said.append)
    assert ran == [s[0] for s in steps] and said == []
    ran.clear()
    tear_down(steps, said.append, failing=True)  # the run's own error is the one reported
    assert ran == [s[0] for s in steps]
    assert said == ["warning: closing the nodes' executors failed too: closing the nodes' executors failed: "
                    "AttributeError: 'NoneType' object has no attribute 'get_debug'",
                    "warning: removing the run's cgroup failed too: cgroup busy"]
    ran.clear()
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C in a step: the rest still run
        tear_down([step("a", KeyboardInterrupt()), step("b", QoslabError("x")), step("c")], said.append)
    assert ran == ["a", "b", "c"]
    tear_down([], said.append)
