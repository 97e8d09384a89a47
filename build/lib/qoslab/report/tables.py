"""The report's statistics tables (pure, helpers of ``analysis/notebooks/report.py``): one row
per condition of a stats.json section, its comparisons (tests, effect sizes, TOST) and Table 5
beside the thesis's. Values are in the metric's unit (stats.json's ``metric``; seconds for the
built-in workloads), printed with ``places`` decimals (three for seconds); the Java tool's keys
keep their ``_s`` suffix whatever the unit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from .lib import Kind, ci, pfmt, recovery_cell, thesis_kind


def cond_table(s: Mapping[str, Any], names: Iterable[str], unit: str = "s", places: int = 3) -> pd.DataFrame:
    """One row per condition of ``names`` from a stats.json section ``s``: n, mean, sd, median
    (floats in ``unit``), CI (``places`` decimals), CV, Shapiro-Wilk, Tukey outliers (formatted),
    and the published values when present (thesis)."""
    rows = []
    f = f"{{:.{places}f}}"
    for name in names:
        d = s["conditions"][name]
        r = {"condition": name, "n": d["n"], f"mean {unit}": d["mean"], f"sd {unit}": d["sd"],
             "95% BCa CI of mean": ci(d["ci95"], f), f"median {unit}": d["median"], "CV": f"{d['cv']:.1%}",
             "Shapiro-Wilk W (p)": "n/a" if d.get("shapiro_w") is None
             else f"{d['shapiro_w']:.3f} ({pfmt(d['shapiro_p'])})",
             "Tukey outliers low / high": f"{d['outliers_low']} / {d['outliers_high']}"}
        if "published_mean" in d:
            r["published mean"] = d["published_mean"]
            r["published sd"] = d["published_sd"]
            r["sd as published?"] = "yes" if d["sd_matches_published"] else "NO (raw data differ)"
        rows.append(r)
    return pd.DataFrame(rows)


#: What a table cell says for a statistic stats.json has as null because neither condition varies
#: (``not_computable`` of the comparison, issue 45).
NOT_COMPUTABLE = "not computable (no spread)"


def num(v: float | None, spec: str) -> str:
    """``v`` formatted with ``spec``, or :data:`NOT_COMPUTABLE` for None (pure)."""
    return NOT_COMPUTABLE if v is None else format(v, spec)


def comparison_tables(s: Mapping[str, Any], kinds: Mapping[str, Kind], unit: str = "s", places: int = 3
                      ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(tests, effects, tost) frames of a stats.json section's comparisons, one row per
    comparison "b vs a" (all formatted strings, differences in ``unit`` with ``places``
    decimals); TOST only for pairs of uncongested conditions ("does the profile cost anything
    without congestion")."""
    tests, effects, tost = [], [], []
    f, u = f"{{:.{places}f}}", unit
    for c in s["comparisons"]:
        same_uncongested = c["a"] in kinds and c["b"] in kinds and not kinds[c["a"]][0] and not kinds[c["b"]][0]
        name = f"{c['b']} vs {c['a']}"
        tests.append({"comparison": name, f"difference {u}": f"{c['difference_s']:+.{places}f}",
                      "Welch t (df)": NOT_COMPUTABLE if c["welch_t"] is None
                      else f"{c['welch_t']:.2f} ({c['welch_df']:.1f})",
                      "Welch p": _p(c, "welch_t_p"), "Welch p, Holm": _p(c, "welch_t_p_holm"),
                      "Mann-Whitney p": _p(c, "mann_whitney_p"), "MW p, Holm": _p(c, "mann_whitney_p_holm"),
                      "MW method": c["mann_whitney_method"] or "identical samples"})
        effects.append({"comparison": name,
                        f"difference {u} [95% BCa]": f"{c['difference_s']:+.{places}f} "
                                                     f"[{ci(c['difference_ci95_s'], f)}]",
                        "ratio [95% BCa]": f"{c['ratio']:.3f} [{ci(c['ratio_ci95'])}]",
                        "Cohen's d": num(c["cohens_d"], "+.2f"), "Hedges' g": num(c["hedges_g"], "+.2f"),
                        f"Hodges-Lehmann {u} [95%]": f"{c['hodges_lehmann_s']:+.{places}f} "
                                                     f"[{ci(c['hodges_lehmann_ci95_s'], f)}]",
                        "P(b > a)": f"{c['prob_superiority']:.2f}",
                        "MDE (80% power)": NOT_COMPUTABLE if c["mde_s"] is None
                        else f"{c['mde_s']:.{places}f} {u} ({c['mde_rel']:.1%})"})
        t = c["tost"]
        if same_uncongested and t is None:
            tost.append({"comparison": name, "margin": "", f"90% CI of difference {u}": "", "TOST p": "",
                         "verdict": NOT_COMPUTABLE})
        elif same_uncongested:  # a profile against fifo without congestion (stats.json has every pair)
            tost.append({"comparison": name,
                         "margin": f"+-{t['margin_s']:.{places}f} {u} ({t['margin_rel']:.0%} of {t['reference']})",
                         f"90% CI of difference {u}": ci(t["ci90_s"], f), "TOST p": pfmt(t["p"]),
                         "verdict": "equivalent" if t["equivalent"] else "not shown equivalent"})
    return pd.DataFrame(tests), pd.DataFrame(effects), pd.DataFrame(tost)


