"""A self-contained demonstration: a two-class load sweep on a small torus.

``flitsim demo`` runs :data:`DEMO_CONFIG` — a 4x4 torus, one endpoint per switch, uniform
random traffic, dimension-order routing — at the offered loads :data:`DEMO_LOADS` with
:data:`DEMO_SEEDS` seeds each. The traffic has two classes: ``hi`` (a quarter of the load,
8-flit messages) and ``lo`` (three quarters, 16-flit messages). With ``routing.vls = 4`` DOR
gives each class its own pair of VLs (two per class for the torus dateline), and the strict
priority schedulers of the switches and NICs serve ``hi``'s VLs first. As the load grows ``lo``
saturates near 0.75 flits/cycle/endpoint while ``hi`` keeps its throughput and a low latency.

The demo writes the sweep's Parquet dataset, the six plots of :mod:`flitsim.plot` and the HTML
report of :mod:`flitsim.report` into one directory.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

DEMO_CONFIG = """\
# flitsim demo: 4x4 torus, one endpoint per switch, uniform random traffic, two classes.
# "hi" (1/4 of the load) and "lo" (3/4) each get two VLs (DOR needs two per class on a
# torus); strict priority in switches and NICs serves hi's VLs 0-1 before lo's VLs 2-3.
seed = 1

[topology]
kind = "torus"
sides = [4, 4]
endpoints_per_switch = 1
link_latency = 1

[routing]
engine = "dor"
vls = 4

[switch]
vl_buffer_flits = 32
routing_delay = 1
scheduler = { kind = "strict_priority", order = [0, 1, 2, 3] }

[nic]
scheduler = { kind = "strict_priority", order = [0, 1, 2, 3] }

[traffic]
load = 0.1
pattern = "uniform"

[[traffic.class]]
name = "hi"
share = 1.0
message_flits = 8
mtu_flits = 8

[[traffic.class]]
name = "lo"
share = 3.0
message_flits = 16
mtu_flits = 16

[run]
warmup = 10000
measure = 50000
"""

# Finer steps around the knee, where the low-priority class saturates.
DEMO_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
DEMO_SEEDS = 2
DEFAULT_OUT = Path("flitsim-demo")


class DemoOutput(NamedTuple):
    """What :func:`run_demo` produced. Without matplotlib, ``plots`` is empty, ``report`` is
    ``None`` and ``skipped`` says why."""

    out_dir: Path
    sweep: Any
    rows: List[Dict[str, Any]]
    plots: List[Path]
    report: Optional[Path]
    seconds: float
    skipped: Optional[str] = None


def run_demo(
    out_dir: Union[str, Path] = DEFAULT_OUT,
    *,
    loads: Sequence[float] = DEMO_LOADS,
    seeds: int = DEMO_SEEDS,
    jobs: Optional[int] = None,
) -> DemoOutput:
    """Run the demo sweep into ``out_dir`` and write its plots and report there.

    ``jobs`` defaults to the number of CPU cores. Returns the directory, the loaded sweep,
    the table rows (:func:`table_rows`), the plot paths, the report path and the wall time.
    Without matplotlib the dataset is still written; the plots and the report are skipped.
    """
    import flitsim

    from .plot import figures, save_figures
    from .report import write_report
    from .stats import load

    start = time.perf_counter()
    out = Path(out_dir)
    jobs = jobs or os.cpu_count() or 1
    flitsim.sweep(
        DEMO_CONFIG,
        vary={"traffic.load": [float(x) for x in loads]},
        seeds=seeds,
        jobs=jobs,
        out=out,
        # An earlier demo's dataset is replaced; anything else is refused.
        overwrite=_holds_a_demo(out),
        progress=False,
    )
    sweep = load(out)
    rows = table_rows(sweep)
    try:
        figs = figures(sweep)  # drawn once, saved as files and embedded in the report
    except ImportError as e:
        return DemoOutput(out, sweep, rows, [], None, time.perf_counter() - start, str(e))
    plots = save_figures(figs, out / "plots", ("png", "svg"))
    report = write_report(sweep, dest=out / "report.html", figs=figs)
    return DemoOutput(out, sweep, rows, plots, report, time.perf_counter() - start)


def _holds_a_demo(out: Path) -> bool:
    """Whether ``out`` holds an earlier demo's dataset (which the demo may replace). Raises
    :class:`flitsim.FlitsimError` when it holds some other dataset, so that ``--out`` cannot
    wipe a sweep by mistake."""
    from . import FlitsimError

    spec_path = out / "sweep.json"
    has_data = any((out / name).exists() for name in ("summary", "per_sl", "histogram"))
    if not spec_path.exists() and not has_data:
        return False
    try:
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        spec = None
    if isinstance(spec, dict) and spec.get("config") == DEMO_CONFIG:
        return True
    raise FlitsimError(
        f"{out} already holds a sweep dataset that is not the demo's; "
        "choose another directory with --out"
    )


def table_rows(sweep: Any) -> List[Dict[str, Any]]:
    """One row per load (means over seeds): ``load``, ``accepted_load``, ``latency_mean``,
    ``latency_p99``, ``saturated`` (seeds that saturated), ``seeds`` and, per class,
    ``latency_mean.<name>``."""
    from .stats import summarize, summarize_per_sl

    per_sl: Dict[Any, Dict[str, float]] = {}
    for e in summarize_per_sl(sweep):
        per_sl.setdefault(e["key"], {})[str(e["name"])] = e["latency_mean"].mean
    rows = []
    for e in summarize(sweep):
        row: Dict[str, Any] = {
            "load": e["point"].get("traffic.load"),
            "accepted_load": e["accepted_load"].mean,
            "latency_mean": e["latency_mean"].mean,
            "latency_p99": e["latency_p99"].mean,
            "saturated": e["saturated"],
            "seeds": e["seeds"],
        }
        for name, value in per_sl.get(e["key"], {}).items():
            row[f"latency_mean.{name}"] = value
        rows.append(row)
    return rows
