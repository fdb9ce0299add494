"""Plots of a load sweep.

:func:`plot_sweep` reads a sweep directory (written by :func:`flitsim.sweep`) and draws six
figures, each saved as ``<name>.png`` (120 dpi) and ``<name>.svg`` in ``OUT/plots/``:

``latency_vs_load``
    Mean end-to-end latency against accepted load, one line per service level (SL; the total
    when there is one), with the 95 % confidence band of the mean over seeds (Student t; no
    band with one seed) over the stable points and error bars at saturated ones, which are
    drawn hollow. Log scale when latencies span more than a factor of 20. A sweep that varies
    more than the load gets one panel (or line style) per value of the other keys.
``accepted_vs_offered``
    Accepted against offered load, in total and per SL (each against its own offered load),
    with the ``y = x`` reference line.
``sl_throughput``
    Each SL's share of the accepted traffic at each load point, as grouped bars, with a tick at
    the SL's share of the offered traffic.
``latency_cdf``
    Latency distribution per SL from the histograms, seeds merged, at the highest load that
    did not saturate and at the highest load.
``sl_latency_vs_offered``
    Mean latency of each SL against the *total* offered load of the point (all SLs), one
    panel per value of the other varied keys (e.g. ``qos.scheduler``), as Fig. 3 of the
    Omni-Path QoS paper (Cano-Cano et al. 2022). Band, error bars, hollow saturated points and
    log scale as in ``latency_vs_load``.
``sl_share_vs_offered``
    Each SL's share of the accepted traffic (normalized throughput) against the total offered
    load, same panels, as Fig. 4 of that paper, with a dashed line at the SL's share of the
    offered traffic (at the highest load) to show whether the scheduler delivers the split.

The first four (:data:`PLOT_NAMES`) are also embedded in the HTML report; all six
(:data:`ALL_PLOT_NAMES`) are drawn by :func:`figures` and written by :func:`plot_sweep`.

The figure builders (:func:`latency_vs_load_figure` …) take anything with the attributes of
:class:`flitsim.SweepResult` (``summary``, ``per_sl``, ``histogram`` pyarrow Tables, ``vary``,
``spec``) and return a :class:`matplotlib.figure.Figure` drawn with the Agg canvas, without
touching pyplot's global state. The statistics they draw (:func:`mean_ci`,
:func:`summarize`, :func:`summarize_per_sl`) live in :mod:`flitsim.stats` and are re-exported
here.

matplotlib is optional (``pip install 'flitsim[plot]'``); it is imported only when a figure is
drawn.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import FlitsimError
from ._format import short_label as _fmt_value
from .stats import (
    CONFIDENCE,
    LOAD_KEY,
    Estimate,
    Point,
    SweepSource,
    load,
    mean_ci,
    summarize,
    summarize_per_sl,
    t_cdf,
    t_quantile,
)
from .stats import SweepGrid as _Grid
from .stats import directory_of as _directory_of
from .stats import rows_of as _rows
from .stats import seeds_of as _seeds_of
from .stats import sl_order as _sl_order
from .stats import vary_of as _vary_of

__all__ = [
    "ALL_PLOT_NAMES",
    "PLOT_NAMES",
    "SL_PLOT_NAMES",
    "Estimate",
    "accepted_vs_offered_figure",
    "figures",
    "latency_cdf_figure",
    "latency_vs_load_figure",
    "load",
    "mean_ci",
    "plot_sweep",
    "save_figure",
    "save_figures",
    "sl_latency_vs_offered_figure",
    "sl_share_vs_offered_figure",
    "sl_throughput_figure",
    "summarize",
    "summarize_per_sl",
    "t_cdf",
    "t_quantile",
]

# The figures embedded in the HTML report (flitsim.report has a title and caption for each).
PLOT_NAMES = ("latency_vs_load", "accepted_vs_offered", "sl_throughput", "latency_cdf")
# Per-SL figures against the total offered load, one panel per scheduler (or other varied key).
SL_PLOT_NAMES = ("sl_latency_vs_offered", "sl_share_vs_offered")
# Everything figures() draws and plot_sweep writes, in this order.
ALL_PLOT_NAMES = PLOT_NAMES + SL_PLOT_NAMES
DPI = 120
LOAD_LABEL = "[flits/cycle/endpoint]"
LATENCY_LABEL = "latency [cycles]"

MAX_PANELS = 6
MAX_BAR_POINTS = 12
MAX_CDF_ROWS = 3
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D")
SL_COLORS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
)
TOTAL_COLOR = "#222222"
MATPLOTLIB_MISSING = "plotting needs matplotlib: pip install 'flitsim[plot]'"


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _matplotlib():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except ImportError as e:
        raise ImportError(MATPLOTLIB_MISSING) from e
    return Figure, FigureCanvasAgg, Line2D, Patch


def _figure(size: Tuple[float, float]):
    """An empty figure of ``size`` inches on the Agg canvas, with constrained layout."""
    Figure, FigureCanvasAgg, _, _ = _matplotlib()
    try:
        fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    except TypeError:  # matplotlib < 3.6
        fig = Figure(figsize=size, dpi=DPI, constrained_layout=True)
    FigureCanvasAgg(fig)
    return fig


def _new_figure(panels: int, *, width: float = 5.6, height: float = 4.3, single=(8.0, 5.2)):
    ncols = min(panels, 3) if panels > 1 else 1
    nrows = max(1, math.ceil(panels / ncols))
    size = single if panels == 1 else (width * ncols, height * nrows + 0.4)
    fig = _figure(size)
    # Panels share their axes so that groups compare at a glance.
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.set_visible(False)
    return fig, flat[:panels]


def _label(keys: Sequence[str], values: Sequence[Any]) -> str:
    return ", ".join(f"{k}={_fmt_value(v)}" for k, v in zip(keys, values))


class _Layout:
    """How a sweep's points map to panels and line styles of a figure."""

    def __init__(self, grid: _Grid, points: Sequence[Point]) -> None:
        self.grid = grid
        groups: List[Point] = []
        for p in points:
            g = grid.group(p)
            if g not in groups:
                groups.append(g)
        if not groups:
            groups = [()]
        gk = grid.group_keys
        if len(groups) <= MAX_PANELS:
            self.panel_keys, self.style_keys = list(gk), []
            cut = len(gk)
        else:
            self.panel_keys, self.style_keys = gk[:1], gk[1:]
            cut = 1
        self._cut = cut
        panels: List[Point] = []
        styles: List[Point] = []
        for g in groups:
            if g[:cut] not in panels:
                panels.append(g[:cut])
            if g[cut:] not in styles:
                styles.append(g[cut:])
        self.hidden = max(0, len(panels) - MAX_PANELS) + max(0, len(styles) - len(LINESTYLES))
        self.panels = panels[:MAX_PANELS]
        self.styles = styles[: len(LINESTYLES)]

    def where(self, point: Point) -> Tuple[Optional[int], Optional[int]]:
        g = self.grid.group(point)
        pi = self.panels.index(g[: self._cut]) if g[: self._cut] in self.panels else None
        si = self.styles.index(g[self._cut:]) if g[self._cut:] in self.styles else None
        return pi, si

    def panel_title(self, i: int) -> str:
        return _label(self.panel_keys, self.panels[i])

    def style_label(self, i: int) -> str:
        return _label(self.style_keys, self.styles[i])


