"""MPI traces (issue 18 item 2): DUMPI -> VEF conversion, the VEF reader, `flitsim trace`.

The real DUMPI traces live in ../shared/testdata/traces beside the repository; the tests that
read them are skipped when that directory or the optional `pydumpi` package is missing.
Message counts and bytes of the converted VEF are checked per rank against a count made
straight from pydumpi callbacks (sends: send, bsend, ssend, rsend, isend, ibsend, issend,
irsend, and the send half of sendrecv; bytes = count x the trace's own datatype size).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Dict, Tuple

import pytest

from flitsim import FlitsimError
from flitsim.traces import Message, info
from flitsim.traces import dumpi as dumpi_module
from flitsim.traces.vef import VefReader, read_vef
from helpers import assert_user_error, invoke

TRACES = Path(__file__).resolve().parents[2] / ".." / "shared/testdata/traces"
TRACE_SETS = ("imb-pingpong-16", "lulesh-64", "amr-64")
RANKS = {"imb-pingpong-16": 16, "lulesh-64": 64, "amr-64": 64}

needs_traces = pytest.mark.skipif(
    not TRACES.is_dir(), reason=f"shared DUMPI traces not checked out at {TRACES}"
)


def _pydumpi():
    try:
        import pydumpi
    except (ImportError, OSError) as e:  # OSError: its bundled x86-64 library does not load
        pytest.skip(f"the optional pydumpi package is not usable here: {e}")
    return pydumpi


# -- an independent count of what each rank sends ----------------------------------------------


def count_sends(directory: Path) -> Dict[int, Tuple[int, int]]:
    """rank -> (messages, bytes) counted with plain pydumpi callbacks, nothing of flitsim's."""
    pydumpi = _pydumpi()
    counts: Dict[int, Tuple[int, int]] = {}

    class Counter(pydumpi.DumpiTrace):
        def add(self, count, datatype, dest):
            if dest < 0:  # MPI_PROC_NULL
                return
            size = self.type_sizes[datatype]
            assert size > 0 or count == 0, f"datatype {datatype} has no size in the trace"
            self.messages += 1
            self.bytes += count * size

        def on_send(self, d, *_):
            self.add(d.count, d.datatype, d.dest)

        on_bsend = on_ssend = on_rsend = on_isend = on_ibsend = on_issend = on_irsend = on_send

        def on_sendrecv(self, d, *_):
            self.add(d.sendcount, d.sendtype, d.dest)

        on_sendrecv_replace = on_sendrecv

    files = sorted(directory.glob("*.bin"))
    for path in files:
        rank = int(path.stem.rsplit("-", 1)[1])
        with dumpi_module._quiet():  # pydumpi prints a version warning on its own
            with Counter(str(path)) as t:
                t.messages = t.bytes = 0
                t.read_stream()
        counts[rank] = (t.messages, t.bytes)
    return counts


def vef_counts(path: Path) -> Dict[int, Tuple[int, int]]:
    counts: Dict[int, Tuple[int, int]] = {}
    with VefReader(path) as r:
        for rank in range(r.header.tasks):
            counts[rank] = (0, 0)
        for rec in r:
            if isinstance(rec, Message):
                n, b = counts[rec.src]
                counts[rec.src] = (n + 1, b + rec.bytes)
    return counts


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> Dict[str, Path]:
    """Each real trace set converted once with `flitsim trace convert` (lazily)."""
    out_dir = tmp_path_factory.mktemp("vef")
    cache: Dict[str, Path] = {}

    class Lazy(dict):
        def __missing__(self, name: str) -> Path:
            from helpers import cli_runner

            out = out_dir / f"{name}.vef"
            result = invoke(cli_runner(), "trace", "convert", TRACES / name, out, "--json")
            assert result.exit_code == 0, result.stderr
            summary = json.loads(result.stdout)
            assert summary["out"] == str(out)
            cache[name] = out
            self[name] = out
            return out

    return Lazy()


# -- the real traces ----------------------------------------------------------------------------


