"""The result of one experiment, and its flattening into Arrow rows.

:class:`Result` wraps the engine's JSON summary. It reads like that summary (it is a
read-only :class:`collections.abc.Mapping`, so ``r["accepted_load"]``, ``r.get(...)``,
``"x" in r`` and ``dict(r)`` all work) and adds Arrow views of its list-shaped parts:
:attr:`Result.per_sl`, :attr:`Result.ports`, :attr:`Result.latency_histogram`,
:attr:`Result.flows` and :attr:`Result.timeseries`.

The row builders at the bottom (:func:`summary_row`, :func:`per_sl_rows`,
:func:`histogram_rows`) are shared with :mod:`flitsim.sweep`, so a sweep's tables have exactly
the columns described here. Every column is declared once, as the path of the summary field
it holds; its Arrow type comes from the core's JSON Schema of the summary
(``_core.result_schema_json()``, derived from the Rust result types), and
``tests/python/test_results.py`` checks that every field of that schema is in a table or in
:data:`NOT_TABLED`.

pyarrow is imported only when a table is first asked for, so ``import flitsim`` stays quick.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import pyarrow as pa

__all__ = ["Result"]

# The latency statistics copied into tables, as float64 (`count`, an integer, is separate).
_LATENCY_STATS = ("mean", "p50", "p99", "max")


class Result(Mapping):
    """The summary of one run, readable as a dict, with Arrow tables of its detail.

    It is a read-only mapping, not a ``dict``: use ``r.summary`` (or ``dict(r)``) where a
    real dict is needed, e.g. for :func:`json.dumps`, or ``r.to_json()``.

    >>> import flitsim
    >>> r = flitsim.run({"seed": 1,
    ...                  "topology": {"kind": "torus", "sides": [4, 4]},
    ...                  "traffic": {"load": 0.2},
    ...                  "run": {"warmup": 200, "measure": 1000}})
    >>> r["seed"], r["endpoints"], "accepted_load" in r
    (1, 16, True)
    >>> r.per_sl.column_names[:3]
    ['sl', 'name', 'offered_load']
    >>> r.ports.num_rows == len(r["ports"])
    True
    >>> import json; json.loads(r.to_json())["config_hash"] == r["config_hash"]
    True
    """

    __slots__ = ("_summary", "_text", "_tables")

    def __init__(self, summary: Mapping[str, Any], text: Optional[str] = None) -> None:
        self._summary: Dict[str, Any] = dict(summary)
        self._text = text
        self._tables: Dict[str, "pa.Table"] = {}

    @classmethod
    def from_json(cls, text: str) -> "Result":
        """Build a result from the engine's JSON text (as returned by ``_core.run_json``)."""
        return cls(json.loads(text), text)

    # -- Mapping ------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self._summary[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._summary)

    def __len__(self) -> int:
        return len(self._summary)

    def __repr__(self) -> str:
        s = self._summary
        shown = ", ".join(
            f"{k}={s[k]!r}"
            for k in ("topology", "routing", "seed", "offered_load", "accepted_load", "saturated")
            if k in s
        )
        return f"Result({shown})"

    def __getstate__(self) -> Tuple[Dict[str, Any], Optional[str]]:
        return self._summary, self._text

    def __setstate__(self, state: Tuple[Dict[str, Any], Optional[str]]) -> None:
        self._summary, self._text = state
        self._tables = {}

    # -- views --------------------------------------------------------------------------

    @property
    def summary(self) -> Dict[str, Any]:
        """The engine's whole summary as a plain dict (the same object on every access)."""
        return self._summary

    def to_json(self, indent: Optional[int] = None) -> str:
        """The summary as JSON text: the engine's own text unless ``indent`` is given."""
        if self._text is not None and indent is None:
            return self._text.strip()
        return json.dumps(self._summary, indent=indent)

    @property
    def per_sl(self) -> "pa.Table":
        """One row per service level (traffic class).

        Columns: ``sl``, ``name``, ``offered_load``, ``accepted_load``, ``share``,
        ``latency_{mean,p50,p99,max,count}``, ``network_latency_{mean,p50,p99,max,count}``,
        ``message_latency_{mean,p50,p99,max,count}`` (a message: what a source generates, one
        or more packets; ``count`` counts messages), ``jitter_std`` and
        ``jitter_p99_minus_p50`` (of the message latency). With ``[units]`` also
        ``latency_ns_*``, ``network_latency_ns_*``, ``message_latency_ns_*`` (mean, p50, p99,
        max), ``jitter_std_ns``, ``offered_gbps``, ``accepted_gbps`` and ``accepted_mbps``.
        """
        return self._table("per_sl", _build_per_sl)

    @property
    def ports(self) -> "pa.Table":
        """One row per switch port: ``switch``, ``port``, ``to_endpoint``, ``utilisation``,
        ``flits`` (all VLs) and ``vl_flits`` (a list, one count per VL).

        Empty when the run had ``run.per_port_stats = false``.
        """
        return self._table("ports", _build_ports)

    @property
    def latency_histogram(self) -> "pa.Table":
        """Packet latency histogram: ``sl``, ``name``, ``latency`` (bin lower bound, cycles),
        ``count``."""
        return self._table("latency_histogram", _build_histogram)

    @property
    def flows(self) -> "pa.Table":
        """One row per flow (``[[traffic.flow]]`` and ``[[traffic.flow_set]]``): ``id``,
        ``src``, ``dst``, ``sl``, ``class``, ``start``, ``stop``, ``offered_rate`` and
        ``accepted_rate`` (flits/cycle of the flow in the window), ``generated_flits``,
        ``delivered_flits``, ``message_latency_{mean,p50,p99,max,count}``, ``jitter_std``,
        ``jitter_p99_minus_p50``; with ``[units]`` also ``offered_mbps``, ``accepted_mbps``,
        ``accepted_gbps``, ``generated_bytes``, ``delivered_bytes`` and
        ``message_latency_ns_{mean,p50,p99,max}``.

        Empty (same columns) when the run had no flows.
        """
        return self._table("flows", _build_flows)

    @property
    def timeseries(self) -> "pa.Table":
        """Delivered flits per class and per flow over time, one row per (bin, class) and per
        (bin, flow): ``bin_start`` (cycle the bin starts), ``bin_cycles`` (its width,
        ``run.timeseries_bin``), ``sl``, ``name`` (the class), ``flits``, ``flow`` (the flow
        id; null on a class's rows, which count every flit of the class, its flows' included);
        with ``[units]`` also ``bytes`` (flits × ``units.flit_bytes``) and ``bin_start_ns``.

        The bins cover the whole run (warm-up, measurement window and drain). Empty (same
        columns) when the run had no ``run.timeseries_bin``.
        """
        return self._table("timeseries", _build_timeseries)

    def _table(self, name: str, build: Any) -> "pa.Table":
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = build(self._summary)
        return table


