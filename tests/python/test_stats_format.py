"""flitsim.stats (the public statistics of a sweep) and flitsim._format (the one formatter)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

import flitsim
from flitsim import _format, stats

PACKAGE = Path(flitsim.__file__).parent


def test_mean_ci_student_t():
    e = stats.mean_ci([1.0, 2.0, 3.0, None, float("nan")])
    assert (e.mean, e.n) == (2.0, 3)
    assert e.half == pytest.approx(4.302652729 * 1.0 / math.sqrt(3), rel=1e-9)
    assert (e.low, e.high) == (e.mean - e.half, e.mean + e.half)
    assert math.isnan(stats.mean_ci([5]).half)
    assert math.isnan(stats.mean_ci([]).mean)
    assert stats.t_quantile(0.975, 2) == pytest.approx(4.302652729, rel=1e-9)
    assert stats.t_cdf(0.0, 5) == pytest.approx(0.5)


def test_plot_reexports_the_stats_module():
    from flitsim import plot

    for name in ("mean_ci", "summarize", "summarize_per_sl", "Estimate", "t_quantile",
                 "load", "CONFIDENCE"):
        assert getattr(plot, name) is getattr(stats, name)


@pytest.mark.parametrize("module", ["report.py", "demo.py", "plot.py", "cli.py"])
def test_no_module_imports_private_helpers_of_a_public_one(module):
    """report/demo/plot/cli take what they share from public modules (stats, values) or the
    package's private ones (_core, _format, _cli), never `from .plot import _helper`."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            if node.module.startswith("_"):
                continue
            private = [a.name for a in node.names if a.name.startswith("_")]
            assert not private, (module, node.module, private)


def test_summarize_a_sweep(tmp_path, tiny_text):
    flitsim.sweep(tiny_text, vary={"traffic.load": [0.1, 0.2]}, seeds=2, jobs=2,
                  sets=["run.measure=300", "run.warmup=100"], out=tmp_path / "s")
    sweep = stats.load(tmp_path / "s")
    points = stats.summarize(sweep)
    assert [p["point"] for p in points] == [{"traffic.load": 0.1}, {"traffic.load": 0.2}]
    assert all(p["seeds"] == 2 and p["accepted_load"].n == 2 for p in points)
    per_sl = stats.summarize_per_sl(sweep)
    assert [(e["point"]["traffic.load"], e["name"]) for e in per_sl] == [(0.1, "BE"), (0.2, "BE")]
    assert stats.vary_of(sweep) == {"traffic.load": [0.1, 0.2]}
    assert stats.seeds_of(sweep) == [1, 2]
    assert stats.directory_of(sweep) == tmp_path / "s"
    with pytest.raises(flitsim.FlitsimError, match="not found"):
        stats.load(tmp_path / "nothing")


def test_formatter():
    assert _format.fixed(0.5, 2) == "0.50"
    assert _format.fixed(1234.5, 0) == "1234"
    assert _format.fixed(None, 1) == "-"
    assert _format.fixed(float("nan"), 1) == "nan"
    assert _format.fixed(float("nan"), 1, nonfinite=_format.DASH) == "–"
    assert _format.fixed(False, 1) == "no"
    assert _format.with_ci(stats.Estimate(1.0, 0.25, 3), 2) == "1.00 ± 0.25"
    assert _format.with_ci(stats.Estimate(1.0, math.nan, 1), 2) == "1.00"
    assert _format.with_ci(stats.Estimate(math.nan, math.nan, 0), 2) == "–"
    assert _format.row(("a", "b", "c"), (3, 3, 3), left=2) == "a   b     c"
    assert _format.row(("a", "1"), (4, 3), sep="") == "a     1"
    # Directory names of a sweep are built from value_label: these must never change.
    assert [_format.value_label(v) for v in (0.1, 1e-7, 3, True, "dor", [4, 4], [[1, 2], 3])] \
        == ["0.1", "1e-07", "3", "true", "dor", "4x4", "1x2x3"]
    assert _format.value_label({"kind": "rr"}) == '{ kind = "rr" }'
    assert _format.short_label("x" * 70) == "x" * 57 + "..."
    assert _format.short_label(0.30000000000000004) == "0.3"