@needs_traces
@pytest.mark.parametrize("name", TRACE_SETS)
def test_converted_vef_keeps_every_ranks_messages_and_bytes(name, converted):
    _pydumpi()
    direct = count_sends(TRACES / name)
    assert len(direct) == RANKS[name]
    assert sum(n for n, _ in direct.values()) > 0
    assert vef_counts(converted[name]) == direct


@needs_traces
@pytest.mark.parametrize("name", TRACE_SETS)
def test_vef_header_counts_match_the_body(name, converted):
    _pydumpi()
    lines = converted[name].read_text().splitlines()
    head = lines[0].split()
    tasks, messages, comms, globals_, locals_ = map(int, head[1:6])
    body = lines[1 + comms:]
    assert (head[0], tasks, comms) == ("VEF", RANKS[name], 1)
    assert lines[1].split() == ["C0", *map(str, range(tasks))]
    assert sum(1 for ln in body if not ln.startswith("G")) == messages
    assert len({ln.split()[0] for ln in body if ln.startswith("G")}) == globals_
    assert sum(1 for ln in body if ln.startswith("G")) == locals_
    assert locals_ == globals_ * tasks  # every collective is on MPI_COMM_WORLD
    trace = read_vef(converted[name])  # parses back, dependencies checked
    assert len(trace.records) == messages + globals_


@needs_traces
@pytest.mark.parametrize("name", TRACE_SETS)
def test_trace_info_agrees_on_dumpi_and_vef(name, converted, runner):
    _pydumpi()
    results = []
    for source in (TRACES / name, converted[name]):
        result = invoke(runner, "trace", "info", source, "--json")
        assert result.exit_code == 0, result.stderr
        results.append(json.loads(result.stdout))
    from_dumpi, from_vef = results
    for key in ("tasks", "messages", "bytes", "collectives"):
        assert from_dumpi[key] == from_vef[key], key
    assert from_dumpi["tasks"] == RANKS[name]
    assert from_dumpi["unsupported"] == {} and from_vef["unsupported"] == {}
    assert from_dumpi["ignored"]["init"] == RANKS[name]  # reported, not silently dropped


@needs_traces
def test_collectives_of_the_real_traces(converted):
    _pydumpi()
    lulesh = info(converted["lulesh-64"])["collectives"]
    assert lulesh == {"allreduce": 99, "barrier": 1, "reduce": 1}
    amr = info(converted["amr-64"])["collectives"]
    # alltoall and alltoallv (108 each) are both VEF op 7; gather and gatherv both op 3.
    assert amr == {
        "allgather": 61, "allreduce": 77, "alltoall": 216, "barrier": 2, "broadcast": 13,
        "gather": 10, "reduce": 21,
    }  # fmt: skip


@needs_traces
def test_conversion_is_deterministic(tmp_path, converted, runner):
    _pydumpi()
    again = tmp_path / "again.vef"
    # One rank's file names the whole run.
    one_file = sorted((TRACES / "imb-pingpong-16").glob("*-0003.bin"))[0]
    assert invoke(runner, "trace", "convert", one_file, again).exit_code == 0
    assert again.read_bytes() == converted["imb-pingpong-16"].read_bytes()


@needs_traces
def test_a_send_without_its_receive_names_rank_and_call(tmp_path, runner):
    _pydumpi()
    # Rank 1 replaced by a copy of rank 0: rank 0's partner now never answers.
    files = sorted((TRACES / "imb-pingpong-16").glob("*.bin"))
    for f in files:
        (tmp_path / f.name).symlink_to(f)
    (tmp_path / files[1].name).unlink()
    (tmp_path / files[1].name).symlink_to(files[0])
    out = tmp_path / "out.vef"
    result = invoke(runner, "trace", "convert", tmp_path, out)
    assert_user_error(result, "rank ", " call ", "has no matching")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".bin")] == []