# ---------------------------------------------------------------------------------------
# Columns. Every column names the result field it holds by its path in the engine's
# summary, and takes its Arrow type from the core's JSON Schema of that summary
# (`_core.result_schema_json()`, derived from the Rust `RunResult`), so field names and types
# are not re-declared here; a field renamed in the core fails `_arrow_type` instead of
# leaving an empty column. `cast` changes the cell: "float" reads a number as float64 (the
# integer latency percentiles sit next to the float mean), "present" is True when an
# optional field is set, "sum" adds up a list of integers, "sl_name" is the class name of
# the SL the field holds.


class _Column(NamedTuple):
    name: str
    path: Tuple[str, ...]
    cast: str = ""


def _latency_columns(block: str, stats: Sequence[str], cast: str = "float") -> List[_Column]:
    return [_Column(f"{block}_{s}", (block, s), "" if s == "count" else cast) for s in stats]


# One row per run (`RunResult`), before the wide per-SL columns.
_SUMMARY_COLUMNS: Tuple[_Column, ...] = (
    _Column("endpoints", ("endpoints",)),
    _Column("offered_load", ("offered_load",)),
    _Column("accepted_load", ("accepted_load",)),
    _Column("saturated", ("saturated",)),
    _Column("drained", ("drained",)),
    _Column("deadlock", ("deadlock",), "present"),
    *_latency_columns("latency", _LATENCY_STATS),
    *_latency_columns("network_latency", _LATENCY_STATS),
    _Column("hops_mean", ("hops_mean",)),
    _Column("flits_generated", ("flits", "generated")),
    _Column("flits_delivered", ("flits", "delivered")),
    _Column("flits_remaining", ("flits", "remaining")),
    _Column("cycles_total", ("cycles", "total")),
    _Column("wall_seconds", ("performance", "wall_seconds")),
)