def _plain_log_axis(axis: Any, subs: Sequence[float] = (1.0, 2.0, 5.0)) -> None:
    """Label a log axis with plain numbers (10, 20, 50, 100 …) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10.0, subs=tuple(subs)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _sl_color(index: int) -> str:
    return SL_COLORS[index % len(SL_COLORS)]


def _sl_label(sl: Any, name: str) -> str:
    return f"SL {sl} {name}".rstrip()


def _subtitle(sweep: Any, hidden: int = 0, what: Optional[str] = "band") -> str:
    seeds = _seeds_of(sweep)
    n = len(seeds)
    text = f"mean over {n} seed{'s' if n != 1 else ''}"
    if n > 1 and what:
        text += f"; {what}: {CONFIDENCE:.0%} confidence interval of the mean (Student t)"
    if hidden:
        text += f"; {hidden} further group(s) not shown"
    return text


def _series_label(grid: _Grid) -> str:
    if grid.series_key == LOAD_KEY:
        return f"offered load {LOAD_LABEL}"
    return grid.series_key or ""


def _line(ax, xs, ys, halves, sat, *, color, ls, marker, label=None, band=True):
    """A line with filled markers, hollow ones where saturated, and a CI band."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    h = np.asarray(halves, dtype=float)
    s = np.asarray(sat, dtype=bool)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return
    x, y, h, s = x[ok], y[ok], h[ok], s[ok]
    ax.plot(x, y, color=color, ls=ls, lw=1.6, label=label)
    if band and np.isfinite(h).any():
        # The band spans the stable (non-saturated) points; saturated points, whose
        # accepted load may fall back and whose latency grows with the run length, get
        # error bars instead.
        hh = np.where(np.isfinite(h), h, 0.0)
        lo = y - hh
        if ax.get_yscale() == "log":
            lo = np.maximum(lo, y * 0.05)
        stable = ~s
        if stable.sum() >= 2:
            ax.fill_between(x[stable], lo[stable], (y + hh)[stable], color=color,
                            alpha=0.18, lw=0)
        bars = s if stable.sum() >= 2 else np.ones_like(s)
        bars = bars & (hh > 0)
        if bars.any():
            ax.errorbar(x[bars], y[bars], yerr=[(y - lo)[bars], hh[bars]], ls="none",
                        color=color, alpha=0.6, lw=1.2, capsize=3)
    if (~s).any():
        ax.plot(x[~s], y[~s], ls="none", marker=marker, ms=5.5, color=color)
    if s.any():
        ax.plot(
            x[s], y[s], ls="none", marker=marker, ms=6.5, mfc="white", mec=color, mew=1.5
        )


