"""The figures against load: latency, accepted against offered load and the SL shares as bars."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from .._format import short_label as _fmt_value
from ..stats import (
    CONFIDENCE,
    Point,
    load,
)
from .common import (
    DEADLOCK_STYLE,
    DEADLOCK_Y,
    LATENCY_LABEL,
    LINESTYLES,
    LOAD_LABEL,
    MARKERS,
    MAX_BAR_POINTS,
    TOTAL_COLOR,
    _auto_log,
    _ci_line,
    _deadlock_handle,
    _figure,
    _label,
    _legend_handles,
    _line,
    _log_y,
    _mark_deadlocks,
    _matplotlib,
    _new_figure,
    _outside_legend,
    _series_label,
    _single_sl_note,
    _sl_color,
    _sl_label,
    _subtitle,
    _summary,
)


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
    any_deadlock = bool(_mark_deadlocks(axes, layout, points))

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
                              any_saturated=any_sat, band=band, any_deadlock=any_deadlock)
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
    deadlocks = _mark_deadlocks(total_axes, layout, points)
    top = max([top] + deadlocks)
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
                                        band=False, any_deadlock=bool(deadlocks))
        handles_sl = _legend_handles(sls, layout, total=False, any_saturated=False,
                                     band=False)
        total_axes[0].legend(handles=handles_total, loc="upper left", fontsize=9,
                             framealpha=0.9)
        sl_axes[0].legend(handles=handles_sl, loc="upper left", fontsize=9, framealpha=0.9)
        for ax in sl_axes[:-1] + total_axes[:-1]:
            ax.set_xlabel("")
    else:
        handles = _legend_handles(sls if per_class else [], layout, total=True,
                                  any_saturated=any_sat, band=False,
                                  any_deadlock=bool(deadlocks))
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
    any_deadlock = False
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
                if not math.isfinite(share):
                    if e.get("deadlocked"):  # a cross where the bar would stand, never a 0 bar
                        any_deadlock = True
                        ax.plot([x], [DEADLOCK_Y], transform=ax.get_xaxis_transform(),
                                clip_on=False, zorder=6, **DEADLOCK_STYLE)
                    continue
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
    if any_deadlock:
        handles.append(_deadlock_handle())
    _outside_legend(fig, axes[0], handles)
    fig.suptitle("Share of accepted traffic per service level\n"
                 + _subtitle(sweep, layout.hidden + hidden, "error bars"), fontsize=11)
    return fig