# Physical twins of the cycle figures (present only when the experiment has `[units]`): in
# a summary row only when the run has them, so runs without `[units]` keep their columns.
_PHYSICAL_COLUMNS: Tuple[_Column, ...] = (
    *_latency_columns("latency_ns", _LATENCY_STATS),
    *_latency_columns("network_latency_ns", _LATENCY_STATS),
    _Column("offered_gbps", ("offered_gbps",)),
    _Column("accepted_gbps", ("accepted_gbps",)),
    _Column("accepted_mbps", ("accepted_mbps",)),
)

# Per-SL statistics (`ClassResult`) repeated as wide columns `sl.<name>.<stat>` in a summary
# row.
_SL_WIDE_COLUMNS: Tuple[_Column, ...] = (
    _Column("offered_load", ("offered_load",), "float"),
    _Column("accepted_load", ("accepted_load",), "float"),
    _Column("share", ("share",), "float"),
    *_latency_columns("latency", ("mean", "p99")),
)
SL_WIDE_STATS = tuple(c.name for c in _SL_WIDE_COLUMNS)

# One row per SL (`ClassResult`) in a sweep's per_sl table.
_PER_SL_COLUMNS: Tuple[_Column, ...] = (
    _Column("sl", ("sl",)),
    _Column("name", ("name",)),
    _Column("offered_load", ("offered_load",)),
    _Column("accepted_load", ("accepted_load",)),
    _Column("share", ("share",)),
    *_latency_columns("latency", _LATENCY_STATS),
    *_latency_columns("network_latency", ("mean", "p99")),
    *_latency_columns("message_latency", ("mean", "p99")),
    _Column("jitter_std", ("jitter", "std")),
)

# Columns of a sweep's per_sl table that datasets written before they existed do not have; a
# file without them is complete (they read as null next to newer files).
PER_SL_ADDED = ("message_latency_mean", "message_latency_p99", "jitter_std")

# One row per SL in `Result.per_sl`: every statistic, with the packet counts.
_RESULT_PER_SL_COLUMNS: Tuple[_Column, ...] = (
    *_PER_SL_COLUMNS[:5],
    *_latency_columns("latency", (*_LATENCY_STATS, "count")),
    *_latency_columns("network_latency", (*_LATENCY_STATS, "count")),
    *_latency_columns("message_latency", (*_LATENCY_STATS, "count")),
    _Column("jitter_std", ("jitter", "std")),
    _Column("jitter_p99_minus_p50", ("jitter", "p99_minus_p50"), "float"),
)

# A class's physical twins (`ClassPhysical`, only with `[units]`), in `Result.per_sl`.
_PER_SL_PHYSICAL_COLUMNS: Tuple[_Column, ...] = (
    *_latency_columns("latency_ns", _LATENCY_STATS),
    *_latency_columns("network_latency_ns", _LATENCY_STATS),
    *_latency_columns("message_latency_ns", _LATENCY_STATS),
    _Column("jitter_std_ns", ("jitter_std_ns",)),
    _Column("offered_gbps", ("offered_gbps",)),
    _Column("accepted_gbps", ("accepted_gbps",)),
    _Column("accepted_mbps", ("accepted_mbps",)),
)

# One row per switch port (`PortResult`).
_PORT_COLUMNS: Tuple[_Column, ...] = (
    _Column("switch", ("switch",)),
    _Column("port", ("port",)),
    _Column("to_endpoint", ("to_endpoint",)),
    _Column("utilisation", ("utilisation",), "float"),
    _Column("flits", ("vl_flits",), "sum"),
    _Column("vl_flits", ("vl_flits",)),
)

