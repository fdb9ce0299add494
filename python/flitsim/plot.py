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

``throughput_over_time_figure(result)`` draws one run's delivered-flits time series
(``run.timeseries_bin``), one line per class, and ``flow_throughput_over_time_figure(result)``
one line per flow (MB/s against µs with ``[units]``); sweeps do not store time series, so they
are not among the sweep figures.

The figures are drawn in the private package ``flitsim._plots`` (``load``: the first three;
``cdf``; ``qos``: the two per-SL ones; ``common``: what they share) and are public here.

matplotlib is optional (``pip install 'flitsim[plot]'``); it is imported only when a figure is
drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import FlitsimError
from ._plots.cdf import latency_cdf_figure
from ._plots.common import (  # noqa: F401 - re-exported: flitsim.plot's constants
    DPI,
    LATENCY_LABEL,
    LINESTYLES,
    LOAD_LABEL,
    MARKERS,
    MATPLOTLIB_MISSING,
    MAX_BAR_POINTS,
    MAX_CDF_ROWS,
    MAX_PANELS,
    SL_COLORS,
    TOTAL_COLOR,
    _matplotlib,
)
from ._plots.load import (
    accepted_vs_offered_figure,
    latency_vs_load_figure,
    sl_throughput_figure,
)
from ._plots.qos import (  # noqa: F401 - re-exported
    OFFERED_LABEL,
    REFERENCE_DASHES,
    sl_latency_vs_offered_figure,
    sl_share_vs_offered_figure,
)
from ._plots.timeseries import flow_throughput_over_time_figure, throughput_over_time_figure
from .stats import (  # noqa: F401 - re-exported: the statistics the figures draw
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
from .stats import directory_of as _directory_of

__all__ = [
    "ALL_PLOT_NAMES",
    "PLOT_NAMES",
    "SL_PLOT_NAMES",
    "Estimate",
    "accepted_vs_offered_figure",
    "figures",
    "flow_throughput_over_time_figure",
    "latency_cdf_figure",
    "latency_vs_load_figure",
    "load",
    "mean_ci",
    "plot_run",
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
    "throughput_over_time_figure",
]

# The figures embedded in the HTML report (flitsim.report has a title and caption for each).
PLOT_NAMES = ("latency_vs_load", "accepted_vs_offered", "sl_throughput", "latency_cdf")
# Per-SL figures against the total offered load, one panel per scheduler (or other varied key).
SL_PLOT_NAMES = ("sl_latency_vs_offered", "sl_share_vs_offered")
# Everything figures() draws and plot_sweep writes, in this order.
ALL_PLOT_NAMES = PLOT_NAMES + SL_PLOT_NAMES


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
    fmts = _formats(formats)
    sweep = load(out_dir)
    if dest is None:
        dest = Path(_directory_of(out_dir)) / "plots"
    return save_figures(figures(sweep), dest, fmts)


def _formats(formats: Sequence[str]) -> List[str]:
    if isinstance(formats, str):
        formats = (formats,)
    fmts: List[str] = []
    for f in formats:
        f = str(f).lower().lstrip(".")
        if f not in ("png", "svg", "pdf"):
            raise FlitsimError(f"unsupported plot format {f!r} (use png, svg or pdf)")
        if f not in fmts:
            fmts.append(f)
    if not fmts:
        raise FlitsimError("no plot format given")
    return fmts


def plot_run(
    result_file: Union[str, Path],
    dest: Optional[Union[str, Path]] = None,
    formats: Sequence[str] = ("png", "svg"),
) -> List[Path]:
    """Draw ``throughput_over_time`` of one run's JSON result (``flitsim run --json`` of an
    experiment with ``run.timeseries_bin``), and ``flow_throughput_over_time`` when the run
    has flows, and save them in every format of ``formats`` into ``dest`` (default: the
    file's directory). Returns the written paths."""
    import json

    fmts = _formats(formats)
    path = Path(result_file)
    try:
        summary = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise FlitsimError(f"{path}: not a run's JSON result ({e})") from e
    if not isinstance(summary, dict) or not summary.get("timeseries"):
        raise FlitsimError(
            f"{path}: the run has no time series (set run.timeseries_bin to plot throughput "
            "over time)"
        )
    _matplotlib()
    figs = {"throughput_over_time": throughput_over_time_figure(summary)}
    if (summary.get("timeseries") or {}).get("flows"):
        figs["flow_throughput_over_time"] = flow_throughput_over_time_figure(summary)
    return save_figures(figs, dest or path.parent, fmts)


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
