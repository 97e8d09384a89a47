"""The scale-model sweep: one campaign playbook run at several link rates.

The link rate lives in the topology, so a sweep file names a playbook and the rates; for each rate
the sweep writes a **topology variant** (the playbook's topology with ``link.rate`` replaced and the
name suffixed with the rate, e.g. ``ecenet`` at 20 Mbit/s -> ``ecenet20m``: its own namespaces,
its own flood calibration) into the rate's campaign folder and runs the playbook on it as an
ordinary campaign (resumable, statistics, report). Everything else stays as the topology has it:
HTB burst in milliseconds at the link rate, buffers in bytes (a switch's buffer is bytes, so a full
128 KiB queue is 105 ms at 10 Mbit/s and 21 ms at 50 Mbit/s), a flood rate given as a multiple
of the link rate (``1.1x``) scales with it.

A sweep file (``playbooks/sweeps/rate.yaml``)::

    name: sweep-rate
    playbook: playbooks/quick.yaml     # the campaign run at every rate
    rates: [10Mbit, 20Mbit, 50Mbit]    # link rates (bits/s or 50Mbit-style)
    overrides: {trials: 15}            # playbook fields set for every rate
    seed: 7                            # one trial order for every rate (drawn and recorded when absent)

The sweep folder holds ``sweep.yaml`` (resolved: seed recorded), ``rate-<RATE>/`` (a campaign
folder each, with its ``topology.yaml``), and ``sweep.json`` / ``sweep.md``: per rate and treated
profile the slowdown under the reference profile, the recovery of render time and of network wait
(BCa 95 % intervals from the campaign's statistics) and the flood's CPU cost (``cpu_*`` columns).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from ..errors import ConfigError, QoslabError
from ..trials.playbook import Playbook, folder_name, resolve_path
from ..trials.store import Store, TrialRow
from ..units import parse_rate
from ..yamlio import StrictModel, dump_yaml, load_model, read_yaml
from .checks import load_playbook
from .folder import create


class Sweep(StrictModel):
    """A link-rate sweep (see the module doc). ``rates`` in bits/s."""

    name: str
    description: str = ""
    playbook: str
    rates: list[int] = Field(..., min_length=1)
    overrides: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = Field(None, ge=0, lt=2**63)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return folder_name("sweep name", v)

    @field_validator("rates", mode="before")
    @classmethod
    def _rates(cls, v: object) -> list[int]:
        if not isinstance(v, list):
            raise ValueError("rates must be a list, e.g. [10Mbit, 20Mbit, 50Mbit]")
        out = [parse_rate(r) for r in v]
        if len(set(out)) != len(out):
            raise ValueError("a rate is listed twice")
        return out


def rate_label(bps: int) -> str:
    """Folder-safe label of a rate: ``10Mbit``, ``2.5Mbit``, ``1Gbit``, ``500kbit``. Pure."""
    for unit, mult in (("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3)):
        if bps >= mult:
            return f"{bps / mult:g}{unit}"
    return f"{bps}bit"


def variant_name(base: str, bps: int) -> str:
    """Topology name of ``base`` at ``bps``: ``ecenet`` at 20 Mbit/s -> ``ecenet20m`` (topology
    names are at most 12 lower-case letters/digits). Raises QoslabError when it does not fit. Pure."""
    name = f"{base}{bps}b"
    for suffix, mult in (("g", 10**9), ("m", 10**6), ("k", 10**3)):
        if bps % mult == 0:
            name = f"{base}{bps // mult}{suffix}"
            break
    if len(name) > 12:
        raise QoslabError(f"topology {base!r} at {rate_label(bps)}: name {name!r} is over 12 characters; "
                          "use a shorter topology name for a sweep")
    return name


def variant_topology(data: dict[str, Any], bps: int) -> dict[str, Any]:
    """Topology file data (as read from YAML) at link rate ``bps`` under :func:`variant_name`. Pure."""
    link = {**(data.get("link") or {}), "rate": bps}
    desc = f"{data.get('description', '')} [sweep variant at {rate_label(bps)}]".strip()
    return {**data, "name": variant_name(data["name"], bps), "description": desc, "link": link}


def load_sweep(path: str | Path) -> Sweep:
    """Read a sweep file and check its playbook and overrides. Raises ConfigError naming the file
    and field."""
    sw = load_model(path, Sweep)
    base_playbook(sw, path)
    return sw


def base_playbook(sw: Sweep, path: str | Path = "sweep") -> Playbook:
    """The sweep's playbook with its overrides applied (validated). Raises ConfigError."""
    pb = load_playbook(resolve_path(sw.playbook))
    try:
        return Playbook.model_validate({**pb.model_dump(), **sw.overrides})
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(map(str, err["loc"]))
        raise ConfigError(f"{path}: overrides.{loc}: {err['msg'].removeprefix('Value error, ')}") from None


