"""Ctrl-C (SIGINT) stops long computations (issue 11, item 2).

Each test starts a real ``flitsim`` process on something that runs far longer than the test,
sends SIGINT once it is busy, and checks that the process exits with status 130 and
``interrupted`` on stderr within a second (3 s allowed for a loaded CI machine; the measured
time is printed) and leaves no half-written output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Optional, Tuple

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# The issue asks for 1 s; CI machines are slower and shared.
LIMIT_SECONDS = 3.0

FLITSIM = [sys.executable, "-m", "flitsim"]

LONG_RUN = textwrap.dedent(
    """
    seed = 1
    [topology]
    kind = "torus"
    sides = [4, 4]
    [routing]
    vls = 4
    [traffic]
    load = 0.2
    [run]
    warmup = 100
    measure = 1000000000
    """
)


def _interrupt(
    args: List[str], busy_seconds: float, cwd: Optional[Path] = None
) -> Tuple[int, str, str, float]:
    """Run ``args``, send SIGINT after ``busy_seconds`` and return (status, stdout, stderr,
    seconds from SIGINT to exit)."""
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    try:
        time.sleep(busy_seconds)
        assert proc.poll() is None, f"finished before the interrupt: {proc.communicate()}"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"{' '.join(map(str, args[2:]))}: exit {proc.returncode} {took:.3f} s after SIGINT")
    return proc.returncode, out, err, took


def _assert_interrupted(status: int, err: str, took: float) -> None:
    assert status == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert took < LIMIT_SECONDS, f"{took:.3f} s from SIGINT to exit"


def test_sigint_stops_a_billion_cycle_run(tmp_path: Path) -> None:
    config = tmp_path / "long.toml"
    config.write_text(LONG_RUN, encoding="utf-8")
    args = FLITSIM + ["run", str(config), "--set", "topology.sides=[32,32]", "--json"]
    status, out, err, took = _interrupt(args, busy_seconds=3.0)
    _assert_interrupted(status, err, took)
    assert out == ""


def test_sigint_stops_route_and_writes_no_tables(tmp_path: Path) -> None:
    # dfsssp's layering of a 32x32 torus takes about 20 s on a laptop.
    out_dir = tmp_path / "tables"
    args = FLITSIM + ["route", "torus:32x32", "--engine", "dfsssp", "--max-vls", "15",
                      "--out", str(out_dir)]
    status, out, err, took = _interrupt(args, busy_seconds=2.0)
    _assert_interrupted(status, err, took)
    assert not out_dir.exists()
    assert list(tmp_path.iterdir()) == [], "a temporary directory was left behind"


def test_sigint_stops_topo_info() -> None:
    # The diameter of a 200x200 torus takes 40000 breadth-first searches.
    status, _, err, took = _interrupt(FLITSIM + ["topo", "info", "torus:200x200"], 3.0)
    _assert_interrupted(status, err, took)


def test_sigint_stops_a_sweep_which_then_resumes(tmp_path: Path) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text(LONG_RUN, encoding="utf-8")
    out = tmp_path / "out"
    # One short point, then two that never end, two at a time.
    args = FLITSIM + ["sweep", str(config), "--vary", "run.measure=2000,1000000000,999999999",
                      "--jobs", "2", "--no-progress", "--out", str(out)]
    status, _, err, took = _interrupt(args, busy_seconds=4.0)
    _assert_interrupted(status, err, took)
    assert "1 of 3 points finished" in err, err
    finished = sorted(p.relative_to(out).parts for p in out.rglob("*.parquet"))
    assert [(t, f) for t, _point, f in finished] == [
        (table, "seed-1.parquet") for table in ("histogram", "per_sl", "summary")
    ], finished
    assert len({point for _t, point, _f in finished}) == 1, finished
    assert pq.read_table(out / "summary").column("run.measure").to_pylist() == [2000]
    assert not [p for p in out.rglob("*") if ".tmp" in p.name], "a temporary file was left"
    # The same command resumes: the finished point is kept, the others run again.
    status, _, err, took = _interrupt(args, busy_seconds=3.0)
    _assert_interrupted(status, err, took)
    assert "1 of 3 points finished" in err, err


def test_flitsim_run_raises_keyboard_interrupt(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            import flitsim
            text = {LONG_RUN!r}
            print("started", flush=True)
            try:
                flitsim.run(text)
            except KeyboardInterrupt:
                print("KeyboardInterrupt", flush=True)
                # The cancellation was withdrawn: the next run works.
                r = flitsim.run(text, run__measure=500)
                print("next run", r["cycles"]["measure"], flush=True)
                sys.exit(0)
            sys.exit(1)
            """
        ),
        encoding="utf-8",
    )
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "started"
        time.sleep(2.0)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"flitsim.run: KeyboardInterrupt handled {time.monotonic() - sent:.3f} s after SIGINT")
    assert proc.returncode == 0, err
    assert out.split("\n")[:2] == ["KeyboardInterrupt", "next run 500"], (out, err)
