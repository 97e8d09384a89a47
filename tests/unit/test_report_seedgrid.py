"""Seed 002's grid beside its Figure 2 (qoslab.report.seedgrid, and its choice in report.seeds)."""

from __future__ import annotations

import pytest

from qoslab.report.mechanisms import SEED002_FIG2
from qoslab.report.seedgrid import grid_rows, grid_summary, grid_table, levels_of
from qoslab.report.seeds import sections


def _conds(times: dict[tuple[str, int, int], float], extra: str = "none / fifo") -> dict:
    return {f"mechanism {m} / servers {s} / size {n} / {extra}": {"mean": t, "n": 3} for (m, s, n), t in times.items()}


def test_levels_are_read_back_from_a_generated_name():
    assert levels_of("mechanism corba / servers 4 / size 100000 / none / fifo") == \
        {"mechanism": "corba", "servers": "4", "size": "100000"}


def test_rows_keep_only_idle_fifo_cells_of_seed002s_mechanisms():
    conds = {**_conds({("socket", 2, 20000): 0.5, ("rmi", 2, 20000): 0.6, ("corba", 2, 20000): 0.7}),
             **_conds({("socket", 2, 20000): 9.0}, "campaign-flood / fifo"),
             **_conds({("rmi", 2, 20000): 9.0}, "none / thesis"),
             "mechanism datagram / servers 2 / size 20000 / none / fifo": {"mean": 1.0}}
    assert grid_rows(conds) == {(2, 20000): {"socket": 0.5, "rmi": 0.6, "corba": 0.7}}


def test_missing_labels_take_the_playbooks_settings():
    conds = {"mechanism socket / none / fifo": {"mean": 1.0}, "mechanism rmi / none / fifo": {"mean": 2.0}}
    assert grid_rows(conds, 4, 100000) == {(4, 100000): {"socket": 1.0, "rmi": 2.0}}


def test_table_and_summary_compare_each_cell_with_figure2():
    # Figure 2 at 2 servers, 20,000: socket 4373, RMI 2305, CORBA 2548 -> rmi < corba < socket
    # at 8 servers, 20,000: 1295, 1270, 1500 -> rmi < socket < corba
    rows = {(2, 20000): {"socket": 0.9, "rmi": 0.5, "corba": 0.6},   # the whole ordering agrees
            (8, 20000): {"socket": 0.5, "rmi": 0.6, "corba": 0.7},   # fastest differs
            (3, 20000): {"socket": 1.0, "rmi": 1.0, "corba": 1.0}}   # no such cell in Figure 2
    t = grid_table(rows).set_index("servers")
    assert t.loc[2, "measured order"] == "rmi < corba < socket" == t.loc[2, "Figure 2 order"]
    assert t.loc[2, "fastest agrees"] == "yes" and t.loc[8, "fastest agrees"] == "no"
    assert t.loc[3, "Figure 2 order"] == "-" and t.loc[3, "fastest agrees"] == "-"
    assert t.loc[2, "corba / socket"] == f"{0.6 / 0.9:.2f} ({2548 / 4373:.2f})"
    s = grid_summary(rows)
    corba = (0.6 / 0.7 + 0.7 / 0.55) / 2
    assert "Of 2 cells of Figure 2 measured, the fastest mechanism agrees in 1 and the whole ordering in 1" in s
    assert f"{corba:.2f}x" in s
    assert SEED002_FIG2[2][20000] == (4373, 2305, 2548)


def test_sections_choose_the_grid_for_a_sort_campaign_over_several_cells():
    conds = _conds({(m, s, 20000): 1.0 + i for i, m in enumerate(("socket", "rmi", "corba")) for s in (2, 4)})
    [(title, text, table)] = sections({"conditions": conds, "factorial": None}, {"workload": {"kind": "sort"}}, {})
    assert "grid" in title and len(table) == 2 and "Of 2 cells" in text


@pytest.mark.parametrize("kind", ["matmul", "mpj", "command"])
def test_other_workloads_get_no_grid(kind):
    conds = _conds({(m, s, 20000): 1.0 for m in ("socket", "rmi", "corba") for s in (2, 4)})
    assert all("grid" not in t for t, _x, _y in sections({"conditions": conds, "factorial": None},
                                                         {"workload": {"kind": kind}}, {}))
