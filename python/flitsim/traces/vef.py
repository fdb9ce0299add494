"""VEF, the text trace format of the Omni-Path paper's simulator: writer and checking reader.

Layout (``../shared/TRACES.md``; times in nanoseconds)::

    VEF <tasks> <messages> <communicators> <global_collectives> <local_collectives> <TRUE|FALSE>
    C<id> <task> <task> ...                                   (ids 0, 1, ...; C0 holds every task)
    <id> <src> <dst> <bytes> <dep> <time> <dep_id>            (a message)
    G<id> <comm> <op> <task> <send_bytes> <recv_bytes> <dep> <time> <dep_id>   (one per task)

:func:`write_vef` writes a :class:`~flitsim.traces.Trace`; :class:`VefReader` reads one line at
a time (memory: the ids seen, not the records) and checks the header counts, the syntax of
every record, and that every dependency refers to an earlier record of the right task. Its
errors are :class:`flitsim.FlitsimError` with ``FILE: line N: …``.

>>> import io
>>> text = '''VEF 2 1 1 1 2 TRUE
... C0 0 1
... 0 0 1 64 0 0 -1
... G0 0 6 0 0 0 1 10 0
... G0 0 6 1 0 0 0 5 -1
... '''
>>> r = VefReader(io.StringIO(text), "mem.vef")
>>> r.header.tasks, [type(x).__name__ for x in r]
(2, ['Message', 'Collective'])
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Set, Tuple, Union

from .._core import FlitsimError
from . import (
    DEP_NONE,
    DEP_RECEIVED,
    DEP_SENT,
    OP_NAMES,
    Collective,
    Message,
    Part,
    Record,
    Trace,
    summarize,
)


@dataclass(frozen=True)
class VefHeader:
    """The counts of a VEF header line."""

    tasks: int
    messages: int
    communicators: int
    global_collectives: int
    local_collectives: int
    only_send_deps: bool


# -- writing ----------------------------------------------------------------------------------


def header_of(trace: Trace) -> VefHeader:
    """The header that describes ``trace``."""
    messages = globals_ = locals_ = 0
    only_send = True
    for r in trace.records:
        if isinstance(r, Message):
            messages += 1
            only_send = only_send and r.dep != DEP_RECEIVED
        else:
            globals_ += 1
            locals_ += len(r.parts)
            only_send = only_send and all(p.dep != DEP_RECEIVED for p in r.parts)
    return VefHeader(
        trace.tasks, messages, len(trace.communicators), globals_, locals_, only_send
    )


def write_vef(trace: Trace, out: IO[str]) -> VefHeader:
    """Write ``trace`` as VEF text to ``out``; returns the header written."""
    h = header_of(trace)
    flag = "TRUE" if h.only_send_deps else "FALSE"
    out.write(
        f"VEF {h.tasks} {h.messages} {h.communicators} {h.global_collectives} "
        f"{h.local_collectives} {flag}\n"
    )
    for i, tasks in enumerate(trace.communicators):
        out.write(f"C{i} {' '.join(map(str, tasks))}\n")
    for r in trace.records:
        if isinstance(r, Message):
            out.write(f"{r.id} {r.src} {r.dst} {r.bytes} {r.dep} {r.time} {r.dep_id}\n")
        else:
            head = f"G{r.id} {r.comm} {r.op}"
            for p in r.parts:
                out.write(
                    f"{head} {p.task} {p.send_bytes} {p.recv_bytes} {p.dep} {p.time} "
                    f"{p.dep_id}\n"
                )
    return h


def write_vef_file(trace: Trace, path: Union[str, Path]) -> VefHeader:
    """Write ``trace`` to ``path`` atomically: a temporary file beside it, then a rename.

    Nothing is left at ``path`` (nor a temporary file) when writing fails or is interrupted.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make shared traces unreadable
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as f:
            header = write_vef(trace, f)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return header


# -- reading ----------------------------------------------------------------------------------


