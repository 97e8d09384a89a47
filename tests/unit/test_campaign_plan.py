"""``qoslab campaign plan`` / ``campaign run --dry-run``: every reference checked, the runner's
schedule, an ETA per condition from evidence; nothing started, no folder made."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import REPO
from qoslab.campaign import create, load_playbook, schedule
from qoslab.campaign.eta import default_trial_s, evidence_means, plan_eta
from qoslab.campaign.preview import make_plan

TABLE5 = REPO / "playbooks" / "thesis-table5.yaml"


def _netns() -> str | None:
    if shutil.which("ip") is None:
        return None
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def _tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else None


def _main(argv: list[str]) -> tuple[object, str, str]:
    """Run the real CLI entry point in this process: (exit code, stdout, stderr)."""
    from qoslab.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_argv, old_term = sys.argv, signal.getsignal(signal.SIGTERM)
    sys.argv = ["qoslab", *argv]
    code: object = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as e:
        code = e.code
    finally:
        sys.argv = old_argv
        signal.signal(signal.SIGTERM, old_term)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.serial  # it compares the machine's namespaces and results/ before and after: alone (make test's
# parallel stage runs the integration tests' concurrent lane, whose testbeds and calibrations come and go)
@pytest.mark.parametrize("argv", [["campaign", "plan", str(TABLE5)], ["campaign", "run", str(TABLE5), "--dry-run"]])
def test_plan_of_table5_starts_nothing_and_makes_no_folder(argv, tmp_path, monkeypatch):
    netns, repo_results = _netns(), _tree(REPO / "results")
    monkeypatch.chdir(tmp_path)

    def no_process(*a, **k):
        raise AssertionError(f"a process was started: {a[:1]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    monkeypatch.setattr(os, "fork", no_process)
    monkeypatch.setattr(os, "posix_spawn", no_process)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = _main(argv)
    monkeypatch.undo()
    assert code == 0, err
    assert "every reference checked" in out and "interlock passed" in out
    for cond in ("no congestion fifo", "congestion fifo", "no congestion thesis", "congestion thesis"):
        assert cond in out
    assert "204 trials in interleaved order" in out and "the first 12 of 204 trials in order" in out
    assert "ETA evidence:" in out and "total" in out
    assert list(tmp_path.iterdir()) == []                  # no campaign folder (results/campaigns/...)
    assert _tree(REPO / "results") == repo_results
    assert _netns() == netns                               # no namespace made


def test_broken_profile_reference_exits_2_naming_file_and_line(tmp_path):
    data = yaml.safe_load(TABLE5.read_text())
    data["conditions"][2]["profile"] = "no-such-profile"
    bad = tmp_path / "broken.yaml"
    bad.write_text(yaml.safe_dump(data, sort_keys=False))
    line = next(i for i, t in enumerate(bad.read_text().splitlines(), 1) if "no-such-profile" in t)
    for argv in (["campaign", "plan", str(bad)], ["campaign", "run", str(bad), "--dry-run"]):
        p = subprocess.run([sys.executable, "-m", "qoslab", *argv], capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": "300", "PYTHONPATH": str(REPO / "src")}, cwd=tmp_path,
                           timeout=60)
        assert p.returncode == 2, p.stderr
        assert f"{bad}:{line}: conditions[2].profile" in p.stderr
        assert "no-such-profile" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["broken.yaml"]


def test_plan_schedule_is_the_runners(tmp_path):
    plan = make_plan(TABLE5, seed=7, roots=[])
    pb = load_playbook(TABLE5)
    assert plan.trials == schedule(pb.model_copy(update={"seed": 7}), 7) and not plan.seed_drawn
    store = create(pb.model_copy(update={"seed": 7}), TABLE5, tmp_path / "c")
    assert [(t.idx, t.condition, t.trial, t.warmup) for t in plan.trials] == \
        [(r.idx, r.condition, r.trial, r.warmup) for r in store.trials()]
    store.close()
    assert [c.trials for c in plan.conditions] == [50] * 4 and [c.warmup for c in plan.conditions] == [1] * 4
    assert plan.evidence.startswith("default model")
    assert make_plan(TABLE5, roots=[]).seed_drawn
    assert len(make_plan(TABLE5, trials=3, seed=1, roots=[]).trials) == 4 + 12


def test_default_model_and_plan_eta():
    pb = load_playbook(TABLE5)  # 4 frames: render times twice the quick campaign's
    t = {c.name: default_trial_s(pb, c) for c in pb.conditions}
    assert t["no congestion fifo"] == pytest.approx(0.82 * 2 + 0.7)
    assert t["congestion fifo"] == pytest.approx(4.0 * 2 + 3.0)
    assert t["congestion thesis"] == pytest.approx(0.92 * 2 + 3.0)
    assert plan_eta({"a": 3, "b": 10}, {"a": 60.0, "b": 2.0}) == {"a": 180.0, "b": 20.0}


def test_evidence_from_a_finished_campaign_read_from_a_copy(tmp_path):
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    root = tmp_path / "campaigns"
    store = create(pb, REPO / "playbooks" / "quick.yaml", root / "quick-1", trials=2)
    now = time.time()
    unfinished = create(pb, REPO / "playbooks" / "quick.yaml", root / "quick-2", trials=2)
    unfinished.close()
    for r in store.trials():
        wall = 30.0 if r.condition == "congestion fifo" else 2.0
        store.record(r.idx, status="done", valid=1, elapsed_s=wall - 1, started=now, finished=now + wall)
    store.close()
    db = root / "quick-1" / "trials.sqlite"
    before = (hashlib.sha256(db.read_bytes()).hexdigest(), _tree(root))
    ev = evidence_means(pb, [root])
    assert ev.means == {"no congestion fifo": 2.0, "congestion fifo": 30.0, "no congestion thesis": 2.0,
                        "congestion thesis": 2.0}
    assert "quick-1" in ev.source
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), _tree(root)) == before
    other = pb.model_copy(update={"name": "other"})  # e.g. the sequential design of the same matrix
    ev = evidence_means(other, [root])
    assert ev.means["congestion fifo"] == 30.0 and "same conditions, workload, topology and flood" in ev.source
    longer = other.model_copy(update={"workload": pb.workload.model_copy(update={"frames": 3})})
    assert evidence_means(longer, [root]).source.startswith("default model")


def test_eta_of_a_command_workload_is_its_own_timeout_then_its_history(tmp_path):
    """Issue 34: a command workload's ETA is not the quick campaign's RayTracer (0:00:42 predicted,
    4 min actual): without history each trial is bounded by the workload's timeout_s; with a
    finished campaign of any playbook that ran the same workload, its wall times by condition class."""
    path = REPO / "playbooks" / "command-example.yaml"
    pb = load_playbook(path)
    ev = evidence_means(pb, [tmp_path / "none"])
    assert ev.means == {"no congestion fifo": 60.0 + 0.7, "congestion fifo": 63.0, "no congestion thesis": 60.7,
                        "congestion thesis": 63.0}
    assert "at most the workload's own timeout_s" in ev.source
    root = tmp_path / "campaigns"
    store = create(pb, path, root / "earlier", trials=2)
    now = time.time()
    for r in store.trials():
        wall = {"congestion fifo": 40.0, "congestion thesis": 5.0}.get(r.condition, 3.0)
        store.record(r.idx, status="done", valid=1, elapsed_s=wall - 1, started=now, finished=now + wall)
    store.close()
    renamed = [{"name": "quiet", "congestion": False, "profile": "fifo"},
               {"name": "loud", "congestion": True, "profile": "fifo"},
               {"name": "loud ef", "congestion": True, "profile": "rmi-ports"}]
    other = pb.model_copy(update={"name": "mine", "conditions": [type(pb.conditions[0])(**c) for c in renamed],
                                  "baseline": "quiet"})
    ev = evidence_means(other, [root])
    assert ev.means == {"quiet": 3.0, "loud": 40.0, "loud ef": 5.0}
    assert "earlier (same workload" in ev.source
    slower = other.model_copy(update={"workload": pb.workload.model_copy(update={"timeout_s": 90.0})})
    assert evidence_means(slower, [root]).means["loud"] == 93.0


def test_a_campaign_with_failed_trials_is_evidence_and_a_timeout_bound_says_so(tmp_path, monkeypatch):
    """Issue 45: the plan predicted 12:54 for a campaign that took 2:34. Two causes, both found on
    the committed campaigns: a campaign that ended with failed trials was not evidence (mechanisms:
    9 of 96 failed, so its playbook got the default model, 1:38:58 for 0:13:45 of trials), and the
    default model's per-trial time for a workload other than the RayTracer is its timeout_s, an
    upper bound that the plan printed as an estimate."""
    path = REPO / "playbooks" / "command-example.yaml"
    pb = load_playbook(path)
    ev = evidence_means(pb, [tmp_path / "none"])
    assert ev.bounded == frozenset(c.name for c in pb.conditions)
    root = tmp_path / "campaigns"
    store = create(pb, path, root / "with-failures", trials=2)
    now = time.time()
    for r in store.trials():
        if r.condition == "congestion fifo" and not r.warmup:  # every timed trial of one condition failed
            store.record(r.idx, status="failed", error="boom", started=now, finished=now + 90.0)
        else:
            store.record(r.idx, status="done", valid=1, elapsed_s=2.0, started=now, finished=now + 3.0)
    store.close()
    ev = evidence_means(pb, [root])
    assert ev.means["no congestion fifo"] == 3.0 and "with-failures (same playbook" in ev.source
    assert ev.means["congestion fifo"] == 3.0 and not ev.bounded  # its warm-up was done
    monkeypatch.chdir(tmp_path)  # the CLI: no evidence here, so every ETA is a bound, and capture: off shows off
    code, out, err = _main(["campaign", "plan", str(path)])
    assert code == 0, err
    assert "at most 0:07:05" in out and "at most 0:28:52" in out and "at most 60.7" in out
    rows = [line for line in out.splitlines() if line.startswith("│ congestion thesis")]
    assert rows and rows[-1].rstrip("│ ").endswith("off"), rows


def test_user_text_with_markup_characters_is_printed_as_text(tmp_path):
    """A condition named like rich markup ('[/]', '[bold]') is printed as written, never parsed."""
    data = yaml.safe_load(TABLE5.read_text())
    data["conditions"][0]["name"] = "no congestion [/] fifo"
    data["baseline"] = "no congestion [/] fifo"
    data["conditions"][1]["name"] = "[bold]congested[/bold]"
    p = tmp_path / "pb.yaml"
    p.write_text(yaml.safe_dump(data))
    code, out, err = _main(["campaign", "plan", str(p)])
    assert code == 0, err
    assert "no congestion [/] fifo" in out and "[bold]congested[/bold]" in out


def test_the_plan_names_a_workload_held_at_c1_and_the_derivation():
    """The machine made different on purpose (issue 48) shows in the plan: the workload's JIT and
    the derive: block; the C1 playbook is thesis-faithful-cpu-onmachine's with only name, text,
    seed and ``jit`` changed."""
    c1 = REPO / "playbooks" / "thesis-faithful-cpu-onmachine-c1.yaml"
    rows = dict(make_plan(c1).references)
    assert rows["workload"].endswith("supersample 2, JIT C1 only (-XX:TieredStopAtLevel=1)")
    assert rows["derive"].startswith("from playbooks/scale/thesis-cluster-cpu.yaml before the trials")
    base = yaml.safe_load((REPO / "playbooks" / "thesis-faithful-cpu-onmachine.yaml").read_text())
    other = yaml.safe_load(c1.read_text())
    assert other["workload"].pop("jit") == "c1" and other["seed"] != base["seed"]
    assert {k for k in base if base[k] != other[k]} == {"name", "description", "seed"}
    assert "JIT" not in dict(make_plan(REPO / "playbooks" / "thesis-faithful-cpu-onmachine.yaml").references)[
        "workload"]
