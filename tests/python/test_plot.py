"""flitsim.plot: statistics over seeds, the figures, plot_sweep's files."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import flitsim  # noqa: E402
from flitsim import FlitsimError  # noqa: E402
from flitsim.plot import (  # noqa: E402
    ALL_PLOT_NAMES,
    DPI,
    figures,
    latency_cdf_figure,
    latency_vs_load_figure,
    mean_ci,
    plot_sweep,
    sl_throughput_figure,
    summarize,
    summarize_per_sl,
    t_quantile,
)
from helpers import TINY_CONFIG  # noqa: E402
from sweep_tables import make_sweep, run_tables, table_sweep  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    """Two classes, loads 0.2 / 0.5 / 0.9 (the last saturates), 2 seeds."""
    return make_sweep(tmp_path_factory.mktemp("sweep") / "out")


def png_size(data: bytes):
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# -- statistics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "df, expected",
    [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (9, 2.2622), (30, 2.0423),
     (1000, 1.9623)],
)
def test_t_quantile_matches_the_tables(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)
    assert t_quantile(0.025, df) == pytest.approx(-expected, abs=5e-4)


def test_mean_ci_of_three_seeds():
    # mean 12, sample standard deviation 2, t(0.975, 2) = 4.302653
    est = mean_ci([10.0, 12.0, 14.0])
    assert est.mean == pytest.approx(12.0)
    assert est.half == pytest.approx(4.302653 * 2.0 / math.sqrt(3.0), rel=1e-5)
    assert est.n == 3
    assert (est.low, est.high) == pytest.approx((12.0 - est.half, 12.0 + est.half))


def test_mean_ci_one_value_has_no_interval_and_missing_values_are_skipped():
    one = mean_ci([5.0, None, float("nan")])
    assert one.mean == 5.0 and one.n == 1 and math.isnan(one.half)
    none = mean_ci([None])
    assert none.n == 0 and math.isnan(none.mean)
    assert mean_ci([3.0, 3.0]).half == 0.0


def hand_made(seeds=(1, 2, 3), latencies=None):
    """Two loads × len(seeds) seeds × one SL with known latencies, rows out of order."""
    latencies = latencies or {0.2: [10.0, 12.0, 14.0], 0.6: [40.0, 50.0, 60.0]}
    summary, per_sl, hist = [], [], []
    for load in (0.6, 0.2):  # not grid order: summarize must sort
        for seed, lat in zip(seeds, latencies[load]):
            prefix = {"traffic.load": load, "seed": seed, "config_hash": "x", "version": "t"}
            summary.append(dict(prefix, offered_load=load, accepted_load=load * 0.99,
                                saturated=load > 0.5, drained=True, deadlock=False,
                                latency_mean=lat, latency_p99=2 * lat,
                                network_latency_mean=lat - 1))
            per_sl.append(dict(prefix, sl=0, name="BE", offered_load=load,
                               accepted_load=load * 0.99, share=1.0, latency_mean=lat,
                               latency_p50=lat, latency_p99=2 * lat))
            hist += [dict(prefix, sl=0, name="BE", latency=int(lat) + d, count=10)
                     for d in range(3)]
    return table_sweep(summary, per_sl, hist, {"traffic.load": [0.2, 0.6]}, list(seeds))


def test_summarize_means_and_intervals_per_point_in_grid_order():
    points = summarize(hand_made())
    assert [p["point"] for p in points] == [{"traffic.load": 0.2}, {"traffic.load": 0.6}]
    low, high = points
    assert low["seeds"] == 3 and low["saturated"] == 0 and high["saturated"] == 3
    assert low["latency_mean"].mean == pytest.approx(12.0)
    assert low["latency_mean"].half == pytest.approx(4.302653 * 2 / math.sqrt(3), rel=1e-5)
    assert high["latency_mean"].mean == pytest.approx(50.0)
    assert high["latency_mean"].half == pytest.approx(4.302653 * 10 / math.sqrt(3), rel=1e-5)
    assert low["latency_p99"].mean == pytest.approx(24.0)
    per_sl = summarize_per_sl(hand_made())
    assert [(e["point"]["traffic.load"], e["name"]) for e in per_sl] == [(0.2, "BE"), (0.6, "BE")]
    assert per_sl[1]["latency_mean"].mean == pytest.approx(50.0)
    # Accepted is 99 % of offered: within the default 5 % tolerance, so not saturated.
    assert per_sl[1]["saturated"] == 0


def test_latency_band_is_the_t_interval():
    fig = latency_vs_load_figure(hand_made(), log_y=False)
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
    assert list(line.get_ydata()) == pytest.approx([12.0, 50.0])
    # Fewer than two stable points: no band, an error bar of mean ± half at each point.
    half_low = 4.302653 * 2 / math.sqrt(3)
    half_high = 4.302653 * 10 / math.sqrt(3)
    bars = [c for c in ax.collections if c.__class__.__name__ == "LineCollection"]
    assert bars, "points without error bars"
    segments = [seg for c in bars for seg in c.get_segments()]
    ys = sorted(y for seg in segments for _, y in seg)
    assert ys == pytest.approx(
        [12.0 - half_low, 12.0 + half_low, 50.0 - half_high, 50.0 + half_high], rel=1e-5
    )
    # With both points stable, the band polygon reaches exactly mean ± half at each point.
    stable = hand_made()
    stable.summary = stable.summary.set_column(
        stable.summary.schema.get_field_index("saturated"), "saturated",
        [[False] * stable.summary.num_rows])
    fig = latency_vs_load_figure(stable, log_y=False)
    polys = [c for c in fig.axes[0].collections if c.__class__.__name__ in
             ("PolyCollection", "FillBetweenPolyCollection")]
    assert len(polys) == 1
    ys = sorted({round(float(y), 6) for _, y in polys[0].get_paths()[0].vertices})
    assert ys == pytest.approx(sorted({12 - half_low, 12 + half_low, 50 - half_high,
                                       50 + half_high}), rel=1e-5)


def test_no_band_with_one_seed():
    one = hand_made(seeds=(1,), latencies={0.2: [10.0], 0.6: [40.0]})
    fig = latency_vs_load_figure(one, log_y=False)
    assert not fig.axes[0].collections
    assert "mean over 1 seed" in fig._suptitle.get_text()


def test_figures_from_in_memory_tables_of_real_runs():
    from sweep_tables import TWO_CLASS_CONFIG

    sweep = run_tables(TWO_CLASS_CONFIG, loads=(0.3, 0.9), seeds=(1, 2))
    figs = figures(sweep)
    assert list(figs) == list(ALL_PLOT_NAMES)
    # Latency vs load: one line per SL, labelled in the legend.
    legend = [t.get_text() for t in figs["latency_vs_load"].axes[0].get_legend().get_texts()]
    assert "SL 0 hi" in legend and "SL 1 lo" in legend and "saturated" in legend
    ax = figs["latency_vs_load"].axes[0]
    assert ax.get_xlabel() == "accepted load per SL [flits/cycle/endpoint]"
    assert "latency [cycles]" in ax.get_ylabel()
    # Share bars: 2 points × 2 SLs, shares summing to 1 per point.
    bars = [p for p in sl_throughput_figure(sweep).axes[0].patches
            if p.__class__.__name__ == "Rectangle"]
    heights = [b.get_height() for b in bars]
    assert len(heights) == 4
    assert heights[0] + heights[1] == pytest.approx(1.0, abs=0.02)


def test_cdf_picks_highest_stable_and_highest_load(sweep_dir: Path):
    sweep = flitsim.load_sweep(sweep_dir)
    fig = latency_cdf_figure(sweep)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == [
        "traffic.load=0.5  (highest non-saturated)",
        "traffic.load=0.9  (highest, saturated)",
    ]
    for ax in fig.axes[:2]:
        curves = [ln for ln in ax.get_lines() if len(ln.get_ydata()) > 2]
        assert len(curves) == 2  # hi and lo
        for c in curves:
            y = c.get_ydata()
            assert y[0] == 0.0 and y[-1] == pytest.approx(1.0)
            assert all(b >= a for a, b in zip(y, y[1:]))


# -- plot_sweep ---------------------------------------------------------------------------


def test_plot_sweep_writes_png_and_svg_of_each_figure(sweep_dir: Path):
    paths = plot_sweep(sweep_dir)
    expected = [sweep_dir / "plots" / f"{n}.{f}" for n in ALL_PLOT_NAMES
                for f in ("png", "svg")]
    assert paths == expected
    sizes = {n: fig.get_size_inches() for n, fig in figures(sweep_dir).items()}
    for path in paths:
        data = path.read_bytes()
        assert len(data) > 20_000, path
        if path.suffix == ".png":
            width, height = png_size(data)
            w_in, h_in = sizes[path.stem]
            assert (width, height) == (round(w_in * DPI), round(h_in * DPI))
            assert 800 <= width <= 2000 and 500 <= height <= 1500
        else:
            text = data.decode("utf-8")
            assert text.lstrip().startswith("<?xml") and "<svg" in text
            assert "latency" in text or "load" in text


def test_plot_sweep_formats_and_destination(sweep_dir: Path, tmp_path: Path):
    paths = plot_sweep(sweep_dir, dest=tmp_path / "imgs", formats=["png"])
    assert [p.name for p in paths] == [f"{n}.png" for n in ALL_PLOT_NAMES]
    assert all(p.parent == tmp_path / "imgs" and p.is_file() for p in paths)
    with pytest.raises(FlitsimError, match="format"):
        plot_sweep(sweep_dir, dest=tmp_path, formats=["gif"])


def test_second_varied_key_gets_one_panel_per_value(tmp_path: Path):
    out = make_sweep(tmp_path / "two-keys", config=TINY_CONFIG,
                     vary={"traffic.load": [0.2, 0.5], "routing.vls": [2, 4]}, seeds=1)
    fig = latency_vs_load_figure(out)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["routing.vls=2", "routing.vls=4"]
    for ax in panels:
        assert not ax.collections  # one seed: no band
        (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
        assert len(line.get_xdata()) == 2
    paths = plot_sweep(out, formats=("png",))
    assert len(paths) == len(ALL_PLOT_NAMES)


def test_not_a_sweep_directory(tmp_path: Path):
    with pytest.raises(FlitsimError, match="not found"):
        plot_sweep(tmp_path / "missing")
    with pytest.raises(FlitsimError, match="sweep"):
        plot_sweep(tmp_path)


def test_missing_matplotlib_is_a_clear_error(sweep_dir: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'flitsim\[plot\]'"):
        plot_sweep(sweep_dir, dest=sweep_dir / "never")