# One row per (SL, latency bin) (`HistogramBin`).
_HISTOGRAM_COLUMNS: Tuple[_Column, ...] = (
    _Column("sl", ("sl",)),
    _Column("name", ("sl",), "sl_name"),
    _Column("latency", ("latency",)),
    _Column("count", ("count",)),
)

# One row per (time-series bin, class) (`TimeSeries`): long format, built by
# `_build_timeseries`, so its columns are the summary paths they read, from the run's root.
_TIMESERIES_COLUMNS: Tuple[_Column, ...] = (
    _Column("bin_start", ("timeseries", "bin")),
    _Column("bin_cycles", ("timeseries", "bin")),
    _Column("sl", ("timeseries", "classes", "[]", "sl")),
    _Column("name", ("timeseries", "classes", "[]", "name")),
    _Column("flits", ("timeseries", "classes", "[]", "flits")),
)

# The flows' rows of the time series (the class and flit columns above, plus the flow id).
_TIMESERIES_FLOW_COLUMNS: Tuple[_Column, ...] = (
    _Column("flow", ("timeseries", "flows", "[]", "flow")),
    _Column("flits", ("timeseries", "flows", "[]", "flits")),
)

# One row per flow (`FlowResult`).
_FLOW_COLUMNS: Tuple[_Column, ...] = (
    _Column("id", ("id",)),
    _Column("src", ("src",)),
    _Column("dst", ("dst",)),
    _Column("sl", ("sl",)),
    _Column("class", ("class",)),
    _Column("start", ("start",)),
    _Column("stop", ("stop",)),
    _Column("offered_rate", ("offered_rate",)),
    _Column("accepted_rate", ("accepted_rate",)),
    _Column("generated_flits", ("generated_flits",)),
    _Column("delivered_flits", ("delivered_flits",)),
    *_latency_columns("message_latency", (*_LATENCY_STATS, "count")),
    _Column("jitter_std", ("jitter", "std")),
    _Column("jitter_p99_minus_p50", ("jitter", "p99_minus_p50"), "float"),
)

# A flow's physical twins (`FlowPhysical`, only with `[units]`).
_FLOW_PHYSICAL_COLUMNS: Tuple[_Column, ...] = (
    _Column("offered_mbps", ("offered_mbps",)),
    _Column("accepted_mbps", ("accepted_mbps",)),
    _Column("accepted_gbps", ("accepted_gbps",)),
    _Column("generated_bytes", ("generated_bytes",)),
    _Column("delivered_bytes", ("delivered_bytes",)),
    *_latency_columns("message_latency_ns", _LATENCY_STATS),
)

# The summary's lists and the columns of one of their elements: (field, columns).
# Each of these tables reads every field of its element type.
_LIST_TABLES: Tuple[Tuple[str, Tuple[_Column, ...]], ...] = (
    ("per_sl", _RESULT_PER_SL_COLUMNS + _PER_SL_PHYSICAL_COLUMNS),
    ("ports", _PORT_COLUMNS),
    ("latency_histogram", _HISTOGRAM_COLUMNS),
    ("flows", _FLOW_COLUMNS + _FLOW_PHYSICAL_COLUMNS),
)

# Fields of the summary that no table holds (a sweep's tables carry `seed`, `config_hash` and
# `version` as prefix columns of its own). tests/python/test_results.py fails when the core's
# result schema has a field that is neither in a table nor listed here.
NOT_TABLED: Tuple[Tuple[str, ...], ...] = (
    ("version",),
    ("seed",),
    ("config_hash",),
    ("topology",),
    ("routing",),
    ("cycles", "warmup"),
    ("cycles", "measure"),
    ("latency", "count"),
    ("network_latency", "count"),
    ("cdg",),
    ("units",),
    ("trace",),
    ("bandwidth",),
    ("deadline",),
    ("admission",),
    # Per-port and per-switch bins (`run.port_timeseries`): read from the JSON by
    # `flitsim view`.
    ("timeseries", "ports"),
    ("timeseries", "switches"),
    ("performance", "build_seconds"),
    ("performance", "routing_seconds"),
    ("performance", "cpu_seconds"),
    ("performance", "threads"),
    ("performance", "forwarding"),
    ("performance", "cycles_per_second"),
    ("performance", "flit_hops"),
    ("performance", "flit_hops_per_second"),
    # Hardware event counts (`run.counters`): `flitsim bench` reads them from the JSON.
    ("performance", "counters"),
)


