"""Sweeps for the plot and report tests.

:func:`make_sweep` runs a small sweep with ``flitsim.sweep``; :func:`run_tables` and
:func:`table_sweep` build in-memory sweeps (the attributes of ``flitsim.SweepResult``:
``summary``, ``per_sl``, ``histogram``, ``vary``, ``spec``) from real runs or from hand-made
rows following the sweep dataset contract, so the plotting code can be tested on its own.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Sequence

import pyarrow as pa

import flitsim
from helpers import TWO_CLASS_CONFIG

LAT = ("mean", "p50", "p99", "max")


def rows_of_run(r: Any, prefix: Dict[str, Any]):
    """(summary row, per-SL rows, histogram rows) of one run, after ``prefix`` columns."""
    lat, net, flits = r["latency"], r["network_latency"], r["flits"]
    summary: Dict[str, Any] = dict(prefix)
    summary.update(
        endpoints=r["endpoints"],
        offered_load=r["offered_load"],
        accepted_load=r["accepted_load"],
        saturated=r["saturated"],
        drained=r["drained"],
        deadlock=bool(r["deadlock"]),
    )
    summary.update({f"latency_{s}": float(lat[s]) for s in LAT})
    summary.update({f"network_latency_{s}": float(net[s]) for s in LAT})
    summary.update(
        hops_mean=r["hops_mean"],
        flits_generated=flits["generated"],
        flits_delivered=flits["delivered"],
        flits_remaining=flits["remaining"],
        cycles_total=r["cycles"]["total"],
        wall_seconds=r["performance"]["wall_seconds"],
    )
    per_sl, names = [], {}
    for c in r["per_sl"]:
        names[c["sl"]] = c["name"]
        for stat in ("offered_load", "accepted_load", "share"):
            summary[f"sl.{c['name']}.{stat}"] = float(c[stat])
        summary[f"sl.{c['name']}.latency_mean"] = float(c["latency"]["mean"])
        summary[f"sl.{c['name']}.latency_p99"] = float(c["latency"]["p99"])
        row = dict(prefix)
        row.update(sl=c["sl"], name=c["name"], offered_load=c["offered_load"],
                   accepted_load=c["accepted_load"], share=c["share"])
        row.update({f"latency_{s}": float(c["latency"][s]) for s in LAT})
        row["network_latency_mean"] = float(c["network_latency"]["mean"])
        row["network_latency_p99"] = float(c["network_latency"]["p99"])
        per_sl.append(row)
    hist = []
    for h in r["latency_histogram"]:
        row = {k: v for k, v in prefix.items() if k != "version"}
        row.update(sl=h["sl"], name=names[h["sl"]], latency=h["latency"], count=h["count"])
        hist.append(row)
    return summary, per_sl, hist


def make_sweep(
    out: Path,
    config: str = TWO_CLASS_CONFIG,
    vary: Optional[Dict[str, List[Any]]] = None,
    seeds: int = 2,
) -> Path:
    """Run a small sweep with flitsim.sweep into ``out`` and return ``out``."""
    flitsim.sweep(
        config,
        vary=vary if vary is not None else {"traffic.load": [0.2, 0.5, 0.9]},
        seeds=seeds,
        jobs=2,
        out=out,
        progress=False,
    )
    return Path(out)


def run_tables(
    config: str, loads: Sequence[float], seeds: Sequence[int]
) -> SimpleNamespace:
    """An in-memory sweep over ``traffic.load`` built straight from flitsim.run results."""
    summary, per_sl, hist = [], [], []
    for load in loads:
        for seed in seeds:
            r = flitsim.run(config, seed=seed, traffic__load=load)
            prefix = {"traffic.load": float(load), "seed": seed,
                      "config_hash": r["config_hash"], "version": flitsim.__version__}
            s, p, h = rows_of_run(r, prefix)
            summary.append(s)
            per_sl.extend(p)
            hist.extend(h)
    return table_sweep(summary, per_sl, hist, {"traffic.load": [float(x) for x in loads]},
                       seeds, config)


def table_sweep(
    summary: List[Dict[str, Any]],
    per_sl: List[Dict[str, Any]],
    histogram: List[Dict[str, Any]],
    vary: Dict[str, List[Any]],
    seeds: Sequence[int],
    config: str = "",
) -> SimpleNamespace:
    """An in-memory sweep (the attributes of flitsim.SweepResult) from rows."""
    return SimpleNamespace(
        summary=pa.Table.from_pylist(summary),
        per_sl=pa.Table.from_pylist(per_sl),
        histogram=pa.Table.from_pylist(histogram),
        vary=vary,
        spec={"format": "flitsim-sweep", "version": 1, "config": config, "vary": vary,
              "seeds": list(seeds), "flitsim_version": flitsim.__version__,
              "origin": "<test>", "overrides": []},
    )