def test_unmatched_send_message_is_exact():
    # Two ranks built call by call: rank 1 sends to rank 0 (its 3rd call), nobody receives.
    wall = SimpleNamespace(start=SimpleNamespace(sec=1, nsec=0),
                           stop=SimpleNamespace(sec=1, nsec=500))
    states = [dumpi_module._RankState(r, 2, [0] * 28, Path(f"r{r}")) for r in range(2)]
    st = states[1]
    st.calls = 3
    send = SimpleNamespace(count=4, datatype=9, dest=0, tag=7, comm=dumpi_module.COMM_WORLD)
    st.sizes[9] = 4
    st.send("send", send, wall, True, None)
    with pytest.raises(FlitsimError) as e:
        dumpi_module._match(states)
    assert str(e.value) == (
        "rank 1 call 3 (MPI_Send): send to rank 0 tag 7 has no matching receive on rank 0"
    )


def _rank(rank: int, tasks: int = 2):
    st = dumpi_module._RankState(rank, tasks, [0] * 28, Path(f"r{rank}"))
    st.sizes[9] = 4  # MPI_INT
    return st


def _call(st, name: str, start: int, stop: int, **fields) -> None:
    """One recorded MPI call, as pydumpi would hand it to the converter's callback."""
    wall = SimpleNamespace(start=SimpleNamespace(sec=0, nsec=start),
                           stop=SimpleNamespace(sec=0, nsec=stop))
    st.calls += 1
    if name == "init":
        st.begin(wall)
        st.origin = stop
        return
    fields.setdefault("comm", dumpi_module.COMM_WORLD)
    dumpi_module._handlers()[name](st, SimpleNamespace(**fields), wall)


def test_chaining_of_nonblocking_calls_waits_and_collectives():
    """The conventions the replay relies on, on two ranks built call by call (times in ns)."""
    from io import StringIO

    from flitsim.traces import Trace
    from flitsim.traces.vef import write_vef

    r0, r1 = _rank(0), _rank(1)
    for st in (r0, r1):
        _call(st, "init", 0, 1000)
    _call(r0, "irecv", 1100, 1200, count=4, datatype=9, source=1, tag=5, request=10)
    _call(r0, "isend", 1300, 1400, count=8, datatype=9, dest=1, tag=6, request=11)
    _call(r1, "send", 1500, 1600, count=4, datatype=9, dest=0, tag=5)
    _call(r1, "recv", 1700, 1800, count=8, datatype=9, source=0, tag=6, status=None)
    _call(r0, "waitall", 2000, 2500, count=2, requests=[10, 11], statuses=None)
    _call(r1, "barrier", 2900, 3000)
    _call(r0, "barrier", 3000, 3100)
    _call(r0, "send", 3200, 3300, count=1, datatype=9, dest=1, tag=7)
    _call(r1, "recv", 3400, 3500, count=1, datatype=9, source=0, tag=7, status=None)
    states = [r0, r1]
    dumpi_module._match(states)
    records = dumpi_module._order(states)
    out = StringIO()
    write_vef(Trace(2, [[0, 1]], records), out)
    assert out.getvalue() == (
        "VEF 2 3 1 1 2 FALSE\n"
        "C0 0 1\n"
        # rank 0's isend: its first record, 300 ns after the end of MPI_Init
        "0 0 1 32 0 300 -1\n"
        "1 1 0 16 0 500 -1\n"
        # rank 0: the waitall completed its irecv (message 1, issued at 500 ns) and its isend
        # (issued at 300 ns): the barrier depends on the later one, 500 ns after the waitall.
        "G0 0 6 0 0 0 2 500 1\n"
        # rank 1: its blocking recv of message 0, then 1100 ns of compute
        "G0 0 6 1 0 0 2 1100 0\n"
        "2 0 1 4 3 100 0\n"
    )


