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


#: Lines drawn at most by :func:`flow_throughput_over_time_figure` (the first flows by id).
MAX_FLOW_LINES = 16


def flow_throughput_over_time_figure(result: Mapping[str, Any], max_flows: int = MAX_FLOW_LINES):
    """Delivered throughput per flow against time, one line per flow (the first ``max_flows``
    flows by id), as in the per-flow bandwidth figures of the rate-control thesis (004 §5.6).
    With ``[units]`` the axes are microseconds and MB/s (10⁶ bytes/s); without, cycles and
    flits/cycle of the flow. The measurement window is shaded.

    Raises ``ValueError`` when the run has no per-flow time series (no flows, or no
    ``run.timeseries_bin``).
    """
    ts = result.get("timeseries") or {}
    series = ts.get("flows") or []
    if not series:
        raise ValueError("the run has no per-flow time series: it needs flows and "
                         "run.timeseries_bin")
    width = ts["bin"]
    units = result.get("units") or {}
    ns = units.get("cycle_ns")
    fb = units.get("flit_bytes")
    physical = bool(ns and fb)
    x_scale = ns / 1000.0 if physical else 1.0
    flows = {f.get("id"): f for f in result.get("flows") or ()}
    fig = _figure((8.0, 4.6))
    ax = fig.subplots()
    for i, s in enumerate(series[:max_flows]):
        f = flows.get(s["flow"]) or {}
        xs = [b * width * x_scale for b in range(len(s["flits"]))]
        if physical:
            ys = [v * fb / (width * ns) * 1000.0 for v in s["flits"]]
        else:
            ys = [v / width for v in s["flits"]]
        label = f"flow {s['flow']}: {f.get('src')}→{f.get('dst')} {f.get('class', '')}".rstrip()
        ax.step(xs, ys, where="post", color=_sl_color(i), label=label)
    cycles = result.get("cycles") or {}
    warmup, measure = cycles.get("warmup"), cycles.get("measure")
    if isinstance(warmup, int) and isinstance(measure, int):
        ax.axvspan(warmup * x_scale, (warmup + measure) * x_scale, color="#dddddd", alpha=0.5,
                   lw=0, label="measurement window")
    ax.set_xlabel("time [µs]" if physical else "time [cycles]")
    ax.set_ylabel("delivered [MB/s]" if physical else "delivered [flits/cycle]")
    shown = min(len(series), max_flows)
    more = f", first {shown} of {len(series)} flows" if len(series) > shown else ""
    ax.set_title(f"Throughput per flow over time (bins of {width} cycles{more})")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return fig
