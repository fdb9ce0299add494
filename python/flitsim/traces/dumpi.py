"""Convert SST DUMPI traces (one binary file per rank) to flitsim's message-level form.

Needs the optional ``pydumpi`` package (``pip install 'flitsim[trace]'``), which binds SST's
own reader library. The conversion (``docs/traces.md`` has the full story):

1. **Read** every rank's file with callbacks for every MPI call. Point-to-point calls (send,
   bsend, ssend, rsend, recv, sendrecv, their non-blocking forms, wait/test and their
   any/some/all forms) and the collectives barrier, bcast, reduce, allreduce, gather(v),
   scatter(v), allgather(v), alltoall(v) on ``MPI_COMM_WORLD`` are modelled; calls that move
   no data (``comm_rank``, ``wtime``, ``type_*``, …) are *ignored* and counted; every other call,
   and any call on another communicator, is *unsupported* and counted by name, never dropped
   silently.
2. **Match** sends to receives per (communicator, source, destination, tag) in order (MPI's
   non-overtaking rule); wildcard receives take their source and tag from the recorded
   status. A send without a receive, or a receive without a send, is an error naming the rank
   and the call (its 1-based position among the rank's recorded MPI calls).
3. **Chain** each rank's records: a record depends on the latest completion event of its rank
   (the send or receive a blocking call or a wait completed, or the collective it finished),
   with the wall time from the end of that call to the start of this one as its delay;
   a rank's first record is released at its time since the end of ``MPI_Init``.
   Non-blocking sends and receives do not move the chain; the wait that completes them does.
   A wait completing several requests (waitall, waitsome) leaves one event, as VEF has one
   dependency per record: the request whose message was issued last (sender's time since its
   ``MPI_Init``).
4. **Order** the records so that each refers only to earlier ones, numbering messages and
   collectives as they are placed; a collective is placed once every rank has reached it.

Conversion is deterministic: the same files give the same records.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import struct
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .._core import FlitsimError
from . import (
    ALLGATHER,
    ALLREDUCE,
    ALLTOALL,
    BARRIER,
    BCAST,
    DEP_COLLECTIVE,
    DEP_NONE,
    DEP_RECEIVED,
    DEP_SENT,
    GATHER,
    REDUCE,
    SCATTER,
    Collective,
    Message,
    Part,
    Record,
    Trace,
)

# DUMPI's encodings (sst-dumpi common/constants.h).
COMM_WORLD = 2
COMM_SELF = 3
ANY_SOURCE = -1
ANY_TAG = -1
REQUEST_NULL = 1
FIRST_USER_DATATYPE = 28

# Sizes of predefined datatypes for a trace whose own size table records 0 for them (some
# DUMPI writers leave long double and long long at 0): the LP64 sizes of x86-64 Linux.
PREDEFINED_SIZES: Dict[int, int] = {15: 16, 16: 8, 17: 8, 18: 8, 27: 32}

# Calls that move no data between ranks: left out on purpose (and counted as `ignored`);
# their duration is part of the compute delay before the next modelled call.
_IGNORED_NAMES = {
    "init", "init_thread", "initialized", "finalize", "finalized", "wtime", "wtick",
    "comm_rank", "comm_size", "comm_group", "comm_compare", "comm_test_inter",
    "comm_remote_size", "comm_remote_group", "comm_get_name", "comm_set_name",
    "comm_get_attr", "comm_set_attr", "comm_delete_attr", "comm_create_keyval",
    "comm_free_keyval", "comm_create_errhandler", "comm_get_errhandler",
    "comm_set_errhandler", "comm_call_errhandler", "get_count", "get_elements", "address",
    "get_address", "get_processor_name", "get_version", "query_thread", "is_thread_main",
    "request_free", "request_get_status", "buffer_attach", "buffer_detach", "topo_test",
    "cartdim_get", "cart_get", "cart_rank", "cart_coords", "cart_shift", "graphdims_get",
    "graph_get", "graph_neighbors_count", "graph_neighbors", "dims_create", "alloc_mem",
    "free_mem", "pack", "unpack", "pack_size", "pack_external", "pack_external_size",
    "unpack_external", "op_create", "op_free", "keyval_create", "keyval_free", "attr_put",
    "attr_get", "attr_delete", "status_set_cancelled", "status_set_elements",
}  # fmt: skip
_IGNORED_PREFIXES = ("type_", "group_", "errhandler_", "error_", "add_error_", "info_")
# Not MPI calls: function entry/exit records of compiler instrumentation.
_NOT_CALLS = {"function_enter", "function_exit"}

_RANK_FILE = re.compile(r"^(?P<prefix>.*)-(?P<rank>\d+)\.bin$")


def _ns(clock: Any) -> int:
    return int(clock.sec) * 1_000_000_000 + int(clock.nsec)


# -- the per-rank events ------------------------------------------------------------------------


@dataclass(eq=False)
class _Send:
    rank: int
    call: int
    name: str
    comm: int
    dst: int
    tag: int
    bytes: int
    issue: int  # start of the call, ns after the rank's origin
    dep: Any = None
    delay: int = 0
    id: Optional[int] = None


@dataclass(eq=False)
class _Recv:
    rank: int
    call: int
    name: str
    comm: int
    src: int
    tag: int
    matched: Optional[_Send] = None


@dataclass(eq=False)
class _Coll:
    rank: int
    call: int
    name: str
    op: int
    root: int
    amount: int  # this rank's X or Xi (bytes); alltoall(v): what it sends
    seq: int
    dep: Any = None
    delay: int = 0
    id: Optional[int] = None


_Event = Union[_Send, _Recv, _Coll]


def _describe(e: Union[_Send, _Recv, _Coll]) -> str:
    return f"rank {e.rank} call {e.call} (MPI_{e.name.capitalize()})"


# -- reading one rank ---------------------------------------------------------------------------


def _pydumpi() -> Any:
    try:
        import pydumpi  # type: ignore
        from pydumpi.callbacks import DumpiCallbacks  # type: ignore
    except ImportError as e:
        raise ImportError(
            f"reading DUMPI traces needs the pydumpi package ({e}); install it with "
            "pip install 'flitsim[trace]'"
        ) from None
    except OSError as e:  # its wheel bundles SST's reader library built for x86-64 Linux
        raise ImportError(
            f"the pydumpi package is installed but its reader library does not load here: {e}"
        ) from None
    return pydumpi, [f[0][3:] for f in DumpiCallbacks._fields_]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Send the C library's stdout/stderr (its version warning) to /dev/null meanwhile."""
    libc = ctypes.CDLL(None)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        with contextlib.suppress(Exception):
            libc.fflush(None)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


