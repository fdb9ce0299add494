"""MPI traces: one message-level form, the VEF text format, and a DUMPI converter.

flitsim replays MPI traces as message dependencies (``docs/traces.md``). This package holds
the form both trace readers produce, in Python:

* :class:`Trace`: tasks, communicators and records in an order where every record refers only
  to earlier ones; a record is a point-to-point :class:`Message` or a :class:`Collective`
  with one :class:`Part` per participating task. Each carries the dependency that releases it
  (``dep`` 0: at the absolute time ``time``; 1: ``time`` ns after the task *sent* message
  ``dep_id``; 2: after it *received* message ``dep_id``; 3: after it finished collective
  ``dep_id``), exactly as a VEF line does (``../shared/TRACES.md``).
* :mod:`flitsim.traces.vef`: :func:`~flitsim.traces.vef.write_vef` and a streaming, validating
  reader :func:`~flitsim.traces.vef.read_vef` whose errors name the file and line.
* :mod:`flitsim.traces.dumpi`: :func:`~flitsim.traces.dumpi.read_dumpi` converts SST DUMPI
  per-rank traces with the optional ``pydumpi`` package (``pip install 'flitsim[trace]'``).

:mod:`flitsim.traces.cache` converts the DUMPI trace of an experiment with ``format = "dumpi"``
once and keeps the VEF in a cache keyed by content (``docs/traces.md``).

:func:`info` summarises either form (the data of ``flitsim trace info``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Union

# VEF collective op codes (../shared/TRACES.md) and the names `trace info` reports them by.
BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, BARRIER, ALLTOALL = range(8)
OP_NAMES: Dict[int, str] = {
    BCAST: "broadcast",
    REDUCE: "reduce",
    ALLREDUCE: "allreduce",
    GATHER: "gather",
    SCATTER: "scatter",
    ALLGATHER: "allgather",
    BARRIER: "barrier",
    ALLTOALL: "alltoall",
}

# Dependency kinds of a VEF record.
DEP_NONE, DEP_SENT, DEP_RECEIVED, DEP_COLLECTIVE = 0, 1, 2, 3


@dataclass(frozen=True)
class Message:
    """A point-to-point message: VEF line ``id src dst bytes dep time dep_id``."""

    id: int
    src: int
    dst: int
    bytes: int
    dep: int
    time: int
    dep_id: int


@dataclass(frozen=True)
class Part:
    """One task's participation in a collective: ``task send_bytes recv_bytes dep time dep_id``."""

    task: int
    send_bytes: int
    recv_bytes: int
    dep: int
    time: int
    dep_id: int


@dataclass(frozen=True)
class Collective:
    """A collective operation: VEF lines ``G<id> comm op …``, one :class:`Part` per task."""

    id: int
    comm: int
    op: int
    parts: List[Part]


Record = Union[Message, Collective]


@dataclass
class Trace:
    """A whole trace in memory, records in dependency order (each refers only to earlier ones).

    ``unsupported`` counts the calls of the source trace that the conversion could not model
    (name → count); ``ignored`` the calls that move no data and were left out on purpose
    (``comm_rank``, ``wtime``, …): their time is part of the compute delays.
    """

    tasks: int
    communicators: List[List[int]]
    records: List[Record]
    unsupported: Dict[str, int] = field(default_factory=dict)
    ignored: Dict[str, int] = field(default_factory=dict)


def summarize(
    tasks: int,
    records: Iterable[Record],
    unsupported: Dict[str, int],
    ignored: Dict[str, int],
) -> Dict[str, Any]:
    """The ``trace info`` dict of a trace: counts of tasks, messages, bytes, collectives."""
    messages = total = 0
    collectives: Dict[str, int] = {}
    for r in records:
        if isinstance(r, Message):
            messages += 1
            total += r.bytes
        else:
            name = OP_NAMES[r.op]
            collectives[name] = collectives.get(name, 0) + 1
    return {
        "tasks": tasks,
        "messages": messages,
        "bytes": total,
        "collectives": dict(sorted(collectives.items())),
        "unsupported": dict(sorted(unsupported.items())),
        "ignored": dict(sorted(ignored.items())),
    }


def trace_summary(trace: Trace) -> Dict[str, Any]:
    """:func:`summarize` of a :class:`Trace`."""
    return summarize(trace.tasks, trace.records, trace.unsupported, trace.ignored)


def is_vef(path: Union[str, Path]) -> bool:
    """Whether ``path`` names a VEF file (a file whose first word is ``VEF``)."""
    p = Path(path)
    if not p.is_file():
        return False
    if p.suffix == ".vef":
        return True
    with open(p, "rb") as f:
        return f.read(3) == b"VEF"


def info(path: Union[str, Path]) -> Dict[str, Any]:
    """Summarise a VEF file or a DUMPI trace (a directory of per-rank files, or one of them).

    Raises :class:`flitsim.FlitsimError` for a bad file (naming it and the line), and
    :class:`ImportError` when a DUMPI trace is given and ``pydumpi`` is not installed.
    """
    from . import vef

    if is_vef(path):
        return vef.vef_info(path)
    from . import dumpi

    return trace_summary(dumpi.read_dumpi(path))


__all__ = [
    "OP_NAMES",
    "Collective",
    "Message",
    "Part",
    "Record",
    "Trace",
    "info",
    "is_vef",
    "summarize",
    "trace_summary",
]
