"""Statistics of a sweep: means over seeds with confidence intervals, per point and per SL.

Used by :mod:`flitsim.plot`, :mod:`flitsim.report` and :mod:`flitsim.demo`; needs only the
standard library (and pyarrow to read a sweep directory).

* :func:`mean_ci` gives the mean of some values and the half-width of its two-sided Student-t
  confidence interval as an :class:`Estimate` (:func:`t_quantile` and :func:`t_cdf` are the
  Student-t distribution it uses, computed without scipy).
* :func:`summarize` aggregates a sweep's summary table per sweep point (means over seeds of
  :data:`SUMMARY_STATS`, how many seeds saturated or deadlocked); :func:`summarize_per_sl`
  does the same per (point, service level) for :data:`PER_SL_STATS`.
* :func:`load` accepts a sweep directory or an already loaded sweep; :func:`vary_of`,
  :func:`seeds_of`, :func:`spec_of` and :func:`directory_of` read what was swept and where
  it is stored; :class:`SweepGrid` orders points and splits the varied keys into the one
  along a line (the load, when varied) and the others.

>>> e = mean_ci([1.0, 2.0, 3.0])
>>> e.mean, round(e.half, 4), e.n
(2.0, 2.4841, 3)
>>> mean_ci([5.0]).half
nan
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

from ._core import FlitsimError
from ._format import value_label
from .values import TOMLDecodeError, toml_loads

__all__ = [
    "CONFIDENCE",
    "PER_SL_STATS",
    "SATURATION_TOLERANCE",
    "SUMMARY_STATS",
    "Estimate",
    "SweepGrid",
    "directory_of",
    "load",
    "mean_ci",
    "seeds_of",
    "spec_of",
    "summarize",
    "summarize_per_sl",
    "t_cdf",
    "t_quantile",
    "vary_of",
]

CONFIDENCE = 0.95
# Default of run.saturation_tolerance (docs/model.md).
SATURATION_TOLERANCE = 0.05
# The key a sweep's lines run along when it is varied.
LOAD_KEY = "traffic.load"

Point = Tuple[Any, ...]
SweepSource = Union[str, "Path", Any]


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


class Estimate(NamedTuple):
    """Mean over seeds with the half-width of its confidence interval.

    ``half`` is NaN when there are fewer than two values (no interval); ``mean`` is NaN when
    there is no value at all.
    """

    mean: float
    half: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            step = d * c
            h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution function of Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t: the ``t`` with ``P(T <= t) = p`` (``t_quantile(0.975, 2)``
    is 4.3027)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def mean_ci(values: Iterable[Any], confidence: float = CONFIDENCE) -> Estimate:
    """Mean of ``values`` and the half-width of its two-sided Student-t confidence interval.

    ``half = t_{(1+confidence)/2, n-1} · s / √n`` with ``s`` the sample standard deviation.
    ``None`` and NaN values are ignored (an SL that delivered nothing has no latency).
    """
    xs = [float(v) for v in values if v is not None and not _isnan(v)]
    n = len(xs)
    if n == 0:
        return Estimate(math.nan, math.nan, 0)
    mean = math.fsum(xs) / n
    if n < 2:
        return Estimate(mean, math.nan, n)
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(var / n)
    return Estimate(mean, half, n)


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


# ---------------------------------------------------------------------------------------------
# Loading and grouping
# ---------------------------------------------------------------------------------------------


def load(source: SweepSource) -> Any:
    """The sweep to plot: ``source`` itself if it already is a loaded sweep (anything with
    the attributes of :class:`flitsim.SweepResult`), else :func:`flitsim.load_sweep` of the
    directory ``source``. Raises :class:`FlitsimError` when there is no sweep or no finished
    run in it."""
    if hasattr(source, "summary") and hasattr(source, "vary"):
        return source
    from . import load_sweep

    path = Path(source)
    if not path.exists():
        raise FlitsimError(f"sweep directory not found: {path}")
    if not path.is_dir():
        raise FlitsimError(f"not a sweep directory: {path}")
    result = load_sweep(path)
    if result.summary.num_rows == 0:
        raise FlitsimError(f"{path}: the sweep has no finished run yet")
    return result


def rows_of(table: Any) -> List[Dict[str, Any]]:
    if table is None:
        return []
    if isinstance(table, list):
        return table
    return table.to_pylist()


def vary_of(sweep: Any) -> Dict[str, List[Any]]:
    vary = getattr(sweep, "vary", None)
    if vary is None:
        vary = (getattr(sweep, "spec", None) or {}).get("vary") or {}
    return {str(k): list(v) for k, v in dict(vary).items()}


def seeds_of(sweep: Any) -> List[Any]:
    seeds = (getattr(sweep, "spec", None) or {}).get("seeds")
    if seeds:
        return list(seeds)
    return sorted({r.get("seed") for r in rows_of(sweep.summary)}, key=str)


def spec_of(sweep: Any) -> Dict[str, Any]:
    spec = getattr(sweep, "spec", None)
    return dict(spec) if spec else {}


def saturation_tolerance(sweep: Any) -> float:
    text = spec_of(sweep).get("config")
    if not text:
        return SATURATION_TOLERANCE
    try:
        tol = toml_loads(text).get("run", {}).get("saturation_tolerance")
    except (TOMLDecodeError, AttributeError):
        return SATURATION_TOLERANCE
    return float(tol) if isinstance(tol, (int, float)) else SATURATION_TOLERANCE


def _index_in(values: Sequence[Any], v: Any) -> Tuple[int, str]:
    for i, candidate in enumerate(values):
        if candidate == v and type(candidate) is type(v):
            return (i, "")
    for i, candidate in enumerate(values):
        if candidate == v or value_label(candidate) == value_label(v) or str(candidate) == str(v):
            return (i, "")
    return (len(values), str(v))


class SweepGrid:
    """The varied keys of a sweep: which one runs along a line, which split panels/styles."""

    def __init__(self, vary: Dict[str, List[Any]]) -> None:
        self.vary = vary
        self.keys = list(vary)
        if LOAD_KEY in vary:
            self.series_key: Optional[str] = LOAD_KEY
        else:
            self.series_key = self.keys[0] if self.keys else None
        self.group_keys = [k for k in self.keys if k != self.series_key]

    def point(self, row: Dict[str, Any]) -> Point:
        return tuple(row.get(k) for k in self.keys)

    def order(self, point: Point) -> Tuple[Tuple[int, str], ...]:
        return tuple(_index_in(self.vary[k], v) for k, v in zip(self.keys, point))

    def group(self, point: Point) -> Point:
        return tuple(v for k, v in zip(self.keys, point) if k != self.series_key)

    def series_value(self, point: Point) -> Any:
        if self.series_key is None:
            return None
        return point[self.keys.index(self.series_key)]


def group_rows(
    rows: Iterable[Dict[str, Any]], key: Callable[[Dict[str, Any]], Any]
) -> Dict[Any, List[Dict[str, Any]]]:
    groups: Dict[Any, List[Dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


# The latency columns that the summary and the per-SL tables both have.
_LATENCY_STATS = (
    "latency_mean",
    "latency_p50",
    "latency_p99",
    "latency_max",
    "network_latency_mean",
    "network_latency_p99",
)
SUMMARY_STATS = ("offered_load", "accepted_load", *_LATENCY_STATS, "hops_mean")
PER_SL_STATS = ("offered_load", "accepted_load", "share", *_LATENCY_STATS, "message_latency_mean")


def summarize(sweep: Any, confidence: float = CONFIDENCE) -> List[Dict[str, Any]]:
    """One entry per sweep point, in grid order: ``point`` (varied key → value), ``seeds``
    (rows averaged), ``saturated`` and ``deadlocked`` (how many seeds), and an
    :class:`Estimate` (mean over seeds and CI half-width) for each of :data:`SUMMARY_STATS`.
    A statistic a run did not measure (``None``: a deadlock before any packet was measured)
    is left out of its mean; with no value at all the mean is NaN."""
    grid = SweepGrid(vary_of(sweep))
    groups = group_rows(rows_of(sweep.summary), grid.point)
    out = []
    for point in sorted(groups, key=grid.order):
        rows = groups[point]
        entry: Dict[str, Any] = {
            "point": dict(zip(grid.keys, point)),
            "key": point,
            "seeds": len(rows),
            "saturated": sum(1 for r in rows if r.get("saturated")),
            "deadlocked": sum(1 for r in rows if r.get("deadlock")),
        }
        for col in SUMMARY_STATS:
            entry[col] = mean_ci((r.get(col) for r in rows), confidence)
        out.append(entry)
    return out


def summarize_per_sl(sweep: Any, confidence: float = CONFIDENCE) -> List[Dict[str, Any]]:
    """One entry per (sweep point, SL), in grid then SL order: ``point``, ``sl``, ``name``,
    ``seeds``, an :class:`Estimate` for each of :data:`PER_SL_STATS`, ``deadlocked`` (in how
    many seeds the fabric deadlocked) and ``saturated``: in how many seeds the SL's accepted
    load fell below ``(1 − run.saturation_tolerance)`` of its offered load or the fabric
    deadlocked. (The engine's own ``saturated`` flag is per run;
    this one tells a class that keeps up from one that does not.)"""
    grid = SweepGrid(vary_of(sweep))
    tol = saturation_tolerance(sweep)
    deadlocked = {
        (grid.point(r), r.get("seed"))
        for r in rows_of(sweep.summary)
        if r.get("deadlock")
    }
    groups = group_rows(
        rows_of(sweep.per_sl), lambda r: (grid.point(r), r.get("sl"), r.get("name"))
    )
    out = []
    for key in sorted(groups, key=lambda k: (grid.order(k[0]), sl_order(k[1]))):
        point, sl, name = key
        rows = groups[key]
        entry: Dict[str, Any] = {
            "point": dict(zip(grid.keys, point)),
            "key": point,
            "sl": sl,
            "name": name,
            "seeds": len(rows),
        }
        for col in PER_SL_STATS:
            entry[col] = mean_ci((r.get(col) for r in rows), confidence)
        entry["saturated"] = sum(
            1
            for r in rows
            if (point, r.get("seed")) in deadlocked
            or _below(r.get("accepted_load"), r.get("offered_load"), tol)
        )
        entry["deadlocked"] = sum(1 for r in rows if (point, r.get("seed")) in deadlocked)
        out.append(entry)
    return out


def _below(accepted: Any, offered: Any, tol: float) -> bool:
    if accepted is None or offered is None:
        return False
    return float(accepted) < (1.0 - tol) * float(offered)


def deadlock_load(entry: Dict[str, Any]) -> float:
    """Where a deadlocked point goes on a load axis: its measured offered load, else the
    configured one (the point's ``traffic.load``), else NaN."""
    offered = entry["offered_load"].mean
    if math.isfinite(offered):
        return offered
    load = entry["point"].get(LOAD_KEY)
    if isinstance(load, (int, float)) and not isinstance(load, bool):
        return float(load)
    return math.nan


def sl_order(sl: Any) -> Tuple[int, Any]:
    return (0, sl) if isinstance(sl, int) else (1, str(sl))




def directory_of(source: SweepSource) -> Path:
    """The directory a sweep was loaded from (for default output paths)."""
    if not hasattr(source, "summary"):
        return Path(source)
    for attr in ("path", "out", "out_dir", "directory"):
        value = getattr(source, attr, None)
        if value:
            return Path(value)
    raise FlitsimError("no output path given and the sweep does not say where it is stored")
