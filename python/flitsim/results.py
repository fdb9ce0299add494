"""The result of one experiment, and its flattening into Arrow rows.

:class:`Result` wraps the engine's JSON summary. It reads like that summary (it is a
read-only :class:`collections.abc.Mapping`, so ``r["accepted_load"]``, ``r.get(...)``,
``"x" in r`` and ``dict(r)`` all work) and adds Arrow views of its list-shaped parts:
:attr:`Result.per_sl`, :attr:`Result.ports` and :attr:`Result.latency_histogram`.

The row builders at the bottom (:func:`summary_row`, :func:`per_sl_rows`,
:func:`histogram_rows`) are shared with :mod:`flitsim.sweep`, so a sweep's tables have exactly
the columns described here.

pyarrow is imported only when a table is first asked for, so ``import flitsim`` stays quick.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import pyarrow as pa

__all__ = ["Result"]

# The latency statistics copied into tables; `count` is an integer, the rest are floats.
_LATENCY_STATS = ("mean", "p50", "p99", "max")

# Per-SL statistics repeated as wide columns `sl.<name>.<stat>` in a summary row.
SL_WIDE_STATS = ("offered_load", "accepted_load", "share", "latency_mean", "latency_p99")


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
        ``latency_{mean,p50,p99,max,count}``, ``network_latency_{mean,p50,p99,max,count}``.
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

    def _table(self, name: str, build: Any) -> "pa.Table":
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = build(self._summary)
        return table


# ---------------------------------------------------------------------------------------
# Tables of a single result


def _build_per_sl(summary: Mapping[str, Any]) -> "pa.Table":
    import pyarrow as pa

    fields = [("sl", pa.int64()), ("name", pa.string())]
    fields += [(k, pa.float64()) for k in ("offered_load", "accepted_load", "share")]
    for block in ("latency", "network_latency"):
        fields += [(f"{block}_{s}", pa.float64()) for s in _LATENCY_STATS]
        fields.append((f"{block}_count", pa.int64()))
    rows = []
    for c in measured(summary).get("per_sl") or ():
        row = {
            "sl": c.get("sl"),
            "name": c.get("name"),
            "offered_load": c.get("offered_load"),
            "accepted_load": c.get("accepted_load"),
            "share": c.get("share"),
        }
        for block in ("latency", "network_latency"):
            row.update(_latency_cells(c.get(block), block, with_count=True))
        rows.append(row)
    return _from_rows(rows, pa.schema(fields))


def _build_ports(summary: Mapping[str, Any]) -> "pa.Table":
    import pyarrow as pa

    schema = pa.schema(
        [
            ("switch", pa.string()),
            ("port", pa.int64()),
            ("to_endpoint", pa.bool_()),
            ("utilisation", pa.float64()),
            ("flits", pa.int64()),
            ("vl_flits", pa.list_(pa.int64())),
        ]
    )
    rows = []
    for p in summary.get("ports") or ():
        vl_flits = list(p.get("vl_flits") or ())
        rows.append(
            {
                "switch": p.get("switch"),
                "port": p.get("port"),
                "to_endpoint": p.get("to_endpoint"),
                "utilisation": _float(p.get("utilisation")),
                "flits": sum(vl_flits),
                "vl_flits": vl_flits,
            }
        )
    return _from_rows(rows, schema)


def _build_histogram(summary: Mapping[str, Any]) -> "pa.Table":
    return _from_rows(histogram_rows(summary), histogram_schema([]))


# ---------------------------------------------------------------------------------------
# Flat rows shared with flitsim.sweep. `prefix` holds the columns a sweep puts first (the
# varied keys, seed, config_hash, version); the schemas take those columns' fields.

_SUMMARY_FIELDS: Tuple[Tuple[str, str], ...] = (
    ("endpoints", "int64"),
    ("offered_load", "float64"),
    ("accepted_load", "float64"),
    ("saturated", "bool"),
    ("drained", "bool"),
    ("deadlock", "bool"),
    ("latency_mean", "float64"),
    ("latency_p50", "float64"),
    ("latency_p99", "float64"),
    ("latency_max", "float64"),
    ("network_latency_mean", "float64"),
    ("network_latency_p50", "float64"),
    ("network_latency_p99", "float64"),
    ("network_latency_max", "float64"),
    ("hops_mean", "float64"),
    ("flits_generated", "int64"),
    ("flits_delivered", "int64"),
    ("flits_remaining", "int64"),
    ("cycles_total", "int64"),
    ("wall_seconds", "float64"),
)

_PER_SL_FIELDS: Tuple[Tuple[str, str], ...] = (
    ("sl", "int64"),
    ("name", "string"),
    ("offered_load", "float64"),
    ("accepted_load", "float64"),
    ("share", "float64"),
    ("latency_mean", "float64"),
    ("latency_p50", "float64"),
    ("latency_p99", "float64"),
    ("latency_max", "float64"),
    ("network_latency_mean", "float64"),
    ("network_latency_p99", "float64"),
)

_HISTOGRAM_FIELDS: Tuple[Tuple[str, str], ...] = (
    ("sl", "int64"),
    ("name", "string"),
    ("latency", "int64"),
    ("count", "int64"),
)


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
        for block in ("latency", "network_latency"):
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
    lat = summary.get("latency") or {}
    net = summary.get("network_latency") or {}
    flits = summary.get("flits") or {}
    perf = summary.get("performance") or {}
    row: Dict[str, Any] = {
        "endpoints": summary.get("endpoints"),
        "offered_load": _float(summary.get("offered_load")),
        "accepted_load": _float(summary.get("accepted_load")),
        "saturated": summary.get("saturated"),
        "drained": summary.get("drained"),
        "deadlock": bool(summary.get("deadlock")),
    }
    row.update(_latency_cells(lat, "latency"))
    row.update(_latency_cells(net, "network_latency"))
    row.update(
        {
            "hops_mean": _float(summary.get("hops_mean")),
            "flits_generated": flits.get("generated"),
            "flits_delivered": flits.get("delivered"),
            "flits_remaining": flits.get("remaining"),
            "cycles_total": (summary.get("cycles") or {}).get("total"),
            "wall_seconds": perf.get("wall_seconds"),
        }
    )
    names = sl_names(summary)
    for c in summary.get("per_sl") or ():
        name = names[int(c.get("sl", 0))]
        cells = {
            "offered_load": c.get("offered_load"),
            "accepted_load": c.get("accepted_load"),
            "share": c.get("share"),
            "latency_mean": (c.get("latency") or {}).get("mean"),
            "latency_p99": (c.get("latency") or {}).get("p99"),
        }
        for stat in SL_WIDE_STATS:
            row[f"sl.{name}.{stat}"] = _float(cells[stat])
    return row


def summary_schema(prefix: Sequence["pa.Field"], summary: Mapping[str, Any]) -> "pa.Schema":
    """Schema of :func:`summary_row` for this summary, after the ``prefix`` fields."""
    import pyarrow as pa

    fields = list(prefix) + _fields(_SUMMARY_FIELDS)
    for _sl, name in sorted(sl_names(summary).items()):
        fields += [pa.field(f"sl.{name}.{stat}", pa.float64()) for stat in SL_WIDE_STATS]
    return pa.schema(fields)


def per_sl_rows(summary: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One flat row per SL (without the sweep's prefix columns); statistics of an empty
    measurement window are ``None`` (:func:`measured`)."""
    summary = measured(summary)
    rows = []
    for c in summary.get("per_sl") or ():
        lat = c.get("latency") or {}
        net = c.get("network_latency") or {}
        rows.append(
            {
                "sl": c.get("sl"),
                "name": c.get("name"),
                "offered_load": _float(c.get("offered_load")),
                "accepted_load": _float(c.get("accepted_load")),
                "share": _float(c.get("share")),
                "latency_mean": _float(lat.get("mean")),
                "latency_p50": _float(lat.get("p50")),
                "latency_p99": _float(lat.get("p99")),
                "latency_max": _float(lat.get("max")),
                "network_latency_mean": _float(net.get("mean")),
                "network_latency_p99": _float(net.get("p99")),
            }
        )
    return rows


