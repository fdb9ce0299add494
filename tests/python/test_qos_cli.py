"""`flitsim qos dtable`: the DTable configurator from the command line, checked against
Table 10 of Cano-Cano et al. 2022 (shared/papers/000_942770a54f7010fd.txt)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import flitsim
from flitsim.cli import main
from flitsim.cli_qos import dtable
from helpers import assert_user_error, invoke

TABLE10 = [
    "qos", "dtable", "--entries", "128", "--gmtu", "16", "--w", "8", "--k", "2",
    "--sl", "VO:2:2:0.1", "--sl", "VI:4:4:0.3", "--sl", "CL:8:8:0.5",
    "--sl", "BE:16:16:0.05", "--sl", "BK:16:16:5%",
]


def test_table10_from_the_command_line():
    result = CliRunner().invoke(main, TABLE10 + ["--json"])
    assert result.exit_code == 0, result.output
    t = json.loads(result.output)
    assert t["pool"] == 4096 and t["total_weight"] == 4160
    sls = {s["name"]: s for s in t["sls"]}
    assert [sls[n]["entries"] for n in ("VO", "VI", "CL", "BE", "BK")] == [64, 32, 16, 8, 8]
    # VO: Dweight -32 spread from the end of the table: 32 entries of 7, then 32 of 6.
    assert sls["VO"]["weights"] == [7] * 32 + [6] * 32 and sls["VO"]["total_weight"] == 416
    assert set(sls["VI"]["weights"]) == {39} and sls["VI"]["total_weight"] == 1248
    assert set(sls["CL"]["weights"]) == {130} and sls["CL"]["total_weight"] == 2080
    assert sls["BE"]["total_weight"] == sls["BK"]["total_weight"] == 208
    for name, phi in (("VO", 0.1), ("VI", 0.3), ("CL", 0.5), ("BE", 0.05), ("BK", 0.05)):
        assert abs(sls[name]["phi"] - phi) < 1e-9
    assert len(t["table"]) == 128 and all(len(e) == 2 for e in t["table"])
    assert sum(w for _, w in t["table"]) == 4160


def test_text_output_lists_every_sl():
    result = CliRunner().invoke(main, TABLE10)
    assert result.exit_code == 0, result.output
    for name in ("VO", "VI", "CL", "BE", "BK"):
        assert f"  {name} " in result.output
    assert "total weight 4160" in result.output


def test_share_out_of_range_is_a_clear_error():
    args = TABLE10[:-8] + ["--sl", "CL:8:8:0.6", "--sl", "BE:16:16:0.05", "--sl", "BK:16:16:0.05"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "CL" in result.output and "outside" in result.output


def test_bad_sl_syntax():
    result = CliRunner().invoke(main, ["qos", "dtable", "--sl", "VO:2:2"])
    assert result.exit_code == 2
    assert "NAME:MAX_DISTANCE:MTU:SHARE" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--entries", "-1"], "'--entries' / '-n': -1 is not in the range 1<=x<=4096"),
        (["--entries", "100000000"], "100000000 is not in the range 1<=x<=4096"),
        (["--entries", "0"], "0 is not in the range 1<=x<=4096"),
        (["--gmtu", "0"], "'--gmtu': 0 is not in the range 1<=x<=1024"),
        (["--w", "100000"], "'--w': 100000 is not in the range 1<=x<=255"),
        (["--k", "-3"], "'--k': -3 is not in the range 1<=x<=64"),
        (["--unit-bytes", "0"], "'--unit-bytes': 0 is not in the range 1<=x<=65536"),
        (["--entries", "x"], "'x' is not a valid integer"),
        (["--sl", "VO:-1:2:0.5"], "--sl 'VO:-1:2:0.5': MAX_DISTANCE must be in 1..4096, not -1"),
        (["--sl", "VO:2:99999999999999999999:0.5"], "MTU must be in 1..1024 units"),
        (["--sl", "VO:2:2:nan"], "share NaN is not a number"),
    ],
)
def test_dtable_arguments_out_of_bounds_are_clear_errors(runner, args, message):
    result = invoke(runner, "qos", "dtable", "--sl", "BE:4:4:0.5", *args)
    assert_user_error(result, message)


def test_dtable_at_its_bounds_is_quick(runner):
    result = invoke(runner, "qos", "dtable", "--entries", 4096, "--gmtu", 1024, "--w", 255,
                    "--k", 64, "--unit-bytes", 65536, "--sl", "A:2:1024:0.5",
                    "--sl", "B:2:1024:0.5", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["table"]) == 4096


@pytest.mark.parametrize("kwargs", [{"entries": -1}, {"w": 10**9}, {"gmtu": 1.5}, {"k": True}])
def test_dtable_api_checks_its_bounds(kwargs):
    with pytest.raises(flitsim.FlitsimError, match="must be an integer in 1.."):
        dtable([("BE", 4, 4, 0.5)], **kwargs)
