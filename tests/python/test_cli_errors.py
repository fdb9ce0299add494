"""One error path for every command (flitsim._cli): `error: …` on stderr and exit status 2
for bad input, never a traceback; Ctrl-C exits 130 with a short message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import flitsim
from helpers import assert_user_error, invoke

RANDOM = "random:switches=12,ports=8,endpoints=2,links=20,seed=5"


# --- a bad --set in every command that takes one -------------------------------------------


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("traffic.load=[1", "cannot read value"),  # the value grammar (flitsim.values)
        ("traffic.load=.5", "not a TOML number"),
        ("traffic.load", "key=value"),
        ("traffic.lod=0.3", "did you mean `load`?"),  # the engine's validation
        ("traffic.load=nan", "traffic.load"),
    ],
)
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_bad_set(runner, tiny_config: Path, tmp_path: Path, command, value, fragment):
    extra = ["--out", tmp_path / "o"] if command == "sweep" else []
    result = invoke(runner, command, tiny_config, "--set", value, *extra)
    assert_user_error(result, fragment)


@pytest.mark.parametrize(
    "vary, fragment",
    [
        ("traffic.load=0.1,[", "--vary traffic.load=0.1,["),
        ("traffic.load=.1:.5:.1", "not a TOML number"),
        ("traffic.load=nan", "finite"),
        ("traffic.lod=0.1", "did you mean `load`?"),
    ],
)
def test_bad_vary(runner, tiny_config: Path, tmp_path: Path, vary, fragment):
    result = invoke(runner, "sweep", tiny_config, "--vary", vary, "--out", tmp_path / "o")
    assert_user_error(result, fragment)


# --- every command group: fabric, qos, plots, reports, bench --------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["topo", "info", "torus:0x3"], "torus"),
        (["topo", "info", "no-such-file.topo"], "no-such-file.topo"),
        (["topo", "generate", "nonsense:1"], "nonsense"),
        (["route", RANDOM, "--engine", "no-such-engine"], "no-such-engine"),
        (["route", RANDOM, "--engine", "updn", "--root", "0x1"], "root"),
        (["ebb", RANDOM], "exactly one of --engine E and --tables DIR"),
        (["ebb", RANDOM, "--tables", "no-such-dir"], "no-such-dir"),
        (["qos", "dtable", "--sl", "VO:2:2"], "NAME:MAX_DISTANCE:MTU:SHARE"),
        (["qos", "dtable", "--sl", "VO:x:2:0.1"], "whole numbers"),
        (["qos", "dtable", "--sl", "VO:2:2:1.5"], "shares"),
        (["plot", "no-such-sweep"], "not found"),
        (["report", "no-such-sweep"], "not found"),
        (["bench", "--examples-dir", "no-such-dir"], "not found"),
    ],
)
def test_bad_input_in_every_group(runner, args, fragment):
    assert_user_error(invoke(runner, *args), fragment)


def test_unwritable_output_is_an_error(runner, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = invoke(runner, "topo", "generate", "torus:2x2", "--out", blocker / "t.json")
    assert_user_error(result, "cannot write")


@pytest.mark.parametrize(
    "args, fragment, command",
    [
        (["route", RANDOM, "--engine", "dfsssp", "--heuristic", "bogus"], "--heuristic",
         "flitsim route"),
        (["run"], "FILE.toml", "flitsim run"),
        (["run", "x.toml", "--no-such-flag"], "--no-such-flag", "flitsim run"),
        (["qos", "dtable", "--entries", "many", "--sl", "VO:2:2:0.1"], "--entries",
         "flitsim qos dtable"),
        (["no-such-command"], "no-such-command", "flitsim"),
    ],
)
def test_usage_errors_use_the_same_format(runner, args, fragment, command):
    result = invoke(runner, *args)
    assert_user_error(result, fragment, f"Try '{command} -h' for help.")


def test_help_and_version_still_exit_0(runner):
    for args in (["-h"], ["run", "--help"], ["topo", "-h"], ["-V"]):
        result = invoke(runner, *args)
        assert result.exit_code == 0, (args, result.stderr)
        assert result.stdout


# --- Ctrl-C ---------------------------------------------------------------------------------


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "target, args",
    [
        ("topo_info_json", ["topo", "info", "torus:4x4"]),
        ("route_json", ["route", "torus:4x4", "--engine", "dor"]),
        ("dtable_json", ["qos", "dtable", "--sl", "VO:2:2:1"]),
        ("run_json", ["run", "{config}"]),
    ],
)
def test_ctrl_c_exits_130_without_traceback(runner, monkeypatch, tiny_config, target, args):
    monkeypatch.setattr(flitsim._core, target, _interrupt)
    args = [str(tiny_config) if a == "{config}" else a for a in args]
    result = invoke(runner, *args)
    assert result.exit_code == 130, (result.stdout, result.stderr)
    assert result.stderr == "interrupted\n"


def test_ctrl_c_in_a_sweep_says_how_to_resume(runner, monkeypatch, tiny_config, tmp_path):
    monkeypatch.setattr(flitsim._core, "resolve_json", _interrupt)
    result = invoke(runner, "sweep", tiny_config, "--out", tmp_path / "o")
    assert result.exit_code == 130
    assert result.stderr == "interrupted: rerun the same command to resume\n"


# --- the console script, as a user runs it --------------------------------------------------


def test_console_script_bad_set_has_no_traceback(tiny_config: Path):
    out = subprocess.run(
        [sys.executable, "-m", "flitsim", "run", str(tiny_config), "--set", "traffic.load=[1"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and "Traceback" not in out.stderr
    assert out.stdout == ""