def prepare(sw: Sweep, out: Path) -> Sweep:
    """Make (or re-open) the sweep folder ``out``: ``sweep.yaml`` with the seed recorded. Returns
    the resolved sweep. Raises QoslabError when ``out`` holds a different sweep."""
    saved = out / "sweep.yaml"
    if saved.exists():
        old = load_model(saved, Sweep)
        if old.model_dump(exclude={"seed"}) != sw.model_dump(exclude={"seed"}) or \
                (sw.seed is not None and sw.seed != old.seed):
            raise QoslabError(f"{out} holds another sweep ({saved} differs from this sweep file): "
                              "give another --out")
        return old
    out.mkdir(parents=True, exist_ok=True)
    sw = sw.model_copy(update={"seed": sw.seed if sw.seed is not None else random.SystemRandom().randrange(2**31)})
    saved.write_text(dump_yaml(sw.model_dump(mode="json")))
    return sw


def rate_folder(out: Path, bps: int) -> Path:
    """The campaign folder of one rate in the sweep folder ``out``."""
    return out / f"rate-{rate_label(bps)}"


def ensure_rate_campaign(sw: Sweep, out: Path, bps: int) -> Path:
    """The campaign folder of rate ``bps`` (made when missing: topology variant, playbook on it,
    the sweep's seed); returns it. Raises ConfigError/QoslabError for a bad topology."""
    folder = rate_folder(out, bps)
    if (folder / "trials.sqlite").exists():
        return folder
    pb = base_playbook(sw)
    data, _ = read_yaml(resolve_path(pb.topology))
    folder.mkdir(parents=True, exist_ok=True)
    topo = folder / "topology.yaml"
    topo.write_text(dump_yaml(variant_topology(data, bps)))
    from ..topology import load_topology

    load_topology(topo)  # validated as any topology file (errors name the file)
    pb = pb.model_copy(update={"name": f"{sw.name}-{rate_label(bps)}", "topology": str(topo.resolve()),
                               "seed": sw.seed})
    create(pb, resolve_path(sw.playbook), folder).close()
    return folder


def _cell(stats: dict, name: str) -> dict | None:
    return stats.get("conditions", {}).get(name)


def _cpu_means(db: Path, cond: str) -> dict[str, float | None]:
    with Store(db, readonly=True) as st:
        rows = [r for r in st.trials(status="done", condition=cond, warmup=False)
                if (r.get("cpu_window_s") or 0) > 0]
    if not rows:
        return {}

    def share(r: TrialRow, col: str) -> float | None:
        v = r.get(col)
        return None if v is None else v / r.get("cpu_window_s")

    busiest = [(r.busy_max_s - r.get("cpu_busiest_worker_s")) if r.busy_max_s is not None
               and r.get("cpu_busiest_worker_s") is not None else None for r in rows]
    mean = mean_of
    flows = [f["received_wire_bps"] for r in rows if r.flood_json for f in json.loads(r.flood_json)]
    sat = [json.loads(r.phases_json).get("saturated") for r in rows if r.phases_json]
    return {"flood_cores": mean([share(r, "cpu_flood_s") for r in rows]),
            "softirq_cores": mean([share(r, "cpu_softirq_s") for r in rows]),
            "cpu_wait_s": mean([max(b, 0.0) if b is not None else None for b in busiest]),
            "flood_received_bps": mean(flows), "saturated": mean([float(s) for s in sat if s is not None]),
            "trial_wall_s": sum(r.finished - r.started for r in rows
                                if r.finished is not None and r.started is not None),
            "outside_cores": mean([share(r, "cpu_outside_s") for r in rows])}


