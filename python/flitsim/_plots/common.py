"""What the figures of :mod:`flitsim.plot` share: sizes, colours, the lazy matplotlib import,
the panel layout of a sweep, CI lines and legends."""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from .._format import short_label as _fmt_value
from ..stats import (
    CONFIDENCE,
    LOAD_KEY,
    Point,
    deadlock_load,
    summarize,
    summarize_per_sl,
)
from ..stats import SweepGrid as _Grid
from ..stats import seeds_of as _seeds_of
from ..stats import sl_order as _sl_order
from ..stats import vary_of as _vary_of

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
# A deadlocked point: a black cross at its offered load on a strip along the top of the panel
# (its statistics are unknown, so it is never drawn at a value, least of all at 0).
DEADLOCK_STYLE = {"ls": "none", "marker": "x", "ms": 8, "mew": 2.0, "color": "black"}
DEADLOCK_LABEL = "deadlock (× at its offered load)"
DEADLOCK_Y = 0.95  # in axes coordinates
MATPLOTLIB_MISSING = "plotting needs matplotlib: pip install 'flitsim[plot]'"


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
    any_deadlock: bool = False,
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
    if any_deadlock:
        handles.append(_deadlock_handle())
    return handles


def _deadlock_handle() -> Any:
    _, _, Line2D, _ = _matplotlib()
    return Line2D([], [], label=DEADLOCK_LABEL, **DEADLOCK_STYLE)


def _mark_deadlocks(axes: Sequence[Any], layout: "_Layout", points: Sequence[Dict[str, Any]]
                    ) -> List[float]:
    """Mark every point of ``points`` (``summarize`` entries) with a deadlocked seed by a
    cross at its offered load (:func:`flitsim.stats.deadlock_load`) along the top of its
    panel; returns the loads marked."""
    marked: Dict[int, List[float]] = {}
    for e in points:
        if not e.get("deadlocked"):
            continue
        pi, si = layout.where(e["key"])
        x = deadlock_load(e)
        if pi is None or si is None or not math.isfinite(x):
            continue
        marked.setdefault(pi, []).append(x)
    for pi, xs in marked.items():
        ax = axes[pi]
        ax.plot(xs, [DEADLOCK_Y] * len(xs), transform=ax.get_xaxis_transform(),
                clip_on=False, zorder=6, **DEADLOCK_STYLE)
    return [x for xs in marked.values() for x in xs]


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


def _outside_legend(fig, ax, handles, ncol: int = 5) -> None:
    try:
        fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), ncol),
                   fontsize=9, frameon=False)
    except ValueError:  # matplotlib < 3.7: no "outside" locations
        ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)