# ---------------------------------------------------------------------------------------
# Tables of a single result


def _build_per_sl(summary: Mapping[str, Any]) -> "pa.Table":
    classes = measured(summary).get("per_sl") or ()
    columns = _RESULT_PER_SL_COLUMNS + (_PER_SL_PHYSICAL_COLUMNS if _physical(summary) else ())
    return _from_rows([_cells(c, columns) for c in classes], _schema([], "ClassResult", columns))


def _build_timeseries(summary: Mapping[str, Any]) -> "pa.Table":
    import pyarrow as pa

    ts = summary.get("timeseries") or {}
    width = ts.get("bin")
    rows = [
        {"bin_start": i * width, "bin_cycles": width, "sl": c.get("sl"), "name": c.get("name"),
         "flow": None, "flits": flits}
        for c in ts.get("classes") or ()
        for i, flits in enumerate(c.get("flits") or ())
    ]
    flows = {f.get("id"): f for f in summary.get("flows") or ()}
    for s in ts.get("flows") or ():
        f = flows.get(s.get("flow")) or {}
        rows += [
            {"bin_start": i * width, "bin_cycles": width, "sl": f.get("sl"),
             "name": f.get("class"), "flow": s.get("flow"), "flits": flits}
            for i, flits in enumerate(s.get("flits") or ())
        ]
    fields = [pa.field("bin_start", pa.int64()), pa.field("bin_cycles", pa.int64()),
              pa.field("sl", pa.int64()), pa.field("name", pa.string()),
              pa.field("flits", pa.int64()), pa.field("flow", pa.int64())]
    units = summary.get("units")
    if units:
        fb, ns = units.get("flit_bytes"), units.get("cycle_ns")
        for r in rows:
            r["bytes"] = r["flits"] * fb
            r["bin_start_ns"] = r["bin_start"] * ns
        fields += [pa.field("bytes", pa.int64()), pa.field("bin_start_ns", pa.float64())]
    return _from_rows(rows, pa.schema(fields))


def _build_flows(summary: Mapping[str, Any]) -> "pa.Table":
    flows = summary.get("flows") or ()
    columns = _FLOW_COLUMNS + (_FLOW_PHYSICAL_COLUMNS if _physical(summary) else ())
    return _from_rows([_cells(f, columns) for f in flows], _schema([], "FlowResult", columns))


def _build_ports(summary: Mapping[str, Any]) -> "pa.Table":
    ports = summary.get("ports") or ()
    return _from_rows(
        [_cells(p, _PORT_COLUMNS) for p in ports], _schema([], "PortResult", _PORT_COLUMNS)
    )


def _build_histogram(summary: Mapping[str, Any]) -> "pa.Table":
    return _from_rows(histogram_rows(summary), histogram_schema([]))


# ---------------------------------------------------------------------------------------
# Flat rows shared with flitsim.sweep. `prefix` holds the columns a sweep puts first (the
# varied keys, seed, config_hash, version); the schemas take those columns' fields.