def per_sl_schema(prefix: Sequence["pa.Field"]) -> "pa.Schema":
    import pyarrow as pa

    return pa.schema(list(prefix) + _fields(_PER_SL_FIELDS))


def histogram_rows(summary: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One flat row per (SL, latency bin), named by the SL's class name."""
    names = {int(c.get("sl", 0)): c.get("name") for c in summary.get("per_sl") or ()}
    return [
        {
            "sl": h.get("sl"),
            "name": names.get(int(h.get("sl", 0))),
            "latency": h.get("latency"),
            "count": h.get("count"),
        }
        for h in summary.get("latency_histogram") or ()
    ]


def histogram_schema(prefix: Sequence["pa.Field"]) -> "pa.Schema":
    import pyarrow as pa

    return pa.schema(list(prefix) + _fields(_HISTOGRAM_FIELDS))


# ---------------------------------------------------------------------------------------
# Small helpers


def _latency_cells(
    block: Optional[Mapping[str, Any]], prefix: str, with_count: bool = False
) -> Dict[str, Any]:
    block = block or {}
    cells = {f"{prefix}_{s}": _float(block.get(s)) for s in _LATENCY_STATS}
    if with_count:
        cells[f"{prefix}_count"] = block.get("count")
    return cells


def _float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def _fields(spec: Sequence[Tuple[str, str]]) -> List["pa.Field"]:
    import pyarrow as pa

    types = {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "string": pa.string(),
    }
    return [pa.field(name, types[kind]) for name, kind in spec]


def _from_rows(rows: List[Dict[str, Any]], schema: "pa.Schema") -> "pa.Table":
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema)