def _legend_handles(
    sl_names: Sequence[Tuple[Any, str]],
    layout: _Layout,
    *,
    total: bool,
    any_saturated: bool,
    band: bool,
    marker_lines: bool = True,
) -> List[Any]:
    _, _, Line2D, Patch = _matplotlib()
    handles = []
    if total:
        handles.append(
            Line2D([], [], color=TOTAL_COLOR, marker="o" if marker_lines else None,
                   ms=5, label="all traffic")
        )
    for i, (sl, name) in enumerate(sl_names):
        handles.append(
            Line2D([], [], color=_sl_color(i), marker="o" if marker_lines else None,
                   ms=5, label=_sl_label(sl, name))
        )
    if len(layout.styles) > 1:
        for j in range(len(layout.styles)):
            handles.append(
                Line2D([], [], color="0.35", ls=LINESTYLES[j], marker=MARKERS[j], ms=5,
                       label=layout.style_label(j))
            )
    if band:
        handles.append(Patch(color="0.5", alpha=0.25, label=f"{CONFIDENCE:.0%} CI of the mean"))
    if any_saturated:
        handles.append(
            Line2D([], [], ls="none", marker="o", ms=6.5, mfc="white", mec="0.3", mew=1.5,
                   label="saturated")
        )
    return handles


def _sl_list(per_sl: Sequence[Dict[str, Any]]) -> List[Tuple[Any, str]]:
    seen: List[Tuple[Any, str]] = []
    for e in per_sl:
        item = (e["sl"], str(e["name"] or ""))
        if item not in seen:
            seen.append(item)
    return sorted(seen, key=lambda t: _sl_order(t[0]))


def _auto_log(values: Iterable[float]) -> bool:
    vs = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return bool(vs) and max(vs) / min(vs) > 20.0


def _log_y(axes) -> None:
    for ax in axes:
        ax.set_yscale("log")
        _plain_log_axis(ax.yaxis)


def _single_sl_note(ax) -> None:
    ax.text(0.5, 0.5, "a single service level carries all the traffic",
            transform=ax.transAxes, ha="center", va="center", fontsize=10,
            color="0.25", bbox={"facecolor": "white", "alpha": 0.85, "lw": 0})


class _Summary(NamedTuple):
    """What most figures start from: the sweep's points and per-SL entries (``summarize``,
    ``summarize_per_sl``), its SLs in order and the panel layout of ``grid``."""

    grid: _Grid
    points: List[Dict[str, Any]]
    per_sl: List[Dict[str, Any]]
    sls: List[Tuple[Any, str]]
    layout: _Layout


def _summary(sweep: Any, confidence: float, grid: Optional[_Grid] = None) -> _Summary:
    grid = grid if grid is not None else _Grid(_vary_of(sweep))
    points = summarize(sweep, confidence)
    per_sl = summarize_per_sl(sweep, confidence)
    layout = _Layout(grid, [e["key"] for e in points])
    return _Summary(grid, points, per_sl, _sl_list(per_sl), layout)


def _ci_line(ax, xs, es, stat: str, si: int, *, color, label=None) -> Tuple[bool, bool]:
    """Draw the means of ``stat`` of the entries ``es`` against ``xs`` with :func:`_line`, in
    line style ``si``; returns whether a band was drawn and whether a point saturated."""
    halves = [e[stat].half for e in es]
    sat = [e["saturated"] > 0 for e in es]
    _line(ax, xs, [e[stat].mean for e in es], halves, sat, color=color, ls=LINESTYLES[si],
          marker=MARKERS[si], label=label)
    return any(math.isfinite(h) for h in halves), any(sat)


def latency_vs_load_figure(
    sweep: Any, *, log_y: Optional[bool] = None, confidence: float = CONFIDENCE
):
    """Mean end-to-end latency against accepted load, one line per SL (the total when there
    is one SL), with a confidence band over seeds; hollow markers are saturated points.
    ``log_y=None`` chooses a log scale when the latencies span more than a factor of 20."""
    sweep = load(sweep)
    _, points, per_sl, sls, layout = _summary(sweep, confidence)
    per_class = len(sls) > 1
    fig, axes = _new_figure(len(layout.panels))
    if log_y is None:
        source = per_sl if per_class else points
        log_y = _auto_log(e["latency_mean"].mean for e in source)

    # One curve: (panel, style, sl) -> entries in grid order.
    def curves(entries, sl_of):
        out: Dict[Tuple[int, int, Any], List[Dict[str, Any]]] = {}
        for e in entries:
            pi, si = layout.where(e["key"])
            if pi is None or si is None:
                continue
            out.setdefault((pi, si, sl_of(e)), []).append(e)
        return out

    if log_y:
        _log_y(axes)
    band = False
    any_sat = False
    if per_class:
        sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
        entries, sl_of = per_sl, lambda e: e["sl"]
    else:
        entries, sl_of = points, lambda e: None
    for (pi, si, sl), es in curves(entries, sl_of).items():
        if per_class:
            color = _sl_color(sl_index[sl])
        else:
            color = _sl_color(0) if sls else TOTAL_COLOR
        b, s = _ci_line(axes[pi], [e["accepted_load"].mean for e in es], es, "latency_mean",
                        si, color=color)
        band |= b
        any_sat |= s

    xlabel = "accepted load per SL " + LOAD_LABEL if per_class else "accepted load " + LOAD_LABEL
    for i, ax in enumerate(axes):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean " + LATENCY_LABEL + (" (log scale)" if log_y else ""))
        ax.grid(True, which="major", alpha=0.3)
        if log_y:
            ax.grid(True, which="minor", alpha=0.1)
        ax.set_xlim(left=0)
        if not log_y:
            ax.set_ylim(bottom=0)
        if layout.panel_keys:
            ax.set_title(layout.panel_title(i), fontsize=10)
    handles = _legend_handles(sls if per_class else [], layout, total=False,
                              any_saturated=any_sat, band=band)
    if not per_class:
        _, _, Line2D, _ = _matplotlib()
        name = _sl_label(*sls[0]) if sls else "all traffic"
        handles.insert(0, Line2D([], [], color=_sl_color(0) if sls else TOTAL_COLOR,
                                 marker="o", ms=5, label=name))
    axes[0].legend(handles=handles, loc="upper left", fontsize=9, framealpha=0.9)
    fig.suptitle("End-to-end latency vs accepted load\n"
                 + _subtitle(sweep, layout.hidden, "band and bars"),
                 fontsize=11)
    return fig