class _RankState:
    """What reading one rank's file builds (the callbacks live on a pydumpi subclass)."""

    def __init__(self, rank: int, tasks: int, sizes: Sequence[int], path: Path) -> None:
        self.rank = rank
        self.tasks = tasks
        self.sizes = list(sizes)
        self.path = path
        self.calls = 0
        self.origin: Optional[int] = None
        self.cursor: Optional[Tuple[Any, int]] = None  # (event or [events], stop ns)
        self.records: List[Union[_Send, _Coll]] = []
        self.recvs: List[_Recv] = []
        self.requests: Dict[int, Union[_Send, _Recv]] = {}
        self.coll_seq = 0
        self.unsupported: Dict[str, int] = {}
        self.ignored: Dict[str, int] = {}
        self.error: Optional[str] = None

    # helpers ----------------------------------------------------------------------------------
    def where(self, name: str) -> str:
        return f"rank {self.rank} call {self.calls} (MPI_{name.capitalize()})"

    def size(self, datatype: int, count: int, name: str) -> int:
        if count <= 0:
            return 0
        if datatype < 0 or datatype >= len(self.sizes):
            raise FlitsimError(
                f"{self.where(name)}: datatype {datatype} is not in the trace's size table"
            )
        size = self.sizes[datatype]
        if size == 0 and datatype < FIRST_USER_DATATYPE:
            size = PREDEFINED_SIZES.get(datatype, 0)
        return count * size

    def begin(self, wall: Any) -> Tuple[int, int]:
        start, stop = _ns(wall.start), _ns(wall.stop)
        if self.origin is None:
            self.origin = start
        return start, stop

    def dep(self, start: int) -> Tuple[Any, int]:
        if self.cursor is None:
            assert self.origin is not None
            return None, max(0, start - self.origin)
        event, stop = self.cursor
        return event, max(0, start - stop)

    def count(self, table: Dict[str, int], name: str) -> None:
        table[name] = table.get(name, 0) + 1

    def world(self, name: str, comm: int) -> bool:
        """Whether a call on ``comm`` is modelled; counts it otherwise."""
        if comm == COMM_WORLD:
            return True
        if comm == COMM_SELF:
            self.count(self.ignored, f"{name} on MPI_COMM_SELF")
        else:
            self.count(self.unsupported, f"{name} on a communicator other than MPI_COMM_WORLD")
        return False

    # point to point ---------------------------------------------------------------------------
    def send(self, name: str, d: Any, wall: Any, blocking: bool, request: Optional[int]) -> None:
        start, stop = self.begin(wall)
        if not self.world(name, d.comm):
            return
        if d.dest < 0:  # MPI_PROC_NULL
            self.count(self.ignored, f"{name} to MPI_PROC_NULL")
            return
        if d.dest >= self.tasks:
            raise FlitsimError(f"{self.where(name)}: destination rank {d.dest} beyond the "
                               f"{self.tasks} ranks of the trace")
        assert self.origin is not None
        s = _Send(self.rank, self.calls, name, d.comm, d.dest, d.tag,
                  self.size(d.datatype, d.count, name), start - self.origin)
        s.dep, s.delay = self.dep(start)
        self.records.append(s)
        if blocking:
            self.cursor = (s, stop)
        elif request is not None:
            self.requests[request] = s

    def post_recv(self, name: str, comm: int, source: int, tag: int, status: Any) -> \
            Optional[_Recv]:
        if not self.world(name, comm):
            return None
        if source < 0 and source != ANY_SOURCE:  # MPI_PROC_NULL
            self.count(self.ignored, f"{name} from MPI_PROC_NULL")
            return None
        if source >= self.tasks:
            raise FlitsimError(f"{self.where(name)}: source rank {source} beyond the "
                               f"{self.tasks} ranks of the trace")
        r = _Recv(self.rank, self.calls, name, comm, source, tag)
        self.recvs.append(r)
        if status is not None:
            self.resolve(r, status)
        return r

    def resolve(self, r: _Recv, status: Any) -> None:
        """Fill a wildcard receive's source and tag from its completion status."""
        if status is None:
            return
        if r.src == ANY_SOURCE and 0 <= status.source < self.tasks:
            r.src = status.source
        if r.tag == ANY_TAG and status.tag >= 0:
            r.tag = status.tag

    def complete(self, events: List[Tuple[Union[_Send, _Recv], Any]], stop: int) -> None:
        """Requests finished by a wait or a successful test: they move the chain."""
        if not events:
            return
        for e, status in events:
            if isinstance(e, _Recv):
                self.resolve(e, status)
        chosen = [e for e, _ in events]
        self.cursor = (chosen[0] if len(chosen) == 1 else chosen, stop)

    def take(self, request: int) -> Optional[Union[_Send, _Recv]]:
        if request == REQUEST_NULL:
            return None
        return self.requests.pop(request, None)

    # collectives ------------------------------------------------------------------------------
    def collective(self, name: str, wall: Any, comm: int, op: int, root: int, amount: int) -> None:
        start, stop = self.begin(wall)
        if not self.world(name, comm):
            return
        c = _Coll(self.rank, self.calls, name, op, root, amount, self.coll_seq)
        self.coll_seq += 1
        c.dep, c.delay = self.dep(start)
        self.records.append(c)
        self.cursor = (c, stop)