def measured(summary: Mapping[str, Any]) -> Dict[str, Any]:
    """The summary with the statistics of an empty measurement window set to ``None``.

    The contract for a deadlocked run (``deadlock`` present, ``saturated`` true) is that
    statistics of an empty window are ``null``; engines of flitsim 0.1 report them as 0.
    This applies the contract to either: a latency block (total or per SL) that counted no
    packet has no mean, percentiles or maximum, and when a run deadlocked before its
    measurement window began (``cycles.total <= cycles.warmup``) its offered and accepted
    loads, shares and mean hop count are unknown too. Numbers of a window that measured
    something are kept as they are. Returns a new dict; ``summary`` is not changed.

    >>> s = {"deadlock": {"cycle": 900}, "offered_load": 0.0, "accepted_load": 0.0,
    ...      "cycles": {"warmup": 1000, "measure": 5000, "total": 900},
    ...      "hops_mean": 0.0, "latency": {"mean": 0.0, "max": 0, "count": 0},
    ...      "per_sl": [{"sl": 0, "offered_load": 0.0, "latency": {"mean": 0.0, "count": 0}}]}
    >>> m = measured(s)
    >>> m["offered_load"], m["latency"], m["per_sl"][0]["offered_load"]
    (None, {'mean': None, 'max': None, 'count': 0}, None)
    >>> measured({"accepted_load": 0.5, "latency": {"mean": 9.0, "count": 4}}) == {
    ...     "accepted_load": 0.5, "latency": {"mean": 9.0, "count": 4}}
    True
    """
    result = dict(summary)
    cycles = summary.get("cycles") or {}
    total, warmup = cycles.get("total"), cycles.get("warmup")
    empty = (
        bool(summary.get("deadlock"))
        and isinstance(total, int)
        and isinstance(warmup, int)
        and total <= warmup
    )
    for block in ("latency", "network_latency"):
        if block in result:
            result[block] = _empty_block(result[block])
    if empty:
        for key in ("offered_load", "accepted_load", "hops_mean"):
            if key in result:
                result[key] = None
    classes = []
    for c in summary.get("per_sl") or ():
        c = dict(c)
        for block in ("latency", "network_latency", "message_latency"):
            if block in c:
                c[block] = _empty_block(c[block])
        if empty:
            for key in ("offered_load", "accepted_load", "share"):
                if key in c:
                    c[key] = None
        classes.append(c)
    if "per_sl" in result:
        result["per_sl"] = classes
    return result


def _count(block: Any) -> Optional[int]:
    if not isinstance(block, Mapping):
        return None
    count = block.get("count")
    return count if isinstance(count, int) else None


def _empty_block(block: Any) -> Any:
    """A latency block that counted no packet: every statistic but the count is ``None``."""
    if _count(block) != 0:
        return block
    return {k: (v if k == "count" else None) for k, v in block.items()}


def sl_names(summary: Mapping[str, Any]) -> Dict[int, str]:
    """SL number → the name used in wide column names (the class name, or ``sl<N>`` when a
    class has no name or shares it with another)."""
    classes = summary.get("per_sl") or ()
    names = [str(c.get("name") or "") for c in classes]
    result = {}
    for c, name in zip(classes, names):
        sl = int(c.get("sl", 0))
        result[sl] = name if name and names.count(name) == 1 else f"sl{sl}"
    return result


def summary_row(summary: Mapping[str, Any]) -> Dict[str, Any]:
    """The flat cells of one run's summary row (without the sweep's prefix columns); the
    statistics of an empty measurement window are ``None`` (:func:`measured`)."""
    summary = measured(summary)
    row = _cells(summary, _SUMMARY_COLUMNS)
    if _physical(summary):
        row.update(_cells(summary, _PHYSICAL_COLUMNS))
    names = sl_names(summary)
    for c in summary.get("per_sl") or ():
        name = names[int(c.get("sl", 0))]
        for stat, value in _cells(c, _SL_WIDE_COLUMNS).items():
            row[f"sl.{name}.{stat}"] = value
    return row


def summary_schema(prefix: Sequence["pa.Field"], summary: Mapping[str, Any]) -> "pa.Schema":
    """Schema of :func:`summary_row` for this summary, after the ``prefix`` fields."""
    import pyarrow as pa

    fields = list(_schema(prefix, "RunResult", _SUMMARY_COLUMNS))
    if _physical(summary):
        fields += list(_schema([], "RunResult", _PHYSICAL_COLUMNS))
    wide = _schema([], "ClassResult", _SL_WIDE_COLUMNS)
    for _sl, name in sorted(sl_names(summary).items()):
        fields += [pa.field(f"sl.{name}.{f.name}", f.type) for f in wide]
    return pa.schema(fields)


def _physical(summary: Mapping[str, Any]) -> bool:
    """True when the run has the physical twins of its cycle figures (``[units]``)."""
    return "latency_ns" in summary