def accepted_vs_offered_figure(sweep: Any, *, confidence: float = CONFIDENCE):
    """Accepted against offered load, in total and per SL (each SL against its own offered
    load), with the ``y = x`` line. With several SLs and at most three groups of other
    varied keys, the total and the SLs get separate panels side by side."""
    sweep = load(sweep)
    _, points, per_sl, sls, layout = _summary(sweep, confidence)
    per_class = len(sls) > 1
    split = per_class and len(layout.panels) <= 3
    if split:
        rows = len(layout.panels)
        fig = _figure((11.0, 4.9 * rows + 0.5))
        axes_grid = fig.subplots(rows, 2, squeeze=False, sharex=True, sharey=True)
        total_axes = [row[0] for row in axes_grid]
        sl_axes = [row[1] for row in axes_grid]
    else:
        fig, total_axes = _new_figure(len(layout.panels))
        sl_axes = total_axes
    any_sat = False
    top = 0.0

    def draw(entries, axes, sl_of, color_of):
        nonlocal any_sat, top
        curves: Dict[Tuple[int, int, Any], List[Dict[str, Any]]] = {}
        for e in entries:
            pi, si = layout.where(e["key"])
            if pi is not None and si is not None:
                curves.setdefault((pi, si, sl_of(e)), []).append(e)
        # Lower SLs last, so that they are drawn on top where the lines coincide.
        for (pi, si, sl), es in reversed(list(curves.items())):
            sat = [e["saturated"] > 0 for e in es]
            any_sat |= any(sat)
            xs = [e["offered_load"].mean for e in es]
            top = max([top] + [x for x in xs if math.isfinite(x)])
            _line(axes[pi], xs, [e["accepted_load"].mean for e in es], [math.nan] * len(es),
                  sat, color=color_of(sl), ls=LINESTYLES[si], marker=MARKERS[si], band=False)

    draw(points, total_axes, lambda e: None, lambda _: TOTAL_COLOR)
    if per_class:
        sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
        draw(per_sl, sl_axes, lambda e: e["sl"], lambda sl: _sl_color(sl_index[sl]))
    top = top * 1.05 if top > 0 else 1.0
    all_axes = list(dict.fromkeys(total_axes + sl_axes))
    for ax in all_axes:
        ax.plot([0, top], [0, top], color="0.55", ls=(0, (4, 3)), lw=1, zorder=0)
        ax.annotate("y = x", xy=(top * 0.93, top * 0.93), xytext=(-6, 6),
                    textcoords="offset points", ha="right", va="bottom",
                    color="0.45", fontsize=9)
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.grid(True, alpha=0.3)
    for i, ax in enumerate(total_axes):
        title = layout.panel_title(i) if layout.panel_keys else ""
        if split:
            size = 9 if title else 10
            ax.set_title("all traffic" + (f"\n{title}" if title else ""), fontsize=size)
            sl_axes[i].set_title("per service level" + (f"\n{title}" if title else ""),
                                 fontsize=size)
        elif title:
            ax.set_title(title, fontsize=10)
    bottom = total_axes[-1:] + sl_axes[-1:] if split else all_axes
    for ax in bottom:
        ax.set_xlabel(f"offered load {LOAD_LABEL}")
    for ax in (total_axes if split else all_axes):
        ax.set_ylabel(f"accepted load {LOAD_LABEL}")
    if split:
        handles_total = _legend_handles([], layout, total=True, any_saturated=any_sat,
                                        band=False)
        handles_sl = _legend_handles(sls, layout, total=False, any_saturated=False,
                                     band=False)
        total_axes[0].legend(handles=handles_total, loc="upper left", fontsize=9,
                             framealpha=0.9)
        sl_axes[0].legend(handles=handles_sl, loc="upper left", fontsize=9, framealpha=0.9)
        for ax in sl_axes[:-1] + total_axes[:-1]:
            ax.set_xlabel("")
    else:
        handles = _legend_handles(sls if per_class else [], layout, total=True,
                                  any_saturated=any_sat, band=False)
        total_axes[0].legend(handles=handles, loc="upper left", fontsize=9, framealpha=0.9)
    note = " (each SL against its own offered load)" if per_class else ""
    fig.suptitle("Accepted vs offered load" + note + "\n"
                 + _subtitle(sweep, layout.hidden, None), fontsize=11)
    return fig