def _p(c: Mapping[str, Any], key: str) -> str:
    """A comparison's p-value cell: "n/a" for an absent one, :data:`NOT_COMPUTABLE` for one that
    is null because neither condition varies."""
    return NOT_COMPUTABLE if c.get(key) is None and c.get("not_computable") else pfmt(c.get(key))


def thesis_side_tables(main: Mapping[str, Any], th: Mapping[str, Any], order: Sequence[str],
                       kinds: Mapping[str, Kind]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5 of a campaign (stats.json ``main``) beside the thesis's (``th``: stats-thesis.json's
    table5), conditions matched by kind: (conditions with n, mean, sd, x baseline and the recovery
    rows; comparisons with Cohen's d, ratio and the thesis's MDE). Strings; "" where the thesis
    has no counterpart. ``order[0]`` is the campaign's baseline."""
    tnames = {thesis_kind(n): n for n in th["conditions"]}
    base_t, base_c = th["conditions"][tnames[(False, False)]]["mean"], main["conditions"][order[0]]["mean"]
    rows = []
    for n in order:
        tn = tnames.get(kinds[n])
        d = main["conditions"][n]
        r = {"condition": n, "campaign n": str(d["n"]), "campaign mean s": f"{d['mean']:.3f}",
             "campaign sd s": f"{d['sd']:.3f}", "campaign x baseline": f"{d['mean'] / base_c:.2f}"}
        if tn:
            t = th["conditions"][tn]
            r.update({"thesis condition": tn, "thesis n": str(t["n"]), "thesis mean s": f"{t['mean']:.2f}",
                      "thesis sd s": f"{t['sd']:.2f}", "thesis x baseline": f"{t['mean'] / base_t:.2f}"})
        rows.append(r)
    for rc in main.get("recovery", []):
        rt = th["recovery"][0]
        rows.append({"condition": f"recovery of {rc['treated']} [95% BCa]", "campaign mean s": recovery_cell(rc),
                     "thesis condition": f"recovery of {rt['treated']}", "thesis mean s": recovery_cell(rt)})
    drows = []
    for c in main["comparisons"]:
        tc = next((x for x in th["comparisons"]
                   if tnames.get(kinds[c["a"]]) == x["a"] and tnames.get(kinds[c["b"]]) == x["b"]), None)
        drows.append({"comparison": f"{c['b']} vs {c['a']}", "campaign Cohen's d": num(c["cohens_d"], "+.2f"),
                      "campaign ratio [95% BCa]": f"{c['ratio']:.3f} [{ci(c['ratio_ci95'])}]",
                      "thesis Cohen's d": f"{tc['cohens_d']:+.2f}" if tc else "",
                      "thesis ratio [95% BCa]": f"{tc['ratio']:.3f} [{ci(tc['ratio_ci95'])}]" if tc else "",
                      "thesis MDE": f"{tc['mde_s']:.2f} s ({tc['mde_rel']:.1%})" if tc else ""})
    return pd.DataFrame(rows).astype(object).fillna(""), pd.DataFrame(drows)