def rate_rows(folder: Path, bps: int) -> list[dict[str, Any]]:
    """Rows of the sweep table for one finished rate campaign (one per recovery in its stats.json):
    means (s), slowdown of the congested reference profile and recoveries (ratio, BCa 95 %), the
    flood's and softirq's CPU (cores, over the workload window), the busiest worker's wait for a
    core (s), the flood's received rate per flow (bits/s) and the share of trials whose flooded
    ports were saturated. [] when the campaign has no statistics yet."""
    try:
        st = json.loads((folder / "stats.json").read_text())
    except OSError:
        return []
    net_path = folder / "stats-network.json"
    net = json.loads(net_path.read_text()) if net_path.exists() else {}
    rows = []
    for rec in st.get("recovery", []):
        base, cong, treat = rec["baseline"], rec["congested"], rec["treated"]
        comp: dict[str, Any] = next((c for c in st.get("comparisons", []) if c["a"] == base and c["b"] == cong), {})
        nrec: dict[str, Any] = next((r for r in net.get("recovery", [])
                                     if r["treated"] == treat and r["congested"] == cong), {})
        cells = {k: _cell(st, n) for k, n in (("base", base), ("cong", cong), ("treat", treat))}
        row: dict[str, Any] = {
            "rate": rate_label(bps), "rate_bps": bps, "baseline": base, "congested": cong, "treated": treat,
            "n": min((c or {}).get("n", 0) for c in cells.values()),
            **{f"{k}_mean_s": (c or {}).get("mean") for k, c in cells.items()},
            "slowdown": comp.get("ratio"), "slowdown_ci95": comp.get("ratio_ci95"),
            "recovery": rec.get("ratio"), "recovery_ci95": rec.get("ci95"),
            "recovery_network": nrec.get("ratio"), "recovery_network_ci95": nrec.get("ci95")}
        c_cong, c_treat, c_base = (_cpu_means(folder / "trials.sqlite", n) for n in (cong, treat, base))
        received = c_cong.get("flood_received_bps")
        row.update({"flood_cores": c_cong.get("flood_cores"), "softirq_cores_congested": c_cong.get("softirq_cores"),
                    "softirq_cores_baseline": c_base.get("softirq_cores"),
                    "cpu_wait_treated_s": c_treat.get("cpu_wait_s"), "cpu_wait_baseline_s": c_base.get("cpu_wait_s"),
                    "flood_received_of_link": received / bps if received else None,
                    "saturated": c_cong.get("saturated"),
                    "outside_cores": mean_of([c.get("outside_cores") for c in (c_cong, c_treat, c_base)]),
                    "trial_wall_s": sum(c.get("trial_wall_s") or 0.0 for c in (c_cong, c_treat, c_base))})
        rows.append(row)
    return rows


def mean_of(vals: list[float | None]) -> float | None:
    """The mean of the values that are not None (None when there are none). Pure."""
    v = [x for x in vals if x is not None]
    return sum(v) / len(v) if v else None


def _pct(v: float | None, ci: list | None = None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.1%}" + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")


def _num(v: float | None, fmt: str = "{:.3f}") -> str:
    return "n/a" if v is None else fmt.format(v)


#: The sweep table's columns: header -> row formatter.
TABLE = {
    "link": lambda r: r["rate"].replace("bit", "bit/s").replace("Mbit", " Mbit").replace("Gbit", " Gbit")
    .replace("kbit", " kbit"),
    "n": lambda r: str(r["n"]),
    "baseline s": lambda r: _num(r["base_mean_s"]),
    "congested fifo s": lambda r: _num(r["cong_mean_s"]),
    "congested treated s": lambda r: _num(r["treat_mean_s"]),
    "slowdown": lambda r: _num(r["slowdown"], "{:.2f}x") + (
        f" [{r['slowdown_ci95'][0]:.2f}, {r['slowdown_ci95'][1]:.2f}]" if r.get("slowdown_ci95") else ""),
    "recovery (render)": lambda r: _pct(r["recovery"], r.get("recovery_ci95")),
    "recovery (network wait)": lambda r: _pct(r["recovery_network"], r.get("recovery_network_ci95")),
    "flood CPU (cores)": lambda r: _num(r["flood_cores"], "{:.2f}"),
    "softirq (cores) cong / none": lambda r: f"{_num(r['softirq_cores_congested'], '{:.2f}')} / "
                                             f"{_num(r['softirq_cores_baseline'], '{:.2f}')}",
    "busiest worker waits for a core (s) treated / baseline": lambda r: f"{_num(r['cpu_wait_treated_s'])} / "
                                                                         f"{_num(r['cpu_wait_baseline_s'])}",
    "flood received / link": lambda r: _num(r["flood_received_of_link"], "{:.2f}"),
    "ports saturated": lambda r: _pct(r["saturated"]),
    "outside load (cores)": lambda r: _num(r.get("outside_cores"), "{:.2f}"),
}


def sweep_markdown(rows: list[dict[str, Any]]) -> str:
    """The sweep table as Markdown (one line per rate and treated profile). Pure."""
    head = "| " + " | ".join(TABLE) + " |\n|" + " --- |" * len(TABLE) + "\n"
    return head + "".join("| " + " | ".join(f(r) for f in TABLE.values()) + " |\n" for r in rows)


def summarize_sweep(sw: Sweep, out: Path) -> list[dict[str, Any]]:
    """Rows of every finished rate (in the sweep's rate order), written to ``sweep.json`` and
    ``sweep.md`` in ``out``; returns them."""
    rows = [r for bps in sw.rates for r in rate_rows(rate_folder(out, bps), bps)]
    (out / "sweep.json").write_text(json.dumps({"sweep": sw.model_dump(mode="json"), "rows": rows}, indent=1))
    (out / "sweep.md").write_text(sweep_markdown(rows))
    return rows