def sl_throughput_figure(
    sweep: Any, *, max_points: int = MAX_BAR_POINTS, confidence: float = CONFIDENCE
):
    """Each SL's share of the accepted traffic per load point (grouped bars, the highest
    ``max_points`` points of each panel), with a black tick at the SL's offered share.
    Hatched bars are points where the SL saturated."""
    import numpy as np

    sweep = load(sweep)
    _, _, Line2D, Patch = _matplotlib()
    grid, points, per_sl, sls, layout = _summary(sweep, confidence)
    sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
    # Panel per panel-group; bars grouped by point (style variations become extra points).
    panel_points: Dict[int, List[Point]] = {}
    for e in points:
        pi, si = layout.where(e["key"])
        if pi is not None and si is not None:
            panel_points.setdefault(pi, []).append(e["key"])
    offered_total = {e["key"]: e["offered_load"].mean for e in points}
    by_point: Dict[Point, Dict[Any, Dict[str, Any]]] = {}
    for e in per_sl:
        by_point.setdefault(e["key"], {})[e["sl"]] = e
    fig, axes = _new_figure(max(1, len(layout.panels)))
    n_sl = max(1, len(sls))
    width = 0.8 / n_sl
    any_err = False
    any_sat = False
    hidden = 0
    for pi, ax in enumerate(axes):
        keys = panel_points.get(pi, [])
        if len(keys) > max_points:
            hidden += len(keys) - max_points
            keys = keys[-max_points:]
        labels = []
        for j, key in enumerate(keys):
            label = _fmt_value(grid.series_value(key)) if grid.series_key else "all runs"
            if len(layout.styles) > 1:
                label += "\n" + _label(layout.style_keys, grid.group(key)[layout._cut:])
            labels.append(label)
            for sl, _name in sls:
                e = by_point.get(key, {}).get(sl)
                if e is None:
                    continue
                i = sl_index[sl]
                x = j - 0.4 + width * (i + 0.5)
                share = e["share"].mean
                half = e["share"].half
                sat = e["saturated"] > 0
                any_sat |= sat
                ax.bar(
                    x, share if math.isfinite(share) else 0.0, width * 0.92,
                    color=_sl_color(i), alpha=0.85,
                    hatch="///" if sat else None, edgecolor="white" if sat else None,
                    lw=0,
                )
                if math.isfinite(half):
                    any_err = True
                    ax.errorbar(x, share, yerr=half, color="0.15", lw=1, capsize=2.5)
                total = offered_total.get(key)
                offered = e["offered_load"].mean
                if total and math.isfinite(offered) and total > 0:
                    ax.hlines(offered / total, x - width * 0.46, x + width * 0.46,
                              colors="black", lw=2.2, zorder=3)
        ax.set_xticks(np.arange(len(keys)))
        ax.set_xticklabels(labels, fontsize=9)
        ax.set_xlim(-0.6, max(len(keys), 1) - 0.4)
        ax.set_ylim(0, 1.05)
        if len(sls) == 1:
            _single_sl_note(ax)
        ax.set_xlabel(_series_label(grid))
        ax.set_ylabel("share of accepted traffic")
        ax.grid(True, axis="y", alpha=0.3)
        if layout.panel_keys:
            ax.set_title(layout.panel_title(pi), fontsize=10)
    handles = [Patch(color=_sl_color(i), alpha=0.85, label=_sl_label(sl, name))
               for i, (sl, name) in enumerate(sls)]
    handles.append(Line2D([], [], color="black", lw=2.2, label="offered share"))
    if any_err:
        handles.append(Line2D([], [], color="0.15", lw=1, marker="|", ms=8,
                              label=f"{CONFIDENCE:.0%} CI of the mean"))
    if any_sat:
        handles.append(Patch(facecolor="0.6", hatch="///", edgecolor="white",
                             label="SL saturated"))
    _outside_legend(fig, axes[0], handles)
    fig.suptitle("Share of accepted traffic per service level\n"
                 + _subtitle(sweep, layout.hidden + hidden, "error bars"), fontsize=11)
    return fig


def _outside_legend(fig, ax, handles, ncol: int = 5) -> None:
    try:
        fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), ncol),
                   fontsize=9, frameon=False)
    except ValueError:  # matplotlib < 3.7: no "outside" locations
        ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)


def _cdf_points(
    grid: _Grid, points: Sequence[Dict[str, Any]]
) -> List[List[Tuple[Point, str]]]:
    """Per row (a group of the other varied keys), the points to draw: the highest load that
    did not saturate in any seed, and the highest load. "Highest" is the largest value of the
    series key when it is numeric, else the last in grid order."""
    rows: List[List[Tuple[Point, str]]] = []
    groups: Dict[Point, List[Dict[str, Any]]] = {}
    for e in points:
        groups.setdefault(grid.group(e["key"]), []).append(e)
    for _, es in list(groups.items())[:MAX_CDF_ROWS]:
        values = [grid.series_value(e["key"]) for e in es]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            es = [e for _, e in sorted(zip(values, es), key=lambda t: t[0])]
        chosen: List[Tuple[Point, str]] = []
        ok = [e for e in es if e["saturated"] == 0]
        last = es[-1]
        if ok and ok[-1]["key"] != last["key"]:
            chosen.append((ok[-1]["key"], "highest non-saturated"))
        if last["saturated"]:
            chosen.append((last["key"], "highest, saturated"))
        else:
            chosen.append((last["key"], "highest" if len(es) > 1 else ""))
        rows.append(chosen)
    return rows