class VefReader:
    """Read a VEF file record by record, checking it as it goes (module docstring).

    ``header`` and ``communicators`` are read on construction; iterating yields each
    :class:`~flitsim.traces.Message` as its line is read and each
    :class:`~flitsim.traces.Collective` when its last line has been read. The final checks
    (the header counts) run when the iteration ends.
    """

    def __init__(self, source: Union[str, Path, IO[str]], name: Optional[str] = None) -> None:
        if isinstance(source, (str, Path)):
            self.name = name or str(source)
            self._file: IO[str] = open(source, encoding="utf-8", errors="replace")
            self._owned = True
        else:
            self.name = name or str(getattr(source, "name", "<vef>"))
            self._file = source
            self._owned = False
        self._line = 0
        try:
            self.header = self._read_header()
            self.communicators = self._read_communicators()
        except BaseException:
            self.close()
            raise

    # context manager and cleanup
    def close(self) -> None:
        if self._owned:
            self._file.close()

    def __enter__(self) -> VefReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _error(self, message: str, line: Optional[int] = None) -> FlitsimError:
        return FlitsimError(f"{self.name}: line {self._line if line is None else line}: {message}")

    def _next_tokens(self) -> Optional[List[str]]:
        """The words of the next non-blank line, or None at the end of the file."""
        for text in self._file:
            self._line += 1
            words = text.split()
            if words:
                return words
        return None

    def _int(self, word: str, what: str, low: int = 0, high: Optional[int] = None) -> int:
        try:
            value = int(word)
        except ValueError:
            raise self._error(f"{what} must be a whole number, not {word!r}") from None
        if value < low or (high is not None and value >= high):
            bound = f"in {low}..{high - 1}" if high is not None else f"at least {low}"
            raise self._error(f"{what} must be {bound}, not {value}")
        return value

    def _read_header(self) -> VefHeader:
        words = self._next_tokens()
        if words is None:
            raise self._error("empty file: expected the header 'VEF <tasks> <messages> …'", 1)
        if words[0] != "VEF" or len(words) != 7:
            raise self._error(
                "expected the header 'VEF <tasks> <messages> <communicators> "
                "<global_collectives> <local_collectives> <TRUE|FALSE>'"
            )
        names = ("tasks", "messages", "communicators", "global collectives", "local collectives")
        counts = [self._int(w, n) for w, n in zip(words[1:6], names)]
        flag = words[6].upper()
        if flag not in ("TRUE", "FALSE"):
            raise self._error(f"only_send_deps must be TRUE or FALSE, not {words[6]!r}")
        if counts[0] < 1:
            raise self._error("a trace needs at least one task")
        if counts[2] < 1:
            raise self._error("a trace needs at least one communicator (C0, every task)")
        tasks, messages, comms, globals_, locals_ = counts
        return VefHeader(tasks, messages, comms, globals_, locals_, flag == "TRUE")

    def _read_communicators(self) -> List[List[int]]:
        comms: List[List[int]] = []
        tasks = self.header.tasks
        for i in range(self.header.communicators):
            words = self._next_tokens()
            if words is None:
                raise self._error(
                    f"file ends after {i} of the {self.header.communicators} communicator "
                    "lines the header announces (truncated?)"
                )
            if words[0] != f"C{i}":
                raise self._error(f"expected communicator line 'C{i} <task> …', got {words[0]!r}")
            members = [self._int(w, f"a task of C{i}", 0, tasks) for w in words[1:]]
            if not members:
                raise self._error(f"communicator C{i} has no task")
            if len(set(members)) != len(members):
                raise self._error(f"communicator C{i} lists a task twice")
            if i == 0 and len(members) != tasks:
                raise self._error(
                    f"C0 must hold every task (0..{tasks - 1}), it has {len(members)}"
                )
            comms.append(members)
        return comms

    def __iter__(self) -> Iterator[Record]:
        h = self.header
        sent_by: Dict[int, Tuple[int, int]] = {}  # message id -> (src, dst)
        done: Dict[int, Set[int]] = {}  # collective id -> tasks
        last_message = -1
        last_collective = -1
        messages = globals_ = locals_ = 0
        group: Optional[Tuple[int, int, int, int]] = None  # id, comm, op, first line
        parts: List[Part] = []

        def check_dep(task: int, dep: int, dep_id: int) -> None:
            if dep == DEP_NONE:
                if dep_id != -1:
                    raise self._error(f"dep 0 (independent) takes dep_id -1, not {dep_id}")
                return
            if dep in (DEP_SENT, DEP_RECEIVED):
                ends = sent_by.get(dep_id)
                if ends is None:
                    raise self._error(
                        f"depends on message {dep_id}, which is not defined on an earlier line"
                    )
                if dep == DEP_SENT and ends[0] != task:
                    raise self._error(
                        f"dep 1 on message {dep_id}, which task {task} did not send "
                        f"(it goes {ends[0]} -> {ends[1]})"
                    )
                if dep == DEP_RECEIVED:
                    if ends[1] != task:
                        raise self._error(
                            f"dep 2 on message {dep_id}, which task {task} does not receive "
                            f"(it goes {ends[0]} -> {ends[1]})"
                        )
                    if h.only_send_deps:
                        raise self._error("dep 2 (receive) in a trace whose header says TRUE "
                                          "(only send dependencies)")
                return
            members = done.get(dep_id)
            if members is None:
                raise self._error(
                    f"depends on collective G{dep_id}, which is not complete on an earlier line"
                )
            if task not in members:
                raise self._error(f"dep 3 on collective G{dep_id}, which task {task} is not in")

        def close_group() -> Collective:
            assert group is not None
            gid, comm, op, first = group
            want = self.communicators[comm]
            if len(parts) != len(want):
                missing = sorted(set(want) - {p.task for p in parts})
                raise self._error(
                    f"collective G{gid} (from line {first}) has {len(parts)} of the "
                    f"{len(want)} tasks of C{comm}; missing task(s) {missing[:8]}",
                    line=first,
                )
            done[gid] = {p.task for p in parts}
            return Collective(gid, comm, op, list(parts))

        while True:
            words = self._next_tokens()
            if words is None:
                break
            head = words[0]
            if head.startswith("G"):
                if len(words) != 9:
                    raise self._error(
                        f"a collective line has 9 fields (G<id> comm op task send_bytes "
                        f"recv_bytes dep time dep_id), this one {len(words)}"
                    )
                gid = self._int(head[1:], "collective id")
                comm = self._int(words[1], "communicator", 0, h.communicators)
                op = self._int(words[2], "collective op", 0, len(OP_NAMES))
                task = self._int(words[3], "task", 0, h.tasks)
                send_b = self._int(words[4], "send_bytes")
                recv_b = self._int(words[5], "recv_bytes")
                dep = self._int(words[6], "dep", 0, 4)
                time = self._int(words[7], "time")
                dep_id = self._int(words[8], "dep_id", -1)
                if group is not None and gid != group[0]:
                    yield close_group()
                    group, parts = None, []
                if group is None:
                    if gid in done:
                        raise self._error(
                            f"collective G{gid} continues after other records: the lines of "
                            "one collective must be consecutive"
                        )
                    if gid <= last_collective:
                        raise self._error(
                            f"collective ids must increase: G{gid} after G{last_collective}"
                        )
                    last_collective = gid
                    globals_ += 1
                    group = (gid, comm, op, self._line)
                elif (comm, op) != group[1:3]:
                    raise self._error(
                        f"G{gid} was C{group[1]} op {group[2]} on line {group[3]}, "
                        f"here C{comm} op {op}"
                    )
                if task not in self.communicators[comm]:
                    raise self._error(f"task {task} is not in communicator C{comm}")
                if any(p.task == task for p in parts):
                    raise self._error(f"task {task} appears twice in collective G{gid}")
                check_dep(task, dep, dep_id)
                parts.append(Part(task, send_b, recv_b, dep, time, dep_id))
                locals_ += 1
                continue
            if group is not None:
                yield close_group()
                group, parts = None, []
            if head.startswith("C"):
                raise self._error(
                    f"communicator line {head!r} after the {h.communicators} the header announces"
                )
            if not head.lstrip("-").isdigit():
                raise self._error(
                    f"unknown record {head!r}: expected a message '<id> <src> <dst> <bytes> "
                    "<dep> <time> <dep_id>' or a collective 'G<id> …'"
                )
            if len(words) != 7:
                raise self._error(
                    f"a message line has 7 fields (id src dst bytes dep time dep_id), this one "
                    f"{len(words)}"
                )
            mid = self._int(head, "message id")
            if mid <= last_message:
                raise self._error(f"message ids must increase: {mid} after {last_message}")
            src = self._int(words[1], "src", 0, h.tasks)
            dst = self._int(words[2], "dst", 0, h.tasks)
            size = self._int(words[3], "bytes")
            dep = self._int(words[4], "dep", 0, 4)
            time = self._int(words[5], "time")
            dep_id = self._int(words[6], "dep_id", -1)
            check_dep(src, dep, dep_id)
            sent_by[mid] = (src, dst)
            last_message = mid
            messages += 1
            yield Message(mid, src, dst, size, dep, time, dep_id)
        if group is not None:
            yield close_group()
        for what, have, want in (
            ("messages", messages, h.messages),
            ("global collectives", globals_, h.global_collectives),
            ("local collective lines", locals_, h.local_collectives),
        ):
            if have != want:
                hint = " (truncated?)" if have < want else ""
                raise self._error(
                    f"the header announces {want} {what}, the file has {have}{hint}"
                )


def read_vef(path: Union[str, Path]) -> Trace:
    """Read and check a whole VEF file into a :class:`~flitsim.traces.Trace`."""
    with VefReader(path) as r:
        records = list(r)
        return Trace(r.header.tasks, r.communicators, records)


def vef_info(path: Union[str, Path]) -> Dict[str, Any]:
    """The ``trace info`` summary of a VEF file, read as a stream (the file is checked)."""
    with VefReader(path) as r:
        return summarize(r.header.tasks, r, {}, {})
