"""The latency distribution (CDF) per SL from the histogram dataset."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..stats import (
    Point,
    load,
    summarize,
)
from ..stats import SweepGrid as _Grid
from ..stats import rows_of as _rows
from ..stats import seeds_of as _seeds_of
from ..stats import sl_order as _sl_order
from ..stats import vary_of as _vary_of
from .common import (
    LATENCY_LABEL,
    MAX_CDF_ROWS,
    _auto_log,
    _figure,
    _label,
    _matplotlib,
    _plain_log_axis,
    _sl_color,
    _sl_label,
)


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