def _status(ptr: Any) -> Any:
    return ptr.contents if ptr else None


def _statuses(ptr: Any, i: int) -> Any:
    return ptr[i] if ptr else None


def _handlers() -> Dict[str, Callable[[_RankState, Any, Any], None]]:
    """The modelled calls: name -> handler(state, data, wall)."""

    def blocking_send(name: str) -> Callable[[_RankState, Any, Any], None]:
        return lambda st, d, w: st.send(name, d, w, True, None)

    def nonblocking_send(name: str) -> Callable[[_RankState, Any, Any], None]:
        return lambda st, d, w: st.send(name, d, w, False, d.request)

    def recv(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        r = st.post_recv("recv", d.comm, d.source, d.tag, _status(d.status))
        if r is not None:
            st.cursor = (r, stop)

    def irecv(st: _RankState, d: Any, w: Any) -> None:
        st.begin(w)
        r = st.post_recv("irecv", d.comm, d.source, d.tag, None)
        if r is not None:
            st.requests[d.request] = r

    def sendrecv(name: str) -> Callable[[_RankState, Any, Any], None]:
        def handler(st: _RankState, d: Any, w: Any) -> None:
            start, stop = st.begin(w)
            if not st.world(name, d.comm):
                return

            half = SimpleNamespace(  # the send half, in the shape of a send record
                count=d.sendcount, datatype=d.sendtype, dest=d.dest, tag=d.sendtag, comm=d.comm
            )
            cursor = st.cursor
            st.send(name, half, w, True, None)
            sent = st.cursor if st.cursor is not cursor else None
            r = st.post_recv(name, d.comm, d.source, d.recvtag, _status(d.status))
            if r is not None:
                st.cursor = (r, stop)
            elif sent is None:
                st.cursor = cursor

        return handler

    def wait(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        e = st.take(d.request)
        st.complete([(e, _status(d.status))] if e else [], stop)

    def test(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        if d.flag:
            e = st.take(d.request)
            st.complete([(e, _status(d.status))] if e else [], stop)

    def any_(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        if getattr(d, "flag", 1) and 0 <= d.index < d.count:
            e = st.take(d.requests[d.index])
            st.complete([(e, _status(d.status))] if e else [], stop)

    def all_(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        if getattr(d, "flag", 1):
            done = []
            for i in range(d.count):
                e = st.take(d.requests[i])
                if e is not None:
                    done.append((e, _statuses(d.statuses, i)))
            st.complete(done, stop)

    def some(st: _RankState, d: Any, w: Any) -> None:
        _, stop = st.begin(w)
        done = []
        for i in range(max(0, d.outcount)):
            index = d.indices[i]
            if 0 <= index < d.count:
                e = st.take(d.requests[index])
                if e is not None:
                    done.append((e, _statuses(d.statuses, i)))
        st.complete(done, stop)

    def size(st: _RankState, name: str, datatype: int, count: int) -> int:
        return st.size(datatype, count, name)

    def bcast(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "bcast", d.datatype, d.count)
        st.collective("bcast", w, d.comm, BCAST, d.root, x)

    def reduce(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "reduce", d.datatype, d.count)
        st.collective("reduce", w, d.comm, REDUCE, d.root, x)

    def allreduce(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "allreduce", d.datatype, d.count)
        st.collective("allreduce", w, d.comm, ALLREDUCE, -1, x)

    def barrier(st: _RankState, d: Any, w: Any) -> None:
        st.collective("barrier", w, d.comm, BARRIER, -1, 0)

    def gather(name: str) -> Callable[[_RankState, Any, Any], None]:
        def handler(st: _RankState, d: Any, w: Any) -> None:
            x = size(st, name, d.sendtype, d.sendcount)
            st.collective(name, w, d.comm, GATHER, d.root, x)

        return handler

    def scatter(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "scatter", d.recvtype, d.recvcount)
        st.collective("scatter", w, d.comm, SCATTER, d.root, x)

    def scatterv(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "scatterv", d.recvtype, d.recvcount)
        st.collective("scatterv", w, d.comm, SCATTER, d.root, x)

    def allgather(name: str) -> Callable[[_RankState, Any, Any], None]:
        def handler(st: _RankState, d: Any, w: Any) -> None:
            x = size(st, name, d.sendtype, d.sendcount)
            st.collective(name, w, d.comm, ALLGATHER, -1, x)

        return handler

    def alltoall(st: _RankState, d: Any, w: Any) -> None:
        x = size(st, "alltoall", d.sendtype, d.sendcount)
        st.collective("alltoall", w, d.comm, ALLTOALL, -1, x)

    def alltoallv(st: _RankState, d: Any, w: Any) -> None:
        counts = [d.sendcounts[i] for i in range(max(0, d.commsize))] if d.sendcounts else []
        x = sum(size(st, "alltoallv", d.sendtype, c) for c in counts)
        st.collective("alltoallv", w, d.comm, ALLTOALL, -2, x)

    return {
        "send": blocking_send("send"),
        "bsend": blocking_send("bsend"),
        "ssend": blocking_send("ssend"),
        "rsend": blocking_send("rsend"),
        "isend": nonblocking_send("isend"),
        "ibsend": nonblocking_send("ibsend"),
        "issend": nonblocking_send("issend"),
        "irsend": nonblocking_send("irsend"),
        "recv": recv,
        "irecv": irecv,
        "sendrecv": sendrecv("sendrecv"),
        "sendrecv_replace": sendrecv("sendrecv_replace"),
        "wait": wait,
        "test": test,
        "waitany": any_,
        "testany": any_,
        "waitall": all_,
        "testall": all_,
        "waitsome": some,
        "testsome": some,
        "bcast": bcast,
        "reduce": reduce,
        "allreduce": allreduce,
        "barrier": barrier,
        "gather": gather("gather"),
        "gatherv": gather("gatherv"),
        "scatter": scatter,
        "scatterv": scatterv,
        "allgather": allgather("allgather"),
        "allgatherv": allgather("allgatherv"),
        "alltoall": alltoall,
        "alltoallv": alltoallv,
    }


MODELLED = tuple(sorted(_handlers()))


def _is_ignored(name: str) -> bool:
    return name in _IGNORED_NAMES or name.startswith(_IGNORED_PREFIXES)


_reader_class: Optional[type] = None


def _reader() -> type:
    """A pydumpi trace class with a callback for every MPI call (built once)."""
    global _reader_class
    if _reader_class is not None:
        return _reader_class
    pydumpi, names = _pydumpi()
    handlers = _handlers()

    def make(name: str) -> Callable[..., None]:
        handler = handlers.get(name)
        ignored = _is_ignored(name)

        def callback(self: Any, data: Any, thread: Any, cpu: Any, wall: Any, perf: Any) -> None:
            st: _RankState = self.state
            if st.error is not None or self.interrupted():
                return
            st.calls += 1
            try:
                if handler is not None:
                    handler(st, data, wall)
                else:
                    st.begin(wall)
                    if name in ("init", "init_thread"):
                        st.origin = _ns(wall.stop)
                    st.count(st.ignored if ignored else st.unsupported, name)
            except FlitsimError as e:
                st.error = str(e)
            except Exception as e:  # a malformed record: report it, never crash in C
                st.error = f"{st.where(name)}: cannot read this call: {e}"

        return callback

    methods: Dict[str, Any] = {f"on_{n}": make(n) for n in names if n not in _NOT_CALLS}
    _reader_class = type("_DumpiRankReader", (pydumpi.DumpiTrace,), methods)
    return _reader_class


# -- the files of a trace -----------------------------------------------------------------------


def rank_files(path: Union[str, Path]) -> List[Path]:
    """The per-rank files of a DUMPI trace, in rank order.

    ``path`` is a directory holding ``<prefix>-NNNN.bin`` files of one run, or one of those
    files (then the run's other files beside it are taken).
    """
    p = Path(path)
    if not p.exists():
        raise FlitsimError(f"{p}: no such file or directory")
    if p.is_dir():
        directory, prefix = p, None
    else:
        m = _RANK_FILE.match(p.name)
        if m is None:
            raise FlitsimError(
                f"{p}: not a DUMPI rank file (expected a name like dumpi-…-0000.bin) nor a "
                "VEF file"
            )
        directory, prefix = p.parent, m.group("prefix")
    runs: Dict[str, Dict[int, Path]] = {}
    for f in sorted(directory.iterdir()):
        m = _RANK_FILE.match(f.name)
        if m is not None and f.is_file():
            runs.setdefault(m.group("prefix"), {})[int(m.group("rank"))] = f
    if prefix is None:
        if not runs:
            raise FlitsimError(f"{directory}: no DUMPI rank files (<prefix>-NNNN.bin) in it")
        if len(runs) > 1:
            raise FlitsimError(
                f"{directory}: holds the files of {len(runs)} runs ({', '.join(sorted(runs))});"
                " name one of the files of the run to convert"
            )
        prefix = next(iter(runs))
    files = runs[prefix]
    missing = sorted(set(range(len(files))) - set(files))
    if missing:
        raise FlitsimError(
            f"{directory}: the files of {prefix} are not ranks 0..{len(files) - 1}: "
            f"rank {missing[0]} is missing"
        )
    for f in files.values():
        check_file(f)
    return [files[r] for r in range(len(files))]


MAGIC = b"\xff\xaa\xddDUMPI"
_INDEX_BYTES = 64


def check_file(path: Path) -> None:
    """Refuse a file that is not a whole DUMPI trace before the C reader sees it.

    SST's reader crashes the process on a truncated file, so check what a complete one has:
    the magic number first, and last a 64-byte index (the magic number again, then offsets of
    the file's sections, all inside the file).
    """
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(len(MAGIC))
        if head != MAGIC:
            raise FlitsimError(f"{path}: not a DUMPI trace file (no DUMPI magic number)")
        if size < len(MAGIC) + _INDEX_BYTES:
            raise FlitsimError(f"{path}: truncated DUMPI file ({size} bytes)")
        fh.seek(size - _INDEX_BYTES)
        index = fh.read(_INDEX_BYTES)
    offsets = struct.unpack(">7Q", index[len(MAGIC):])
    if index[: len(MAGIC)] != MAGIC or any(o > size - _INDEX_BYTES for o in offsets):
        raise FlitsimError(
            f"{path}: truncated or damaged DUMPI file (the index that closes a complete "
            "trace is missing)"
        )


class _Interrupts:
    """Ctrl-C while the C reader runs: remember it, stop at the end of the current file."""

    def __init__(self) -> None:
        self.hit = False
        self._old: Any = None

    def __enter__(self) -> _Interrupts:
        if _main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.hit = True

    def __exit__(self, *exc: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def check(self) -> None:
        if self.hit:
            raise KeyboardInterrupt


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def read_ranks(path: Union[str, Path]) -> List[_RankState]:
    """Read every rank file of the trace at ``path`` (see :func:`rank_files`)."""
    files = rank_files(path)
    cls = _reader()
    states: List[_RankState] = []
    with _Interrupts() as interrupts:
        for rank, f in enumerate(files):
            with _quiet():
                trace = cls(str(f))
                trace.interrupted = lambda: interrupts.hit
                trace.state = _RankState(rank, len(files), [], f)
                try:
                    trace.open()
                    trace.state.sizes = list(trace.type_sizes)
                    trace.read_stream()
                finally:
                    trace.close()
            interrupts.check()
            st = trace.state
            if st.error is not None:
                raise FlitsimError(f"{f}: {st.error}")
            if st.calls == 0:
                raise FlitsimError(f"{f}: no MPI call could be read (truncated or not DUMPI?)")
            states.append(st)
    return states


# -- matching, chaining, ordering ---------------------------------------------------------------


def _match(states: List[_RankState]) -> None:
    sends: Dict[Tuple[int, int, int, int], List[_Send]] = {}
    recvs: Dict[Tuple[int, int, int, int], List[_Recv]] = {}
    for st in states:
        for rec in st.records:
            if isinstance(rec, _Send):
                sends.setdefault((rec.comm, rec.rank, rec.dst, rec.tag), []).append(rec)
        for r in st.recvs:
            if r.src == ANY_SOURCE or r.tag == ANY_TAG:
                what = "MPI_ANY_SOURCE" if r.src == ANY_SOURCE else "MPI_ANY_TAG"
                raise FlitsimError(
                    f"{_describe(r)}: a receive with {what} that never completed with a "
                    "recorded status: cannot tell which send it matches"
                )
            recvs.setdefault((r.comm, r.src, r.rank, r.tag), []).append(r)
    unmatched: List[Tuple[int, int, str]] = []
    for key in sorted(set(sends) | set(recvs)):
        ss, rs = sends.get(key, []), recvs.get(key, [])
        for s, r in zip(ss, rs):
            r.matched = s
        for s in ss[len(rs):]:
            unmatched.append((s.rank, s.call, f"{_describe(s)}: send to rank {s.dst} tag "
                              f"{s.tag} has no matching receive on rank {s.dst}"))
        for r in rs[len(ss):]:
            unmatched.append((r.rank, r.call, f"{_describe(r)}: receive from rank {r.src} "
                              f"tag {r.tag} has no matching send on rank {r.src}"))
    if unmatched:
        unmatched.sort()
        more = f" (and {len(unmatched) - 1} more unmatched)" if len(unmatched) > 1 else ""
        raise FlitsimError(unmatched[0][2] + more)


def _pick(events: List[Union[_Send, _Recv]]) -> Union[_Send, _Recv]:
    """Of the requests one wait completed, the one whose message was issued last."""
    best, best_key = events[0], None
    for e in events:
        s = e.matched if isinstance(e, _Recv) else e
        assert s is not None
        key = s.issue
        if best_key is None or key >= best_key:
            best, best_key = e, key
    return best


def _check_collectives(states: List[_RankState]) -> None:
    counts = [st.coll_seq for st in states]
    for st in states:
        if st.coll_seq != counts[0]:
            raise FlitsimError(
                f"rank {st.rank} enters {st.coll_seq} collectives on MPI_COMM_WORLD, rank 0 "
                f"{counts[0]}: every rank must call the same collectives"
            )


def _order(states: List[_RankState]) -> List[Record]:
    tasks = len(states)
    out: List[Record] = []
    pos = [0] * tasks
    queue = deque(range(tasks))
    queued = [True] * tasks
    waiting: Dict[int, List[int]] = {}  # id(send) -> ranks waiting for it to be placed
    arrived: Dict[int, List[_Coll]] = {}
    next_message = 0
    next_collective = 0

    def dep_of(dep: Any) -> Tuple[int, int]:
        if dep is None:
            return DEP_NONE, -1
        if isinstance(dep, list):
            dep = _pick(dep)
        if isinstance(dep, _Send):
            assert dep.id is not None
            return DEP_SENT, dep.id
        if isinstance(dep, _Recv):
            assert dep.matched is not None and dep.matched.id is not None
            return DEP_RECEIVED, dep.matched.id
        assert dep.id is not None
        return DEP_COLLECTIVE, dep.id

    def blocked_on(dep: Any) -> Optional[_Send]:
        if isinstance(dep, list):
            dep = _pick(dep)
        if isinstance(dep, _Recv):
            assert dep.matched is not None
            return dep.matched if dep.matched.id is None else None
        return None

    def wake(rank: int) -> None:
        if not queued[rank]:
            queued[rank] = True
            queue.append(rank)

    while queue:
        r = queue.popleft()
        queued[r] = False
        recs = states[r].records
        while pos[r] < len(recs):
            rec = recs[pos[r]]
            if isinstance(rec, _Coll) and rec in arrived.get(rec.seq, ()):
                break  # parked at this collective until every rank reaches it
            waits_for = blocked_on(rec.dep)
            if waits_for is not None:
                waiting.setdefault(id(waits_for), []).append(r)
                break
            if isinstance(rec, _Send):
                dep, dep_id = dep_of(rec.dep)
                rec.id = next_message
                next_message += 1
                out.append(Message(rec.id, rec.rank, rec.dst, rec.bytes, dep, rec.delay, dep_id))
                for w in waiting.pop(id(rec), ()):
                    wake(w)
                pos[r] += 1
                continue
            group = arrived.setdefault(rec.seq, [])
            group.append(rec)
            if len(group) < tasks:
                break
            del arrived[rec.seq]
            out.append(_collective(group, next_collective, dep_of))
            next_collective += 1
            for c in group:
                pos[c.rank] += 1
                if c.rank != r:
                    wake(c.rank)
    stuck = [st for st in states if pos[st.rank] < len(st.records)]
    if stuck:
        details = "; ".join(
            f"{_describe(st.records[pos[st.rank]])} cannot be placed" for st in stuck[:4]
        )
        raise FlitsimError(
            "the trace's dependencies cannot be ordered (a collective not entered by every "
            f"rank, or receives matched in a cycle): {details}"
        )
    return out


def _collective(group: List[_Coll], cid: int, dep_of: Callable[[Any], Tuple[int, int]]) -> \
        Collective:
    group = sorted(group, key=lambda c: c.rank)
    first = group[0]
    for c in group:
        if c.op != first.op or c.root != first.root:
            raise FlitsimError(
                f"{_describe(c)} is collective #{c.seq + 1} of its rank on MPI_COMM_WORLD, "
                f"but {_describe(first)} is a different operation or root"
            )
    op, root = first.op, first.root
    if op in (BCAST, REDUCE, GATHER, SCATTER) and not 0 <= root < len(group):
        raise FlitsimError(f"{_describe(first)}: root {root} is not a rank of the trace")
    total = sum(c.amount for c in group)
    parts: List[Part] = []
    for c in group:
        x, is_root = c.amount, c.rank == root
        if op == BCAST:
            sb, rb = (x, 0) if is_root else (0, x)
        elif op == REDUCE:
            sb, rb = (0, x) if is_root else (x, 0)
        elif op == ALLREDUCE:
            sb, rb = x, x
        elif op == GATHER:
            sb, rb = x, (total if is_root else 0)
        elif op == SCATTER:
            sb, rb = (total if is_root else 0), x
        elif op == ALLGATHER:
            sb, rb = x, total
        elif op == BARRIER:
            sb, rb = 0, 0
        else:  # ALLTOALL: 0 = send_bytes to every task; 1 = send_bytes split over all (v)
            sb, rb = x, (1 if root == -2 else 0)
        dep, dep_id = dep_of(c.dep)
        c.id = cid
        parts.append(Part(c.rank, sb, rb, dep, c.delay, dep_id))
    return Collective(cid, 0, op, parts)


def read_dumpi(path: Union[str, Path]) -> Trace:
    """Convert the DUMPI trace at ``path`` (a directory or one rank file) to a :class:`Trace`.

    Raises :class:`flitsim.FlitsimError` naming the file, or the rank and call, of what is
    wrong; :class:`ImportError` without ``pydumpi``; :class:`KeyboardInterrupt` on Ctrl-C.
    """
    states = read_ranks(path)
    _match(states)
    _check_collectives(states)
    records = _order(states)
    unsupported: Dict[str, int] = {}
    ignored: Dict[str, int] = {}
    for st in states:
        for table, counts in ((unsupported, st.unsupported), (ignored, st.ignored)):
            for name, n in counts.items():
                table[name] = table.get(name, 0) + n
    return Trace(len(states), [list(range(len(states)))], records, unsupported, ignored)


__all__ = ["MODELLED", "PREDEFINED_SIZES", "rank_files", "read_dumpi"]
