"""Per-SL figures against the total offered load (Figs. 3-4 of Cano-Cano et al. 2022)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from ..stats import (
    CONFIDENCE,
    LOAD_KEY,
    Point,
    load,
)
from ..stats import SweepGrid as _Grid
from ..stats import vary_of as _vary_of
from .common import (
    LATENCY_LABEL,
    LINESTYLES,
    LOAD_LABEL,
    MARKERS,
    _auto_log,
    _ci_line,
    _Layout,
    _legend_handles,
    _line,
    _log_y,
    _mark_deadlocks,
    _matplotlib,
    _new_figure,
    _outside_legend,
    _single_sl_note,
    _sl_color,
    _sl_label,
    _subtitle,
    _summary,
)

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
    """``(layout, sls, curves, points)`` for the per-SL figures against offered load:
    ``curves`` maps ``(panel, style, sl)`` to the SL's ``summarize_per_sl`` entries, each with
    the total offered load of its point (``summarize``'s ``offered_load`` mean, or the sum
    over the SLs when the point has no summary row), sorted by that load; ``points`` are the
    ``summarize`` entries."""
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
    return layout, sls, ordered, points


def _sl_panels_finish(axes, layout: _Layout, ylabel: str) -> None:
    for i, ax in enumerate(axes):
        ax.set_xlabel(OFFERED_LABEL)
        ax.set_ylabel(ylabel)
        ax.set_xlim(left=0)
        if layout.panel_keys:
            ax.set_title(layout.panel_title(i), fontsize=10)


def sl_latency_vs_offered_figure(
    sweep: Any,
    *,
    log_y: Optional[bool] = None,
    confidence: float = CONFIDENCE,
    metric: str = "latency_mean",
):
    """Mean end-to-end latency of each SL against the total offered load of the point (all
    SLs together), one panel per value of the other varied keys (e.g. one per
    ``qos.scheduler``), as Fig. 3 of the Omni-Path QoS paper. Confidence band over seeds;
    hollow markers where the SL saturated (its accepted load below its offered load by more
    than ``run.saturation_tolerance``). ``log_y=None`` chooses a log scale when the latencies
    span more than a factor of 20. ``metric="message_latency_mean"`` draws the message
    latency instead (generation to the last packet's tail: the paper's end-to-end latency
    when messages hold several packets, ``traffic.packet_flits``)."""
    if metric not in ("latency_mean", "message_latency_mean"):
        raise ValueError(f"metric: {metric!r}: latency_mean or message_latency_mean")
    sweep = load(sweep)
    layout, sls, curves, points = _sl_curves(sweep, confidence)
    fig, axes = _new_figure(len(layout.panels))
    if log_y is None:
        log_y = _auto_log(e[metric].mean for es in curves.values() for _, e in es)
    if log_y:
        _log_y(axes)
    sl_index = {sl: i for i, (sl, _) in enumerate(sls)}
    names = dict(sls)
    band = False
    any_sat = False
    for (pi, si, sl), es in curves.items():
        b, s = _ci_line(axes[pi], [x for x, _ in es], [e for _, e in es], metric, si,
                        color=_sl_color(sl_index[sl]), label=_sl_label(sl, names[sl]))
        band |= b
        any_sat |= s
    any_deadlock = bool(_mark_deadlocks(axes, layout, points))
    kind = "mean message " if metric == "message_latency_mean" else "mean "
    _sl_panels_finish(axes, layout, kind + LATENCY_LABEL + (" (log scale)" if log_y else ""))
    for ax in axes:
        ax.grid(True, which="major", alpha=0.3)
        if log_y:
            ax.grid(True, which="minor", alpha=0.1)
        else:
            ax.set_ylim(bottom=0)
    handles = _legend_handles(sls, layout, total=False, any_saturated=any_sat, band=band,
                              any_deadlock=any_deadlock)
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
    layout, sls, curves, points = _sl_curves(sweep, confidence)
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
    any_deadlock = bool(_mark_deadlocks(axes, layout, points))
    _sl_panels_finish(axes, layout, "share of accepted traffic")
    upper = top * 1.12 if top > 0 else 1.0
    for ax in axes:
        ax.set_ylim(0, upper)
        ax.grid(True, alpha=0.3)
        if len(sls) == 1:
            _single_sl_note(ax)
    handles = _legend_handles(sls, layout, total=False, any_saturated=any_sat, band=band,
                              any_deadlock=any_deadlock)
    handles.insert(len(sls), Line2D([], [], color="0.35", ls=REFERENCE_DASHES, lw=0.9,
                                    label="offered share (highest load)"))
    # One row when the figure is wide enough (about 1.7 inches per entry).
    _outside_legend(fig, axes[0], handles,
                    ncol=max(3, int(fig.get_size_inches()[0] / 1.7)))
    fig.suptitle("Share of accepted traffic per service level vs total offered load\n"
                 + _subtitle(sweep, layout.hidden, "band and bars"), fontsize=11)
    return fig
