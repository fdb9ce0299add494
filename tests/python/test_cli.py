"""The `flitsim` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import flitsim
from flitsim.cli import BENCH_SCENARIOS, main
from helpers import (
    TINY_CONFIG,
    assert_user_error,
    check_summary,
    console_script,
    invoke,
    without_performance,
)


def test_console_script_help_in_a_subprocess():
    out = subprocess.run(
        [console_script(), "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    for command in ("run", "bench", "demo", "version"):
        assert command in out.stdout


def test_python_dash_m_flitsim_version_in_a_subprocess():
    out = subprocess.run(
        [sys.executable, "-m", "flitsim", "version"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"flitsim {flitsim.__version__}")


def test_version_command(runner):
    result = invoke(runner, "version")
    assert result.exit_code == 0
    assert flitsim.__version__ in result.stdout


def test_run_json_prints_only_the_summary(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    check_summary(summary)


def test_run_json_subprocess_writes_valid_json(tiny_config: Path):
    out = subprocess.run(
        [console_script(), "run", str(tiny_config), "--json", "--set", "run.measure=500"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["cycles"]["measure"] == 500


def test_run_with_sets_and_seed(runner, tiny_config: Path):
    result = invoke(
        runner,
        "run", str(tiny_config), "--json",
        "--set", "traffic.load=0.1", "--set", "run.measure=600", "--seed", "11",
    )
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["seed"] == 11
    assert summary["cycles"]["measure"] == 600
    api = flitsim.run(tiny_config, seed=11, traffic__load=0.1, run__measure=600)
    assert without_performance(summary) == without_performance(api)


def test_run_is_deterministic_for_a_seed(runner, tiny_config: Path):
    first = invoke(runner, "run", str(tiny_config), "--json", "--seed", "5")
    second = invoke(runner, "run", str(tiny_config), "--json", "--seed", "5")
    assert first.exit_code == second.exit_code == 0
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["seed"] == 5
    assert without_performance(a) == without_performance(b)


def test_run_human_readable_report(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config))
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    for label in ("offered load", "accepted load", "latency", "saturated", "performance"):
        assert label in text
    assert "BE" in text  # the per-SL row of the one traffic class
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_run_missing_file(runner, tmp_path: Path):
    missing = tmp_path / "absent.toml"
    result = invoke(runner, "run", str(missing))
    assert_user_error(result, "error: ", "not found", "absent.toml")


@pytest.mark.parametrize("bad", ["traffic.load", "=0.4"])
def test_run_bad_set_syntax(runner, tiny_config: Path, bad: str):
    result = invoke(runner, "run", str(tiny_config), "--set", bad)
    assert_user_error(result, "error: ", "key=value")


def test_run_engine_error_has_no_traceback(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config), "--set", "traffic.no_such_key=1")
    assert_user_error(result, "error: ", "no_such_key")


def test_run_negative_seed(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config), "--seed", "-1")
    assert_user_error(result, "error: ", "seed")


def test_bench_quick_prints_one_row_per_scenario(runner, tmp_path: Path):
    for _, filename, _ in BENCH_SCENARIOS:
        (tmp_path / filename).write_text(TINY_CONFIG, encoding="utf-8")
    result = invoke(runner, "bench", "--quick", "--examples-dir", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 + len(BENCH_SCENARIOS)
    assert "cycles/s" in lines[0]
    for (name, _, _), line in zip(BENCH_SCENARIOS, lines[1:]):
        cells = line.split()
        assert cells[0] == name
        # --quick: warmup 1000 + measure 2000 simulated cycles at least.
        assert int(cells[2]) >= 3000
        # ns per flit-hop is the inverse of the flit-hop rate (up to the printed rounding).
        assert "ns/flit-hop" in lines[0]
        rate, ns = float(cells[5]), float(cells[6])
        assert abs(rate * ns / 1e3 - 1) <= 0.006 / rate + 0.06 / ns
        # CPU time per flit-hop: the loop's thread CPU time, at most its wall time (plus the
        # clocks' resolution).
        assert "cpu ns/fh" in lines[0]
        assert 0 < float(cells[7]) <= ns * 1.05 + 1
        # Hardware counts per flit-hop, or "-" where the platform has no counters (then a
        # note on stderr says why).
        assert "instr/fh" in lines[0] and "LLC miss/fh" in lines[0]
        for cell in cells[8:11]:
            assert cell == "-" or float(cell) >= 0
        if "-" in cells[8:11]:
            assert "note: hardware counters not counted:" in result.stderr
        else:
            # A flit-hop takes hundreds of instructions in this engine, never fewer than 10.
            assert float(cells[8]) > 10
        assert float(cells[11]) >= 0


def test_bench_threads_sets_run_threads(runner, tmp_path: Path):
    for _, filename, _ in BENCH_SCENARIOS:
        (tmp_path / filename).write_text(TINY_CONFIG, encoding="utf-8")
    # A tiny fabric runs on one thread unless told otherwise (the last column).
    result = invoke(runner, "bench", "--quick", "--examples-dir", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert "threads" in result.stdout.splitlines()[0]
    assert [line.split()[-1] for line in result.stdout.strip().splitlines()[1:]] == ["1"] * 3
    result = invoke(
        runner, "bench", "--quick", "--threads", "2", "--examples-dir", str(tmp_path)
    )
    assert result.exit_code == 0, result.stderr
    assert [line.split()[-1] for line in result.stdout.strip().splitlines()[1:]] == ["2"] * 3
    result = invoke(runner, "bench", "--threads", "0", "--examples-dir", str(tmp_path))
    assert result.exit_code != 0 and "--threads" in result.stderr


def test_bench_scale_prints_the_cost_relative_to_the_smallest(runner, tmp_path: Path):
    from flitsim.cli import BENCH_SCALE

    # A tiny stand-in for the 16x16 scenario (the sides are set per row).
    (tmp_path / BENCH_SCENARIOS[0][1]).write_text(TINY_CONFIG, encoding="utf-8")
    result = invoke(runner, "bench", "--scale", "--quick", "--examples-dir", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 + len(BENCH_SCALE)
    assert "x 16x16" in lines[0]
    rows = [line.split() for line in lines[1:]]
    # The first fabric is the reference; every relative cost is the ratio of CPU ns.
    assert rows[0][-1] == "1.00"
    ref = float(rows[0][-2])
    for row in rows:
        assert abs(float(row[-1]) - float(row[-2]) / ref) <= 0.01 + 0.06 / ref
    # --quick: warmup 1000 + measure 2000 simulated cycles at least.
    assert int(rows[1][3]) >= 3000
    assert "instr/fh" in lines[0] and "LLC miss/fh" in lines[0]


def test_bench_scale_large_adds_the_largest_fabrics(runner, tmp_path: Path, monkeypatch):
    import flitsim.cli as cli

    # Stand-ins: a tiny torus for every scenario file, and two small "large" rows (the real
    # ones take 0.6 GiB); each names its own file and overrides.
    for _, filename, _ in BENCH_SCENARIOS:
        (tmp_path / filename).write_text(TINY_CONFIG, encoding="utf-8")
    monkeypatch.setattr(
        cli,
        "BENCH_SCALE_LARGE",
        (
            ("torus 3x3", BENCH_SCENARIOS[0][1], ("topology.sides=[3,3]",), 0.3, 100, 400),
            ("torus 5x3", BENCH_SCENARIOS[2][1], ("topology.sides=[5,3]",), 0.2, 100, 300),
        ),
    )
    args = ["bench", "--scale", "--large", "--quick", "--examples-dir", str(tmp_path)]
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 + len(cli.BENCH_SCALE) + 2
    rows = [line.split() for line in lines[1:]]
    assert rows[-2][:3] == ["torus", "3x3", "0.3"] and rows[-1][:3] == ["torus", "5x3", "0.2"]
    # Their own run lengths (--quick leaves them): warmup + measure cycles, no drain.
    assert int(rows[-2][3]) >= 500 and int(rows[-1][3]) >= 400
    ref = float(rows[0][-2])
    for row in rows:
        assert abs(float(row[-1]) - float(row[-2]) / ref) <= 0.01 + 0.06 / ref
    # --large belongs to --scale; a large row's missing file is named.
    assert_user_error(invoke(runner, "bench", "--large", "--quick"), "--scale")
    (tmp_path / BENCH_SCENARIOS[2][1]).unlink()
    assert_user_error(invoke(runner, *args), BENCH_SCENARIOS[2][1])


def test_bench_omni_path_prints_each_round_and_the_median_share(runner, tmp_path: Path):
    import statistics

    from flitsim.cli import BENCH_OPA, BENCH_OPA_FILE

    # A 2x2 stand-in for the Omni-Path QoS torus: its switches, tables and classes as they are.
    text = (Path(__file__).resolve().parents[2] / "examples" / BENCH_OPA_FILE).read_text()
    small = (
        text.replace("sides = [8, 8]", "sides = [2, 2]")
        .replace("endpoints_per_switch = 8", "endpoints_per_switch = 2")
        .replace("trunk = 10", "trunk = 1")
    )
    assert small.count("[2, 2]") == 1 and "trunk = 1\n" in small
    (tmp_path / BENCH_OPA_FILE).write_text(small, encoding="utf-8")
    result = invoke(
        runner, "bench", "--omni-path", "--quick", "--rounds", "2",
        "--examples-dir", str(tmp_path),
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert "share" in lines[0] and "omni-path cpu ns/fh" in lines[0]
    rows = [line.split() for line in lines[1:]]
    # Per scheduler: one row per round, then the median.
    assert len(rows) == 3 * len(BENCH_OPA)
    for i, (scheduler, load) in enumerate(BENCH_OPA):
        block = rows[3 * i : 3 * i + 3]
        shares = []
        for k, row in enumerate(block[:2]):
            assert row[:3] == [scheduler, f"{load:g}", str(k + 1)]
            xbar, opa, share = (float(c) for c in row[3:6])
            # The share is the crossbar's time over the Omni-Path model's (up to rounding).
            assert abs(share - xbar / opa) <= 0.006 + 0.06 / opa
            shares.append(share)
        assert block[2][:3] == [scheduler, f"{load:g}", "median"]
        assert abs(float(block[2][3]) - statistics.median(shares)) <= 0.006
    # Two benchmarks at once, or a missing scenario, are errors.
    both = invoke(runner, "bench", "--omni-path", "--scale", "--examples-dir", str(tmp_path))
    assert_user_error(both, "--omni-path")
    (tmp_path / BENCH_OPA_FILE).unlink()
    missing = invoke(runner, "bench", "--omni-path", "--examples-dir", str(tmp_path))
    assert_user_error(missing, BENCH_OPA_FILE)


def test_bench_without_scenario_files(runner, tmp_path: Path):
    result = invoke(runner, "bench", "--quick", "--examples-dir", str(tmp_path))
    assert_user_error(result, "error: ", BENCH_SCENARIOS[0][1])


def test_run_report_names_the_deadlock(runner, tiny_config: Path):
    # Min-hop routing on a torus with one VL has cyclic channel dependencies; under heavy
    # load the fabric deadlocks and the report names the blocked buffers.
    args = [
        "run", str(tiny_config),
        "--set", 'routing.engine="minhop"', "--set", "routing.vls=1",
        "--set", "routing.verify=true", "--set", "topology.sides=[8,8]",
        "--set", "traffic.load=0.9", "--set", "run.stall_cycles=300",
        "--set", "run.measure=20000",
    ]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "DEADLOCK" in result.output
    assert "deadlock-free" in result.output and "no (channel" in result.output


def test_bench_scenarios_ship_with_the_package():
    """`flitsim bench` runs the copies installed with flitsim; they equal examples/."""
    from flitsim.cli import BENCH_OPA_FILE, bench_scenarios_dir

    examples = Path(__file__).resolve().parents[2] / "examples"
    for filename in [f for _, f, _ in BENCH_SCENARIOS] + [BENCH_OPA_FILE]:
        assert (bench_scenarios_dir() / filename).read_text() == (
            examples / filename
        ).read_text(), f"python/flitsim/scenarios/{filename} differs from examples/{filename}"


def test_bench_runs_outside_the_repository(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run(
        [console_script(), "bench", "--quick"], capture_output=True, text=True, timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 1 + len(BENCH_SCENARIOS)