@needs_traces
def test_truncated_dumpi_file_is_refused_without_crashing(tmp_path, runner):
    _pydumpi()
    for f in sorted((TRACES / "imb-pingpong-16").glob("*.bin")):
        data = f.read_bytes()
        (tmp_path / f.name).write_bytes(data[: len(data) // 2] if f.name.endswith("-0002.bin")
                                        else data)
    result = invoke(runner, "trace", "info", tmp_path, "--json")
    assert_user_error(result, "-0002.bin", "truncated")


def test_dumpi_input_errors(tmp_path, runner):
    assert_user_error(invoke(runner, "trace", "info", tmp_path / "nope"), "no such file")
    assert_user_error(invoke(runner, "trace", "convert", tmp_path, tmp_path / "o.vef"),
                      "no DUMPI rank files")
    (tmp_path / "dumpi-a-0001.bin").write_bytes(b"x" * 100)
    assert_user_error(invoke(runner, "trace", "info", tmp_path), "rank 0 is missing")
    (tmp_path / "dumpi-a-0000.bin").write_bytes(b"x" * 100)
    assert_user_error(invoke(runner, "trace", "info", tmp_path), "not a DUMPI trace file")


def test_without_pydumpi_the_error_says_how_to_install(tmp_path, runner, monkeypatch):
    import sys

    good = tmp_path / "dumpi-a-0000.bin"
    good.write_bytes(dumpi_module.MAGIC + bytes(56) + dumpi_module.MAGIC + bytes(56))
    monkeypatch.setitem(sys.modules, "pydumpi", None)
    monkeypatch.setattr(dumpi_module, "_reader_class", None)
    result = invoke(runner, "trace", "info", good)
    assert_user_error(result, "pydumpi", "pip install 'flitsim[trace]'")


# -- VEF files by hand -------------------------------------------------------------------------

EXAMPLE = """VEF 4 2 2 1 4 FALSE
C0 0 1 2 3
C1 0 1
0 0 1 1024 0 0 -1
1 1 2 2048 2 500 0
G0 0 2 0 8 8 1 0 0
G0 0 2 1 8 8 2 100 0
G0 0 2 2 8 8 2 0 1
G0 0 2 3 8 8 0 0 -1
"""


def write(tmp_path: Path, text: str, name: str = "t.vef") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_example_of_traces_md_reads(tmp_path, runner):
    path = write(tmp_path, EXAMPLE)
    result = invoke(runner, "trace", "info", path, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "tasks": 4, "messages": 2, "bytes": 3072, "collectives": {"allreduce": 1},
        "unsupported": {}, "ignored": {},
    }  # fmt: skip
    text = invoke(runner, "trace", "info", path).stdout
    assert "messages     2 (3072 bytes)" in text


def test_vef_round_trip_is_byte_identical(tmp_path):
    from flitsim.traces.vef import write_vef_file

    trace = read_vef(write(tmp_path, EXAMPLE))
    out = tmp_path / "again.vef"
    write_vef_file(trace, out)
    assert out.read_text() == EXAMPLE


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("", 1, "empty file"),
        ("VEF 2 1 1 0 0\n", 1, "expected the header"),
        ("VEF 2 1 1 0 0 MAYBE\nC0 0 1\n", 1, "TRUE or FALSE"),
        ("VEF 2 1 1 0 0 TRUE\n", 1, "file ends after 0 of the 1 communicator"),
        ("VEF 2 1 1 0 0 TRUE\nC0 0\n", 2, "C0 must hold every task"),
        # truncated: the last line cut, or lines missing
        ("VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n1 1 0 8 1 0\n", 4, "7 fields"),
        ("VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n", 3,
         "announces 2 messages, the file has 1 (truncated?)"),
        # unknown records
        ("VEF 2 1 1 0 0 TRUE\nC0 0 1\nX 0 1 8 0 0 -1\n", 3, "unknown record 'X'"),
        ("VEF 2 1 1 0 0 TRUE\nC0 0 1\nC1 0\n", 3, "communicator line 'C1' after the 1"),
        # dependencies on later or missing records
        ("VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 0 1 8 0 0 -1\n", 3,
         "depends on message 1, which is not defined on an earlier line"),
        ("VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 5\n", 3, "depends on message 5"),
        ("VEF 2 1 1 1 2 TRUE\nC0 0 1\n0 0 1 8 3 0 0\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n",
         3, "collective G0, which is not complete on an earlier line"),
        ("VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 8 0 0 -1\n1 0 1 8 2 0 0\n", 4,
         "which task 0 does not receive"),
        ("VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n1 1 0 8 2 0 0\n", 4, "header says TRUE"),
        ("VEF 2 2 1 0 0 TRUE\nC0 0 1\n1 0 1 8 0 0 -1\n0 1 0 8 0 0 -1\n", 4,
         "message ids must increase"),
        ("VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 2 8 0 0 -1\n", 3, "dst must be in 0..1, not 2"),
        ("VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 -5 -1\n", 3, "time must be at least 0"),
        # collectives
        ("VEF 2 0 1 1 1 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n", 3, "has 1 of the 2 tasks of C0"),
        ("VEF 2 1 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 0 1 8 0 0 -1\n"
         "G0 0 6 1 0 0 0 0 -1\n", 3, "has 1 of the 2 tasks"),
        ("VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 2 1 0 0 0 0 -1\n", 4,
         "G0 was C0 op 6 on line 3"),
        ("VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 9 0 0 0 0 0 -1\n", 3, "collective op must be in"),
    ],
)
def test_bad_vef_files_name_file_and_line(tmp_path, runner, text, line, fragment):
    path = write(tmp_path, text)
    with pytest.raises(FlitsimError) as e:
        info(path)
    assert str(e.value).startswith(f"{path}: line {line}: "), str(e.value)
    assert fragment in str(e.value), str(e.value)
    # The command line says the same, without a traceback.
    assert_user_error(invoke(runner, "trace", "info", path, "--json"), f"line {line}", fragment)