def latency_cdf_figure(sweep: Any, *, log_x: Optional[bool] = None):
    """Cumulative latency distribution per SL from the histogram dataset, seeds merged, at
    the highest non-saturated point and at the highest point (one row per group of the
    other varied keys). ``log_x=None`` uses a log scale when latencies span a factor > 20."""
    import numpy as np

    sweep = load(sweep)
    _, _, Line2D, _ = _matplotlib()
    grid = _Grid(_vary_of(sweep))
    points = summarize(sweep)
    rows = _cdf_points(grid, points)
    hist = _merge_histogram(sweep, grid, {p for row in rows for p, _ in row})
    sls = sorted({(sl, name) for (_, sl, name) in hist}, key=lambda t: _sl_order(t[0]))
    sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
    ncols = max(len(r) for r in rows) if rows else 1
    fig = _figure((5.4 * ncols + 0.6, 4.2 * max(1, len(rows)) + 0.8))
    grid_axes = fig.subplots(max(1, len(rows)), ncols, squeeze=False, sharex=True, sharey=True)
    lats = [lat for arrays in hist.values() for lat in arrays[0]]
    if log_x is None:
        log_x = _auto_log(lats)
    for r, chosen in enumerate(rows or [[]]):
        for c in range(ncols):
            ax = grid_axes[r][c]
            if c >= len(chosen):
                ax.set_visible(False)
                continue
            point, why = chosen[c]
            for (p, sl, _name), (lat, count) in hist.items():
                if p != point or count.sum() <= 0:
                    continue
                cdf = np.cumsum(count) / count.sum()
                x = np.concatenate([[lat[0]], lat])
                y = np.concatenate([[0.0], cdf])
                ax.step(x, y, where="post", color=_sl_color(sl_index[sl]), lw=1.7)
            ax.axhline(0.99, color="0.5", ls=":", lw=1)
            ax.axhline(0.5, color="0.7", ls=":", lw=0.8)
            if log_x:
                ax.set_xscale("log")
                _plain_log_axis(ax.xaxis, subs=(1.0,))
            ax.set_ylim(0, 1.02)
            ax.grid(True, alpha=0.3)
            if grid.series_key is None:
                title = "the run"
            else:
                title = _label([grid.series_key], [grid.series_value(point)])
            if why:
                title += f"  ({why})"
            if grid.group_keys:
                title = _label(grid.group_keys, grid.group(point)) + "\n" + title
            ax.set_title(title, fontsize=9 if grid.group_keys else 10)
            if r == len(rows) - 1:
                ax.set_xlabel(LATENCY_LABEL + (" (log scale)" if log_x else ""))
            if c == 0:
                ax.set_ylabel("fraction of packets with latency ≤ x")
    for ax in (a for row in grid_axes for a in row):
        if ax.get_visible():
            ax.text(0.01, 0.985, " p99", transform=ax.get_yaxis_transform(), ha="left",
                    va="top", fontsize=8, color="0.4")
            ax.text(0.01, 0.5, " p50", transform=ax.get_yaxis_transform(), ha="left",
                    va="bottom", fontsize=8, color="0.5")
    handles = [Line2D([], [], color=_sl_color(i), lw=1.7, label=_sl_label(sl, name))
               for i, (sl, name) in enumerate(sls)]
    if handles:
        grid_axes[0][0].legend(handles=handles, loc="lower right", fontsize=9,
                               framealpha=0.9, bbox_to_anchor=(1.0, 0.06))
    n = len(_seeds_of(sweep))
    fig.suptitle(
        "Latency distribution (CDF) per service level\n"
        f"histograms of {n} seed{'s' if n != 1 else ''} merged", fontsize=11
    )
    return fig


def _merge_histogram(sweep: Any, grid: _Grid, wanted: Iterable[Point]):
    """``{(point, sl, name): (latency bins, counts)}`` summed over seeds, for the points in
    ``wanted``."""
    import numpy as np

    wanted = set(wanted)
    table = sweep.histogram
    if table is not None and not isinstance(table, list) and grid.keys and wanted:
        table = _filter_points(table, grid, wanted)
    sums: Dict[Tuple[Point, Any, str], Dict[int, int]] = {}
    for row in _rows(table):
        point = grid.point(row)
        if point not in wanted:
            continue
        key = (point, row.get("sl"), str(row.get("name") or ""))
        bins = sums.setdefault(key, {})
        lat = int(row["latency"])
        bins[lat] = bins.get(lat, 0) + int(row["count"] or 0)
    out = {}
    for key, bins in sums.items():
        lats = np.array(sorted(bins), dtype=float)
        out[key] = (lats, np.array([bins[int(v)] for v in lats], dtype=float))
    return out


