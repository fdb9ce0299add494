"""Deadlocked runs in tables and plots: statistics of an empty measurement window are None
(never 0), tables print "deadlock", plots mark the point with a cross at its offered load.

The contract (the engine's side): a deadlocked run's JSON has ``deadlock`` (an object),
``saturated: true``, and ``null`` for the statistics of an empty window. Engines of 0.1 report
those as 0; :func:`flitsim.results.measured` reads both the same way.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict

import pyarrow as pa
import pytest

import flitsim
from flitsim.cli import format_summary, format_sweep_table
from flitsim.results import measured, per_sl_rows, summary_row, summary_schema
from helpers import TINY_CONFIG, invoke

# A minhop torus with one VL deadlocks at load 0.9 before its long warm-up ends (seed 1).
DEADLOCKING = ['routing.engine="minhop"', "routing.vls=1", "run.stall_cycles=300",
               "run.warmup=3000"]
LOADS = [0.1, 0.9]

LATENCY_NULL = {"mean": None, "p50": None, "p99": None, "max": None, "count": 0}


def deadlocked_summary() -> Dict[str, Any]:
    """A hand-made summary of a run that deadlocked in warm-up, as the contract has it."""
    return {
        "version": "0.2.0", "seed": 1, "config_hash": "0" * 16, "topology": "torus-4x4",
        "routing": "minhop", "cycles": {"warmup": 3000, "measure": 1000, "total": 787},
        "endpoints": 16, "offered_load": None, "accepted_load": None, "saturated": True,
        "drained": False, "latency": dict(LATENCY_NULL), "network_latency": dict(LATENCY_NULL),
        "hops_mean": None, "flits": {"generated": 900, "delivered": 100, "remaining": 800},
        "per_sl": [{"sl": 0, "name": "BE", "offered_load": None, "accepted_load": None,
                    "share": None, "latency": dict(LATENCY_NULL),
                    "network_latency": dict(LATENCY_NULL)}],
        "latency_histogram": [],
        "deadlock": {"cycle": 787, "last_progress": 487, "blocked": [
            {"switch": "sw0_0", "in_port": 0, "vl": 0, "out_port": 3, "out_vl": 0}]},
        "performance": {"wall_seconds": 0.01, "cycles_per_second": 1e5, "flit_hops": 10,
                        "flit_hops_per_second": 1e3},
    }


def zeroed(summary: Dict[str, Any]) -> Dict[str, Any]:
    """The same run as engines of 0.1 report it: zeros instead of nulls."""
    old = copy.deepcopy(summary)
    old.update(offered_load=0.0, accepted_load=0.0, hops_mean=0.0)
    for block in [old, *old["per_sl"]]:
        for name in ("latency", "network_latency"):
            block[name] = {"mean": 0.0, "p50": 0, "p99": 0, "max": 0, "count": 0}
    for c in old["per_sl"]:
        c.update(offered_load=0.0, accepted_load=0.0, share=0.0)
    return old


@pytest.mark.parametrize("make", [deadlocked_summary, lambda: zeroed(deadlocked_summary())],
                         ids=["null", "zeros"])
def test_an_empty_window_has_null_statistics(make):
    summary = make()
    m = measured(summary)
    assert m["offered_load"] is None and m["accepted_load"] is None
    assert m["latency"]["mean"] is None and m["per_sl"][0]["share"] is None
    row = summary_row(summary)
    assert row["deadlock"] is True
    for key in ("offered_load", "accepted_load", "latency_mean", "latency_p99", "hops_mean",
                "sl.BE.accepted_load", "sl.BE.latency_mean"):
        assert row[key] is None, key
    assert all(v is None for k, v in per_sl_rows(summary)[0].items()
               if k not in ("sl", "name"))


def test_null_statistics_make_typed_nullable_columns():
    table = pa.Table.from_pylist([summary_row(deadlocked_summary())],
                                 schema=summary_schema([], deadlocked_summary()))
    for key in ("offered_load", "accepted_load", "latency_mean", "sl.BE.share"):
        assert table.schema.field(key).type == pa.float64()
        assert table[key].null_count == 1


def test_run_summary_prints_deadlock():
    text = format_summary(deadlocked_summary(), title="x.toml")
    assert "offered load      deadlock" in text
    assert "accepted load     deadlock" in text
    assert "latency           deadlock (no packet measured)" in text
    assert "BE         deadlock: nothing measured" in text
    assert " 0.0000" not in text
    assert format_summary(zeroed(deadlocked_summary())) == format_summary(deadlocked_summary())


def test_sweep_table_prints_deadlock():
    rows = [{"traffic.load": 0.1, **summary_row(_live())},
            {"traffic.load": 0.9, **summary_row(deadlocked_summary())}]
    lines = format_sweep_table(rows, ["traffic.load"]).splitlines()
    assert lines[0].split()[-1] == "deadlock"
    assert lines[1].split()[-1] == "0/1"
    assert lines[2].split() == ["0.9", "1", "deadlock", "deadlock", "1/1", "1/1"]


def _live() -> Dict[str, Any]:
    return json.loads(flitsim.run(TINY_CONFIG, sets=["run.measure=300"]).to_json())


@pytest.fixture(scope="module")
def deadlock_sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dl") / "out"
    flitsim.sweep(TINY_CONFIG, vary={"traffic.load": LOADS}, seeds=[1], out=out,
                  sets=DEADLOCKING, jobs=2)
    return out


def test_a_real_deadlock_is_stored_as_null(deadlock_sweep: Path):
    rows = flitsim.load_sweep(deadlock_sweep).summary.to_pylist()
    assert [r["deadlock"] for r in rows] == [False, True]
    assert rows[1]["saturated"] is True
    assert rows[1]["accepted_load"] is None and rows[1]["latency_mean"] is None
    assert rows[0]["accepted_load"] > 0


def test_cli_sweep_and_run_print_deadlock(deadlock_sweep: Path, tiny_config: Path, runner,
                                          tmp_path: Path):
    sets = [a for s in DEADLOCKING for a in ("--set", s)]
    result = invoke(runner, "sweep", tiny_config, "--vary", "traffic.load=0.1,0.9", *sets,
                    "--out", tmp_path / "s")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[2].split()[:4] == ["0.9", "1", "deadlock", "deadlock"]
    result = invoke(runner, "run", tiny_config, *sets, "--set", "traffic.load=0.9")
    assert result.exit_code == 0, result.stderr
    assert "accepted load     deadlock" in result.stdout


def test_report_prints_deadlock(deadlock_sweep: Path, tmp_path: Path):
    pytest.importorskip("matplotlib")
    from flitsim.report import render_report

    html = render_report(deadlock_sweep)
    assert '<td class="num">deadlock</td>' in html


def _crosses(fig) -> list:
    """(x, y) of the deadlock crosses drawn in ``fig`` (y in axes coordinates)."""
    from flitsim._plots.common import DEADLOCK_STYLE

    return [xy for ax in fig.axes for line in ax.get_lines()
            if line.get_marker() == DEADLOCK_STYLE["marker"]
            for xy in zip(line.get_xdata(), line.get_ydata())]


def test_plots_mark_deadlocked_points_at_their_offered_load(deadlock_sweep: Path):
    pytest.importorskip("matplotlib")
    from flitsim._plots.common import DEADLOCK_LABEL, DEADLOCK_Y
    from flitsim.plot import figures

    figs = figures(deadlock_sweep)
    for name in ("latency_vs_load", "accepted_vs_offered", "sl_latency_vs_offered",
                 "sl_share_vs_offered"):
        fig = figs[name]
        assert (0.9, DEADLOCK_Y) in _crosses(fig), name
        labels = [t.get_text() for ax in fig.axes if ax.get_legend()
                  for t in ax.get_legend().get_texts()]
        labels += [t.get_text() for leg in fig.legends for t in leg.get_texts()]
        assert DEADLOCK_LABEL in labels, name
        # No data point of the deadlocked run sits at 0.
        for ax in fig.axes:
            for line in ax.get_lines():
                if line.get_marker() in ("o", "s", "^", "D"):
                    assert 0.0 not in list(line.get_ydata()), name


def test_bars_never_show_a_deadlocked_share_as_zero():
    pytest.importorskip("matplotlib")
    from flitsim.plot import sl_throughput_figure
    from flitsim.results import histogram_rows

    live = _live()
    rows = [({"traffic.load": 0.1}, live), ({"traffic.load": 0.9}, deadlocked_summary())]
    sweep = SimpleNamespace(
        summary=[{**p, "seed": 1, **summary_row(s)} for p, s in rows],
        per_sl=[{**p, "seed": 1, **r} for p, s in rows for r in per_sl_rows(s)],
        histogram=[{**p, "seed": 1, **r} for p, s in rows for r in histogram_rows(s)],
        vary={"traffic.load": [0.1, 0.9]}, spec={"seeds": [1]},
    )
    fig = sl_throughput_figure(sweep)
    heights = [patch.get_height() for patch in fig.axes[0].patches]
    assert 0.0 not in heights and len(heights) == 1
    assert len(_crosses(fig)) == 1
