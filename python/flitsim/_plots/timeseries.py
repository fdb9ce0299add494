"""Throughput over time: the delivered-flits time series of one run (``run.timeseries_bin``)."""

from __future__ import annotations

from typing import Any, Mapping

from .common import _figure, _sl_color, _sl_label


def throughput_over_time_figure(result: Mapping[str, Any]):
    """Delivered throughput per class against time, one line per class: the flits a class
    delivered in each bin of ``run.timeseries_bin`` cycles, per cycle and endpoint (the unit of
    ``accepted_load``), drawn at the bin's start. The measurement window is shaded.

    ``result`` is a :class:`flitsim.Result` (or its summary dict) of a run with a time series;
    a run without one raises ``ValueError``.
    """
    ts = result.get("timeseries")
    if not ts:
        raise ValueError("the run has no time series: set run.timeseries_bin")
    width = ts["bin"]
    endpoints = max(int(result.get("endpoints") or 1), 1)
    fig = _figure((8.0, 4.6))
    ax = fig.subplots()
    for i, c in enumerate(ts["classes"]):
        xs = [b * width for b in range(len(c["flits"]))]
        ys = [f / (width * endpoints) for f in c["flits"]]
        ax.step(xs, ys, where="post", color=_sl_color(i), label=_sl_label(c["sl"], c["name"]))
    cycles = result.get("cycles") or {}
    warmup, measure = cycles.get("warmup"), cycles.get("measure")
    if isinstance(warmup, int) and isinstance(measure, int):
        ax.axvspan(warmup, warmup + measure, color="#dddddd", alpha=0.5, lw=0,
                   label="measurement window")
    ax.set_xlabel("time [cycles]")
    ax.set_ylabel("delivered [flits/cycle/endpoint]")
    ax.set_title(f"Throughput over time (bins of {width} cycles)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return fig
