"""flitsim.plot: the per-SL figures against the total offered load (Figs. 3-4 of the
Omni-Path QoS paper): one panel per scheduler, one line per SL."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

pytest.importorskip("matplotlib")

import flitsim  # noqa: E402
from flitsim.plot import (  # noqa: E402
    ALL_PLOT_NAMES,
    FIGURES,
    PLOT_NAMES,
    SL_PLOT_NAMES,
    figures,
    plot_sweep,
    sl_latency_vs_offered_figure,
    sl_share_vs_offered_figure,
    summarize,
    summarize_per_sl,
)
from helpers import QOS_CONFIG, TINY_CONFIG  # noqa: E402
from sweep_tables import make_sweep, run_tables  # noqa: E402

SCHEDULERS = ["rr", "dtable"]
LOADS = [0.3, 0.6, 0.9]
SL_LABELS = ["SL 0 small", "SL 1 big"]
NEW_FIGURES = {
    "sl_latency_vs_offered": sl_latency_vs_offered_figure,
    "sl_share_vs_offered": sl_share_vs_offered_figure,
}


@pytest.fixture(scope="module")
def qos_dir(tmp_path_factory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("qos") / "out", config=QOS_CONFIG,
                      vary={"qos.scheduler": SCHEDULERS, "traffic.load": LOADS}, seeds=2)


@pytest.fixture(scope="module")
def qos_sweep(qos_dir: Path):
    return flitsim.load_sweep(qos_dir)


def panels(fig) -> List[Any]:
    return [ax for ax in fig.axes if ax.get_visible()]


def sl_lines(ax) -> Dict[str, Any]:
    """The data line of each SL in a panel, by its label."""
    lines = {ln.get_label(): ln for ln in ax.get_lines() if ln.get_label().startswith("SL ")}
    assert len(lines) == len([ln for ln in ax.get_lines()
                              if ln.get_label().startswith("SL ")]), "one line per SL"
    return lines


def reference_lines(ax) -> Dict[str, Any]:
    prefix = "offered share, "
    return {ln.get_label()[len(prefix):]: ln for ln in ax.get_lines()
            if ln.get_label().startswith(prefix)}


def legend_texts(fig) -> List[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def raw_means(sweep, column: str) -> Dict[Tuple[str, float, str], float]:
    """Mean over seeds of a per_sl column, by (scheduler, load, SL name), straight from the
    rows (independent of flitsim.plot's statistics)."""
    sums: Dict[Tuple[str, float, str], List[float]] = {}
    for r in sweep.per_sl.to_pylist():
        key = (r["qos.scheduler"], r["traffic.load"], r["name"])
        sums.setdefault(key, []).append(r[column])
    return {k: math.fsum(v) / len(v) for k, v in sums.items()}


def raw_total_offered(sweep) -> Dict[Tuple[str, float], float]:
    sums: Dict[Tuple[str, float], List[float]] = {}
    for r in sweep.summary.to_pylist():
        sums.setdefault((r["qos.scheduler"], r["traffic.load"]), []).append(r["offered_load"])
    return {k: math.fsum(v) / len(v) for k, v in sums.items()}


# -- registration -------------------------------------------------------------------------


def test_new_figures_are_registered():
    assert SL_PLOT_NAMES == tuple(NEW_FIGURES)
    assert ALL_PLOT_NAMES == PLOT_NAMES + SL_PLOT_NAMES
    for name, fn in NEW_FIGURES.items():
        assert FIGURES[name] is fn


# -- layout: one panel per scheduler, one line per SL --------------------------------------


@pytest.mark.parametrize("name", list(NEW_FIGURES))
def test_one_panel_per_scheduler_and_one_line_per_sl(qos_sweep, name):
    fig = NEW_FIGURES[name](qos_sweep)
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == [f"qos.scheduler={s}" for s in SCHEDULERS]
    total = raw_total_offered(qos_sweep)
    for ax, sched in zip(axes, SCHEDULERS):
        lines = sl_lines(ax)
        assert sorted(lines) == sorted(SL_LABELS)
        for line in lines.values():
            # x: the total offered load of each point (all SLs), in increasing order.
            assert list(line.get_xdata()) == pytest.approx(
                [total[(sched, load)] for load in LOADS], rel=1e-9)
        assert ax.get_xlabel() == "offered load, all SLs [flits/cycle/endpoint]"
    texts = legend_texts(fig)
    assert all(label in texts for label in SL_LABELS)
    assert "saturated" in texts
    assert "total offered load" in fig._suptitle.get_text()
    assert "mean over 2 seeds" in fig._suptitle.get_text()


def test_latency_lines_are_the_per_sl_means(qos_sweep):
    fig = sl_latency_vs_offered_figure(qos_sweep, log_y=False)
    means = raw_means(qos_sweep, "latency_mean")
    for ax, sched in zip(panels(fig), SCHEDULERS):
        for label, line in sl_lines(ax).items():
            name = label.split()[-1]
            assert list(line.get_ydata()) == pytest.approx(
                [means[(sched, load, name)] for load in LOADS], rel=1e-9)
        assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    log = sl_latency_vs_offered_figure(qos_sweep, log_y=True)
    assert all(ax.get_yscale() == "log" for ax in panels(log))
    assert "(log scale)" in panels(log)[0].get_ylabel()


def test_message_latency_metric_draws_the_per_sl_message_latency_means(qos_sweep):
    fig = sl_latency_vs_offered_figure(qos_sweep, log_y=False, metric="message_latency_mean")
    means = raw_means(qos_sweep, "message_latency_mean")
    for ax, sched in zip(panels(fig), SCHEDULERS):
        for label, line in sl_lines(ax).items():
            name = label.split()[-1]
            assert list(line.get_ydata()) == pytest.approx(
                [means[(sched, load, name)] for load in LOADS], rel=1e-9)
        assert "message latency" in ax.get_ylabel()
    with pytest.raises(ValueError, match="metric"):
        sl_latency_vs_offered_figure(qos_sweep, metric="jitter_std")


def test_share_lines_are_the_per_sl_share_means(qos_sweep):
    fig = sl_share_vs_offered_figure(qos_sweep)
    means = raw_means(qos_sweep, "share")
    per_sl = {(e["point"]["qos.scheduler"], e["point"]["traffic.load"], e["name"]): e
              for e in summarize_per_sl(qos_sweep)}
    top = 0.0
    for ax, sched in zip(panels(fig), SCHEDULERS):
        for label, line in sl_lines(ax).items():
            name = label.split()[-1]
            ys = list(line.get_ydata())
            assert ys == pytest.approx([means[(sched, load, name)] for load in LOADS],
                                       rel=1e-9)
            assert ys == pytest.approx(
                [per_sl[(sched, load, name)]["share"].mean for load in LOADS], rel=1e-12)
            top = max([top] + [per_sl[(sched, load, name)]["share"].high for load in LOADS])
        # Shares of one point add up to 1.
        ys = [sl_lines(ax)[label].get_ydata() for label in SL_LABELS]
        assert [a + b for a, b in zip(*ys)] == pytest.approx([1.0] * len(LOADS), abs=1e-9)
    low, high = panels(fig)[0].get_ylim()
    assert low == 0 and top < high <= top * 1.2


def test_share_reference_is_the_offered_split_at_the_highest_load(qos_sweep):
    fig = sl_share_vs_offered_figure(qos_sweep)
    offered = raw_means(qos_sweep, "offered_load")
    total = raw_total_offered(qos_sweep)
    for ax, sched in zip(panels(fig), SCHEDULERS):
        refs = reference_lines(ax)
        assert sorted(refs) == sorted(SL_LABELS)
        for label, line in refs.items():
            name = label.split()[-1]
            y = line.get_ydata()
            assert y[0] == y[-1] == pytest.approx(
                offered[(sched, LOADS[-1], name)] / total[(sched, LOADS[-1])], rel=1e-9)
            assert line.get_linestyle() == "--"
        # The configured split 1:3, up to the randomness of the injection.
        assert refs["SL 0 small"].get_ydata()[0] == pytest.approx(0.25, abs=0.03)
        assert refs["SL 1 big"].get_ydata()[0] == pytest.approx(0.75, abs=0.03)
        assert refs["SL 0 small"].get_color() == sl_lines(ax)["SL 0 small"].get_color()
    assert "offered share (highest load)" in legend_texts(fig)


@pytest.mark.parametrize("name", list(NEW_FIGURES))
def test_saturated_points_are_hollow(qos_sweep, name):
    fig = NEW_FIGURES[name](qos_sweep)
    per_sl = summarize_per_sl(qos_sweep)
    total = {e["key"]: e["offered_load"].mean for e in summarize(qos_sweep)}
    for ax, sched in zip(panels(fig), SCHEDULERS):
        hollow = sorted(float(x) for ln in ax.get_lines()
                        if ln.get_linestyle() == "None" and ln.get_markerfacecolor() == "white"
                        for x in ln.get_xdata())
        expected = sorted(total[e["key"]] for e in per_sl
                          if e["point"]["qos.scheduler"] == sched and e["saturated"] > 0)
        assert expected, "the sweep saturates at its highest load"
        assert hollow == pytest.approx(expected, rel=1e-9)


# -- plot_sweep and figures() --------------------------------------------------------------


def test_plot_sweep_writes_the_new_figures(qos_dir: Path, tmp_path: Path):
    paths = plot_sweep(qos_dir, dest=tmp_path / "imgs", formats=["png", "svg"])
    assert [p.name for p in paths] == [f"{n}.{f}" for n in ALL_PLOT_NAMES
                                       for f in ("png", "svg")]
    for name in SL_PLOT_NAMES:
        png = (tmp_path / "imgs" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
        svg = (tmp_path / "imgs" / f"{name}.svg").read_text(encoding="utf-8")
        assert "<svg" in svg
    figs = figures(qos_dir)
    assert list(figs) == list(ALL_PLOT_NAMES)
    # Two panels side by side: the PNG is as wide as two of the usual panels.
    assert figs["sl_share_vs_offered"].get_size_inches()[0] == pytest.approx(2 * 5.6)


# -- degenerate sweeps: never crash --------------------------------------------------------


def test_a_single_sl_gives_one_line_in_one_panel():
    sweep = run_tables(TINY_CONFIG, loads=(0.2, 0.5), seeds=(1,))
    for name, fn in NEW_FIGURES.items():
        fig = fn(sweep)
        (ax,) = panels(fig)
        assert ax.get_title() == ""
        (line,) = sl_lines(ax).values()
        assert line.get_label() == "SL 0 BE"
        assert len(line.get_xdata()) == 2
        if name == "sl_share_vs_offered":
            assert list(line.get_ydata()) == pytest.approx([1.0, 1.0])
            assert ax.get_ylim()[1] > 1.0
        assert not ax.collections  # one seed: no band


def test_without_a_load_axis_each_scheduler_is_a_panel_of_single_points(tmp_path: Path):
    out = make_sweep(tmp_path / "no-load", config=QOS_CONFIG,
                     vary={"qos.scheduler": SCHEDULERS}, seeds=1)
    for fn in NEW_FIGURES.values():
        fig = fn(out)
        axes = panels(fig)
        assert [ax.get_title() for ax in axes] == [f"qos.scheduler={s}" for s in SCHEDULERS]
        for ax in axes:
            lines = sl_lines(ax)
            assert sorted(lines) == sorted(SL_LABELS)
            assert all(len(ln.get_xdata()) == 1 for ln in lines.values())
            assert all(ln.get_xdata()[0] == pytest.approx(0.3, abs=0.03)
                       for ln in lines.values())
