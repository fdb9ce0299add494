"""`flitsim qos dtable`: the DTable configurator from the command line, checked against
Table 10 of Cano-Cano et al. 2022 (shared/papers/000_942770a54f7010fd.txt)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from flitsim.cli import main

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