def _filter_points(table: Any, grid: _Grid, wanted: Iterable[Point]) -> Any:
    """Only the rows of ``table`` at the given points (pyarrow compute; skipped on failure)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        mask = None
        for point in wanted:
            m = None
            for k, v in zip(grid.keys, point):
                if v is None:
                    cond = pc.is_null(table[k])
                else:
                    cond = pc.equal(table[k], pa.scalar(v, type=table.schema.field(k).type))
                m = cond if m is None else pc.and_(m, cond)
            mask = m if mask is None else pc.or_(mask, m)
        return table.filter(mask) if mask is not None else table
    except Exception:  # noqa: BLE001 - unusual column types: filter row by row instead
        return table


# -- Per-SL figures against the total offered load (Figs. 3-4 of Cano-Cano et al. 2022) -------

OFFERED_LABEL = f"offered load, all SLs {LOAD_LABEL}"
REFERENCE_DASHES = (0, (5, 3))


def _offered_grid(sweep: Any) -> _Grid:
    """The grid of the figures against offered load: ``traffic.load`` runs along the lines and
    every other varied key makes panels (or line styles). Without ``traffic.load`` every
    varied key makes panels, and each line is a single point."""
    grid = _Grid(_vary_of(sweep))
    if grid.series_key != LOAD_KEY:
        grid.series_key = None
        grid.group_keys = list(grid.keys)
    return grid


def _sl_curves(sweep: Any, confidence: float):
    """``(layout, sls, curves)`` for the per-SL figures against offered load: ``curves`` maps
    ``(panel, style, sl)`` to the SL's ``summarize_per_sl`` entries, each with the total
    offered load of its point (``summarize``'s ``offered_load`` mean, or the sum over the SLs
    when the point has no summary row), sorted by that load."""
    _, points, per_sl, sls, layout = _summary(sweep, confidence, _offered_grid(sweep))
    total = {e["key"]: e["offered_load"].mean for e in points}
    sums: Dict[Point, float] = {}
    for e in per_sl:
        if math.isfinite(e["offered_load"].mean):
            sums[e["key"]] = sums.get(e["key"], 0.0) + e["offered_load"].mean
    curves: Dict[Tuple[int, int, Any], List[Tuple[float, Dict[str, Any]]]] = {}
    for e in per_sl:
        pi, si = layout.where(e["key"])
        if pi is None or si is None:
            continue
        x = total.get(e["key"], math.nan)
        if not math.isfinite(x):
            x = sums.get(e["key"], math.nan)
        curves.setdefault((pi, si, e["sl"]), []).append((x, e))
    for es in curves.values():
        es.sort(key=lambda t: t[0] if math.isfinite(t[0]) else math.inf)
    # Lower SLs last, so that they are drawn on top where lines coincide.
    order = {sl: i for i, (sl, _) in enumerate(sls)}
    ordered = dict(sorted(curves.items(), key=lambda kv: (-order.get(kv[0][2], 0), kv[0][:2])))
    return layout, sls, ordered


def _sl_panels_finish(axes, layout: _Layout, ylabel: str) -> None:
    for i, ax in enumerate(axes):
        ax.set_xlabel(OFFERED_LABEL)
        ax.set_ylabel(ylabel)
        ax.set_xlim(left=0)
        if layout.panel_keys:
            ax.set_title(layout.panel_title(i), fontsize=10)


def sl_latency_vs_offered_figure(
    sweep: Any, *, log_y: Optional[bool] = None, confidence: float = CONFIDENCE
):
    """Mean end-to-end latency of each SL against the total offered load of the point (all
    SLs together), one panel per value of the other varied keys (e.g. one per
    ``qos.scheduler``), as Fig. 3 of the Omni-Path QoS paper. Confidence band over seeds;
    hollow markers where the SL saturated (its accepted load below its offered load by more
    than ``run.saturation_tolerance``). ``log_y=None`` chooses a log scale when the latencies
    span more than a factor of 20."""
    sweep = load(sweep)
    layout, sls, curves = _sl_curves(sweep, confidence)
    fig, axes = _new_figure(len(layout.panels))
    if log_y is None:
        log_y = _auto_log(e["latency_mean"].mean for es in curves.values() for _, e in es)
    if log_y:
        _log_y(axes)
    sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
    names = dict(sls)
    band = False
    any_sat = False
    for (pi, si, sl), es in curves.items():
        b, s = _ci_line(axes[pi], [x for x, _ in es], [e for _, e in es], "latency_mean", si,
                        color=_sl_color(sl_index[sl]), label=_sl_label(sl, names[sl]))
        band |= b
        any_sat |= s
    _sl_panels_finish(axes, layout,
                      "mean " + LATENCY_LABEL + (" (log scale)" if log_y else ""))
    for ax in axes:
        ax.grid(True, which="major", alpha=0.3)
        if log_y:
            ax.grid(True, which="minor", alpha=0.1)
        else:
            ax.set_ylim(bottom=0)
    handles = _legend_handles(sls, layout, total=False, any_saturated=any_sat, band=band)
    axes[0].legend(handles=handles, loc="upper left", fontsize=9, framealpha=0.9)
    fig.suptitle("End-to-end latency per service level vs total offered load\n"
                 + _subtitle(sweep, layout.hidden, "band and bars"), fontsize=11)
    return fig


def sl_share_vs_offered_figure(sweep: Any, *, confidence: float = CONFIDENCE):
    """Each SL's share of the accepted traffic (normalized throughput, 0..1) against the
    total offered load of the point, one panel per value of the other varied keys, as Fig. 4
    of the Omni-Path QoS paper. A thin dashed line in the SL's colour marks its share of the
    offered traffic at the highest load of the line: where the scheduler delivers the offered
    split, the curve stays on it. Confidence band over seeds; hollow markers where the SL
    saturated."""
    sweep = load(sweep)
    _, _, Line2D, _ = _matplotlib()
    layout, sls, curves = _sl_curves(sweep, confidence)
    fig, axes = _new_figure(len(layout.panels))
    sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
    names = dict(sls)
    band = False
    any_sat = False
    top = 0.0
    drawn = set()
    for (pi, si, sl), es in curves.items():
        color = _sl_color(sl_index[sl])
        ys = [e["share"].mean for _, e in es]
        halves = [e["share"].half for _, e in es]
        sat = [e["saturated"] > 0 for _, e in es]
        band |= any(math.isfinite(h) for h in halves)
        any_sat |= any(sat)
        top = max([top] + [y + (h if math.isfinite(h) else 0.0)
                           for y, h in zip(ys, halves) if math.isfinite(y)])
        _line(axes[pi], [x for x, _ in es], ys, halves, sat, color=color, ls=LINESTYLES[si],
              marker=MARKERS[si], label=_sl_label(sl, names[sl]))
        # The offered split, at the highest load of the line.
        last = [(x, e) for x, e in es if math.isfinite(x) and x > 0]
        if last:
            x, e = last[-1]
            ref = e["offered_load"].mean / x
            key = (pi, sl, round(ref, 6))
            if math.isfinite(ref) and key not in drawn:
                drawn.add(key)
                top = max(top, ref)
                axes[pi].axhline(ref, color=color, ls=REFERENCE_DASHES, lw=0.9, alpha=0.75,
                                 zorder=1, label=f"offered share, {_sl_label(sl, names[sl])}")
    _sl_panels_finish(axes, layout, "share of accepted traffic")
    upper = top * 1.12 if top > 0 else 1.0
    for ax in axes:
        ax.set_ylim(0, upper)
        ax.grid(True, alpha=0.3)
        if len(sls) == 1:
            _single_sl_note(ax)
    handles = _legend_handles(sls, layout, total=False, any_saturated=any_sat, band=band)
    handles.insert(len(sls), Line2D([], [], color="0.35", ls=REFERENCE_DASHES, lw=0.9,
                                    label="offered share (highest load)"))
    # One row when the figure is wide enough (about 1.7 inches per entry).
    _outside_legend(fig, axes[0], handles,
                    ncol=max(3, int(fig.get_size_inches()[0] / 1.7)))
    fig.suptitle("Share of accepted traffic per service level vs total offered load\n"
                 + _subtitle(sweep, layout.hidden, "band and bars"), fontsize=11)
    return fig


FIGURES: Dict[str, Callable[..., Any]] = {
    "latency_vs_load": latency_vs_load_figure,
    "accepted_vs_offered": accepted_vs_offered_figure,
    "sl_throughput": sl_throughput_figure,
    "latency_cdf": latency_cdf_figure,
    "sl_latency_vs_offered": sl_latency_vs_offered_figure,
    "sl_share_vs_offered": sl_share_vs_offered_figure,
}


def figures(sweep: SweepSource) -> Dict[str, Any]:
    """The six figures of a sweep, by name (:data:`ALL_PLOT_NAMES` order)."""
    _matplotlib()
    sweep = load(sweep)
    return {name: FIGURES[name](sweep) for name in ALL_PLOT_NAMES}


def save_figure(fig: Any, path: Union[str, Path], fmt: str) -> Path:
    """Save ``fig`` as ``fmt`` (PNG at :data:`DPI` dpi, or SVG) with reproducible metadata."""
    import matplotlib

    path = Path(path)
    metadata: Dict[str, Any] = {"Software": None} if fmt == "png" else {"Date": None}
    if fmt not in ("png", "svg"):
        metadata = {}
    with matplotlib.rc_context({"svg.hashsalt": "flitsim", "svg.fonttype": "path"}):
        fig.savefig(path, format=fmt, dpi=DPI, metadata=metadata or None)
    return path


def plot_sweep(
    out_dir: SweepSource,
    dest: Optional[Union[str, Path]] = None,
    formats: Sequence[str] = ("png", "svg"),
) -> List[Path]:
    """Draw the six figures of the sweep in ``out_dir`` and save each in every format of
    ``formats`` into ``dest`` (default ``OUT/plots/``) as ``latency_vs_load``,
    ``accepted_vs_offered``, ``sl_throughput``, ``latency_cdf``, ``sl_latency_vs_offered``
    and ``sl_share_vs_offered`` ``.png``/``.svg`` (:data:`ALL_PLOT_NAMES`). Returns the
    written paths, figure by figure."""
    if isinstance(formats, str):
        formats = (formats,)
    fmts = []
    for f in formats:
        f = str(f).lower().lstrip(".")
        if f not in ("png", "svg", "pdf"):
            raise FlitsimError(f"unsupported plot format {f!r} (use png, svg or pdf)")
        if f not in fmts:
            fmts.append(f)
    if not fmts:
        raise FlitsimError("no plot format given")
    sweep = load(out_dir)
    if dest is None:
        dest = Path(_directory_of(out_dir)) / "plots"
    return save_figures(figures(sweep), dest, fmts)


def save_figures(
    figs: Dict[str, Any], dest: Union[str, Path], formats: Sequence[str]
) -> List[Path]:
    """Save each figure of ``figs`` (name → figure) as ``dest/<name>.<format>``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in figs.items():
        for fmt in formats:
            written.append(save_figure(fig, dest / f"{name}.{fmt}", fmt))
    return written
