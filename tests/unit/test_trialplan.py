"""The trial plan (qoslab.campaign.trialplan): one condition resolved, purely, into what its trials
do, and the same plans in ``campaign plan`` and in the runner's TrialEnv."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from conftest import REPO
from qoslab.campaign import load_playbook
from qoslab.campaign.preview import make_plan
from qoslab.campaign.trialplan import LIFETIME_MARGIN_S, TrialPlan, config_hash, plan_trial, ports_of
from qoslab.errors import QoslabError
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trials.playbook import resolve_path

QUICK = REPO / "playbooks" / "quick.yaml"


def _inputs(pb):
    topo = load_topology(resolve_path(pb.topology))
    floods = {ref: load_flood(resolve_path(ref)) for ref in pb.floods()}
    profiles = {c.profile: load_profile(c.profile) for c in pb.conditions}
    return topo, floods, profiles


def test_a_congested_condition_resolves_flows_ports_profile_and_capture():
    pb = load_playbook(QUICK)
    topo, floods, profiles = _inputs(pb)
    plan = plan_trial(pb, pb.condition("congestion thesis"), topo, floods, profiles)
    assert plan.congestion and plan.workload_kind == "raytracer" and plan.flood is not None
    assert len(plan.flows) == 4 and {f.dst for f in plan.flows} == {"jp-1", "jp-2", "jp-3", "jp-4"}
    assert plan.hosts[:4] == ("jp-1", "jp-2", "jp-3", "jp-4") and set(plan.hosts[4:]) == {f.src for f in plan.flows}
    assert plan.ports == tuple(ports_of(topo, plan.hosts)) and len(plan.ports) == 8
    assert plan.flooded_ports == ("Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/4")
    assert plan.flood_sources == tuple(sorted(f.src for f in plan.flows))
    assert plan.settle_share == pytest.approx(0.95 * 0.95)  # make run's flood fills 0.95 of its ports
    lines = render(profiles["thesis"], topo, {"workload": ["jp-1", "jp-2", "jp-3", "jp-4"]})
    assert list(plan.profile_lines) == lines and plan.config_hash == config_hash(lines)
    assert plan.capture_host == "jp-1" and plan.capture_ip == topo.host("jp-1").ip
    assert plan.capture_ifname == "Gi1-0-21"
    assert plan.lifetime_s == pb.trial_timeout_s + LIFETIME_MARGIN_S


def test_an_uncongested_condition_has_no_flows_and_only_the_workload_ports():
    pb = load_playbook(QUICK)
    topo, floods, profiles = _inputs(pb)
    plan = plan_trial(pb, pb.condition("no congestion fifo"), topo, floods, profiles)
    assert plan.flood is None and plan.flows == () and plan.flooded_ports == () and plan.flood_sources == ()
    assert plan.ports == ("Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/4")
    fifo = plan_trial(pb, pb.condition("congestion fifo"), topo, floods, profiles)
    assert plan.config_hash == fifo.config_hash != plan_trial(
        pb, pb.condition("congestion thesis"), topo, floods, profiles).config_hash


def test_a_pattern_floods_hosts_are_in_the_plan(write_yaml):
    """An incast flood (a ``pattern:``, no explicit flows): its sources' ports are read by the switch
    meter too (they came from the definition's explicit flows only before the plan)."""
    pb = load_playbook(QUICK)
    topo, _, profiles = _inputs(pb)
    incast = load_flood(REPO / "traffic-gen" / "incast.yaml")
    ref = pb.flood_of(pb.condition("congestion fifo"))
    plan = plan_trial(pb, pb.condition("congestion fifo"), topo, {ref: incast}, profiles)
    srcs = {f.src for f in plan.flows}
    assert srcs and srcs <= set(plan.hosts) and set(ports_of(topo, list(srcs))) <= set(plan.ports)
    assert plan.settle_share == pytest.approx(0.95 * 0.9)


def test_missing_references_are_named():
    pb = load_playbook(QUICK)
    topo, floods, profiles = _inputs(pb)
    with pytest.raises(QoslabError, match="flood traffic-gen/quick-flood.yaml is not among"):
        plan_trial(pb, pb.condition("congestion fifo"), topo, {}, profiles)
    with pytest.raises(QoslabError, match="profile thesis is not among"):
        plan_trial(pb, pb.condition("congestion thesis"), topo, floods, {"fifo": profiles["fifo"]})


def test_planning_reads_no_file(monkeypatch):
    """Pure: once its inputs are loaded (and the IOS template compiled, as Jinja2 keeps it),
    planning opens nothing."""
    pb = load_playbook(QUICK)
    topo, floods, profiles = _inputs(pb)
    plan_trial(pb, pb.conditions[0], topo, floods, profiles)

    def refuse(*a, **k):
        raise AssertionError(f"plan_trial opened a file: {a[:1]}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(Path, "read_text", refuse)
    plans = [plan_trial(pb, c, topo, floods, profiles) for c in pb.conditions]
    assert all(isinstance(p, TrialPlan) for p in plans)


def test_campaign_plan_and_the_runner_use_the_same_plans():
    """``qoslab campaign plan`` prints what the runner's TrialEnv executes."""
    from qoslab.campaign.trialenv import TrialEnv

    pb = load_playbook(QUICK)
    topo, floods, _ = _inputs(pb)
    ref = pb.floods()[0]
    env = TrialEnv(pb=pb, topo=topo, out=Path("/nonexistent"), testbed=None, executor_of=lambda h: None,  # type: ignore[arg-type,return-value]
                   switch=None, flood=floods[ref], floods=floods)  # type: ignore[arg-type]
    preview = make_plan(QUICK, seed=1)
    for c in preview.conditions:
        assert env.plan_of(pb.condition(c.name)) == c.trial
        assert env.plan_of(pb.condition(c.name)) is env.plan_of(pb.condition(c.name))  # resolved once
    assert dict(c.trial.describe())["profile"].startswith(c.trial.profile.name)