# -- writing atomically --------------------------------------------------------------------------


def test_convert_leaves_nothing_behind_when_interrupted(tmp_path, runner, monkeypatch):
    from flitsim.traces import Trace
    from flitsim.traces import vef as vef_module

    out = tmp_path / "out.vef"
    out.write_text("old\n")
    trace = read_vef(write(tmp_path, EXAMPLE, "src.txt"))
    monkeypatch.setattr(dumpi_module, "read_dumpi", lambda path: trace)
    real = vef_module.write_vef

    def interrupted(t: Trace, f) -> None:
        real(t, f)
        raise KeyboardInterrupt

    monkeypatch.setattr(vef_module, "write_vef", interrupted)
    fake_dir = tmp_path / "in"
    fake_dir.mkdir()
    result = invoke(runner, "trace", "convert", fake_dir, out)
    assert result.exit_code == 130, (result.stdout, result.stderr)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out.vef", "src.txt"]
    monkeypatch.setattr(vef_module, "write_vef", real)
    assert invoke(runner, "trace", "convert", fake_dir, out).exit_code == 0
    assert out.read_text() == EXAMPLE


@needs_traces
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_conversion_leaves_no_file(tmp_path):
    _pydumpi()
    out = tmp_path / "amr.vef"
    proc = subprocess.Popen(
        [sys.executable, "-m", "flitsim", "trace", "convert", str(TRACES / "amr-64"), str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        time.sleep(1.5)  # reading the rank files (the whole conversion takes several seconds)
        assert proc.poll() is None, f"finished before the interrupt: {proc.communicate()}"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        seconds = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    print(f"trace convert stopped {seconds:.2f} s after SIGINT")
    assert proc.returncode == 130, (stdout, stderr)
    assert stderr.startswith("interrupted"), stderr
    assert "Traceback" not in stderr
    assert seconds < 3.0
    assert list(tmp_path.iterdir()) == []


def test_unsupported_calls_are_reported_not_dropped(tmp_path, runner, monkeypatch):
    trace = read_vef(write(tmp_path, EXAMPLE, "src.txt"))
    trace.unsupported = {"probe": 3, "allreduce on a communicator other than MPI_COMM_WORLD": 2}
    monkeypatch.setattr(dumpi_module, "read_dumpi", lambda path: trace)
    fake_dir = tmp_path / "in"
    fake_dir.mkdir()
    out = tmp_path / "out.vef"
    result = invoke(runner, "trace", "convert", fake_dir, out, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["unsupported"] == {
        "allreduce on a communicator other than MPI_COMM_WORLD": 2, "probe": 3,
    }  # fmt: skip
    assert result.stderr.startswith("warning: 5 MPI calls could not be modelled"), result.stderr
    assert "probe 3" in result.stderr
    out.unlink()
    strict = invoke(runner, "trace", "convert", fake_dir, out, "--strict")
    assert_user_error(strict, "cannot be modelled", "probe 3", "--strict")
    assert not out.exists()


# -- format = "dumpi" inside an experiment -----------------------------------------------------

DUMPI_EXPERIMENT = """seed = 1
[units]
flit_bytes = 64
cycle_ns = 1
[topology]
kind = "kary_ntree"
k = 16
n = 1
[[traffic.class]]
name = "BE"
message_flits = 16
[traffic.trace]
path = "{path}"
format = "{fmt}"
compute_scale = 0
[run]
warmup = 0
measure = 10
drain_max = 100000000
"""


@needs_traces
def test_a_dumpi_trace_runs_inside_an_experiment(tmp_path, converted, runner, monkeypatch):
    import flitsim
    from flitsim.traces import cache

    _pydumpi()
    monkeypatch.setenv("FLITSIM_CACHE_DIR", str(tmp_path / "cache"))
    exp = tmp_path / "exp.toml"
    exp.write_text(DUMPI_EXPERIMENT.format(path=TRACES / "imb-pingpong-16", fmt="dumpi"))
    first = invoke(runner, "run", exp, "--json")
    assert first.exit_code == 0, first.stderr
    cached = list((tmp_path / "cache" / "traces").glob("*.vef"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    # The conversion is cached; the same experiment gives the same bytes (timings aside).
    again = invoke(runner, "run", exp, "--json")
    assert cached[0].stat().st_mtime_ns == stamp

    def strip(text):
        r = json.loads(text)
        r.pop("performance")
        return r

    assert strip(again.stdout) == strip(first.stdout)
    # The same replay as the VEF converted by hand; the hash covers the trace's content.
    vef = tmp_path / "exp-vef.toml"
    vef.write_text(DUMPI_EXPERIMENT.format(path=converted["imb-pingpong-16"], fmt="vef"))
    by_hand = flitsim.run(vef)
    result = strip(first.stdout)
    assert result["trace"] == by_hand["trace"]
    assert result["trace"]["complete"] and result["trace"]["messages"] == 847
    assert cached[0].read_text() == converted["imb-pingpong-16"].read_text()
    assert result["config_hash"] != by_hand["config_hash"]  # path and format differ
    # A changed trace changes the content key, hence the cached file used.
    files = cache.rank_files_key(TRACES / "imb-pingpong-16")
    assert files == cached[0].stem


def test_dumpi_in_an_experiment_errors(tmp_path, runner, monkeypatch):
    import sys

    monkeypatch.setenv("FLITSIM_CACHE_DIR", str(tmp_path / "cache"))
    exp = tmp_path / "exp.toml"
    exp.write_text(DUMPI_EXPERIMENT.format(path="missing", fmt="dumpi"))
    assert_user_error(invoke(runner, "run", exp), "exp.toml", "traffic.trace.path", "missing")
    good = tmp_path / "dumpi-a-0000.bin"
    good.write_bytes(dumpi_module.MAGIC + bytes(56) + dumpi_module.MAGIC + bytes(56))
    exp.write_text(DUMPI_EXPERIMENT.format(path=good.name, fmt="dumpi"))
    monkeypatch.setitem(sys.modules, "pydumpi", None)
    monkeypatch.setattr(dumpi_module, "_reader_class", None)
    assert_user_error(
        invoke(runner, "run", exp), "traffic.trace.format", "pip install 'flitsim[trace]'"
    )
    # An override to a VEF file needs no conversion.
    vef = write(tmp_path, "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 64 0 0 -1\n")
    result = invoke(runner, "run", exp, "--json", "--set", 'traffic.trace.format="vef"',
                    "--set", f'traffic.trace.path="{vef}"')
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["trace"]["complete"]