def per_sl_rows(summary: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One flat row per SL (without the sweep's prefix columns); statistics of an empty
    measurement window are ``None`` (:func:`measured`)."""
    classes = measured(summary).get("per_sl") or ()
    return [_cells(c, _PER_SL_COLUMNS) for c in classes]


def per_sl_schema(prefix: Sequence["pa.Field"]) -> "pa.Schema":
    return _schema(prefix, "ClassResult", _PER_SL_COLUMNS)


def histogram_rows(summary: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One flat row per (SL, latency bin), named by the SL's class name."""
    names = {int(c.get("sl", 0)): c.get("name") for c in summary.get("per_sl") or ()}
    return [
        _cells(h, _HISTOGRAM_COLUMNS, names) for h in summary.get("latency_histogram") or ()
    ]


def histogram_schema(prefix: Sequence["pa.Field"]) -> "pa.Schema":
    return _schema(prefix, "HistogramBin", _HISTOGRAM_COLUMNS)


# ---------------------------------------------------------------------------------------
# Cells and Arrow types from the core's result schema


def _cells(
    obj: Mapping[str, Any],
    columns: Sequence[_Column],
    sl_name: Optional[Mapping[int, Any]] = None,
) -> Dict[str, Any]:
    """The cells of ``columns`` read from ``obj`` (a missing field gives ``None``)."""
    row: Dict[str, Any] = {}
    for col in columns:
        value: Any = obj
        for key in col.path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if col.cast == "float":
            value = _float(value)
        elif col.cast == "present":
            value = bool(value)
        elif col.cast == "sum":
            value = sum(value or ())
        elif col.cast == "sl_name":
            value = (sl_name or {}).get(int(value or 0))
        row[col.name] = value
    return row


@functools.cache
def result_schema() -> Dict[str, Any]:
    """The JSON Schema of the engine's summary (``_core.result_schema_json()``), parsed once."""
    from . import _core

    return json.loads(_core.result_schema_json())


def schema_node(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with a ``$ref`` (bare, in ``allOf`` or next to ``null`` in ``anyOf``) replaced
    by the definition it names."""
    for key in ("allOf", "anyOf"):
        parts = [p for p in node.get(key, ()) if p.get("type") != "null"]
        if len(parts) == 1:
            node = parts[0]
    ref = node.get("$ref")
    if ref is not None:
        node = schema["definitions"][ref.rsplit("/", 1)[-1]]
    return node


def _arrow_type(root: str, column: _Column) -> "pa.DataType":
    """The Arrow type of ``column`` of a row read from a ``root`` (a result schema type)."""
    import pyarrow as pa

    schema = result_schema()
    node = schema if root == "RunResult" else schema["definitions"][root]
    for key in column.path:
        props = schema_node(schema, node).get("properties") or {}
        if key not in props:
            raise KeyError(f"the core's {root} has no field {'.'.join(column.path)!r}")
        node = props[key]
    cast = {"float": pa.float64(), "present": pa.bool_(), "sum": pa.int64(),
            "sl_name": pa.string()}
    if column.cast:
        return cast[column.cast]
    return _json_type(schema_node(schema, node), column)


def _json_type(node: Mapping[str, Any], column: _Column) -> "pa.DataType":
    import pyarrow as pa

    kind = node.get("type")
    if isinstance(kind, list):  # ["number", "null"]: an optional scalar
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    scalars = {"integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_(),
               "string": pa.string()}
    if kind in scalars:
        return scalars[kind]
    if kind == "array":
        return pa.list_(_json_type(node.get("items") or {}, column))
    raise TypeError(f"column {column.name!r}: no Arrow type for the core's schema {node}")


def _schema(prefix: Sequence["pa.Field"], root: str, columns: Sequence[_Column]) -> "pa.Schema":
    import pyarrow as pa

    return pa.schema(list(prefix) + [pa.field(c.name, _arrow_type(root, c)) for c in columns])


def _float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def _from_rows(rows: List[Dict[str, Any]], schema: "pa.Schema") -> "pa.Table":
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema)
