"""Explicit flows through the Python API: Result.flows, the flows' rows of Result.timeseries,
their physical twins, and the per-flow plot."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import flitsim
from helpers import invoke

FLOWS = """
[topology]
kind = "torus"
sides = [4, 4]

[[traffic.class]]
name = "BE"
message_flits = 8

[[traffic.flow]]
src = 0
dst = 5
rate = 0.2
start = 500
stop = 1500
process = "cbr"

[[traffic.flow_set]]
kind = "random"
dests = 2
rate = 0.02

[run]
warmup = 500
measure = 2000
timeseries_bin = 100
"""

UNITS = '\n[units]\nflit_bytes = 64\nlink_rate = "8Gb/s"\n'


@pytest.fixture(scope="module")
def result() -> flitsim.Result:
    return flitsim.run(FLOWS)


def test_flows_table_has_one_row_per_flow(result: flitsim.Result):
    t = result.flows
    assert t.num_rows == 1 + 16 * 2
    assert t.column_names[:5] == ["id", "src", "dst", "sl", "class"]
    assert t.schema.field("stop").type == pa.int64()
    rows = t.to_pylist()
    assert rows[0]["src"] == 0 and rows[0]["dst"] == 5 and rows[0]["stop"] == 1500
    assert all(r["stop"] is None for r in rows[1:])
    assert [r["id"] for r in rows] == list(range(33))
    # Every flit the run generated is a flow's (the class has no rate of its own).
    assert sum(r["generated_flits"] for r in rows) == result["flits"]["generated"]
    assert all(r["generated_flits"] == r["delivered_flits"] for r in rows)
    assert "offered_mbps" not in t.column_names


def test_timeseries_has_the_flows_rows_and_they_integrate(result: flitsim.Result):
    ts = result.timeseries
    flows = ts.filter(pa.compute.is_valid(ts["flow"]))
    classes = ts.filter(pa.compute.is_null(ts["flow"]))
    assert classes.num_rows > 0 and flows.num_rows == 33 * classes.num_rows
    per_flow = {}
    for r in flows.to_pylist():
        per_flow[r["flow"]] = per_flow.get(r["flow"], 0) + r["flits"]
        assert r["name"] == "BE" and r["sl"] == 0
    delivered = {r["id"]: r["delivered_flits"] for r in result.flows.to_pylist()}
    assert per_flow == delivered
    # The class rows count every flit, the flows' included.
    assert sum(classes["flits"].to_pylist()) == sum(delivered.values())


def test_units_add_physical_flow_columns_and_bytes():
    r = flitsim.run(FLOWS + UNITS)
    t = r.flows
    for col in ("offered_mbps", "accepted_mbps", "accepted_gbps", "delivered_bytes",
                "message_latency_ns_mean"):
        assert col in t.column_names, col
    row = t.to_pylist()[0]
    assert row["delivered_bytes"] == 64 * row["delivered_flits"]
    # 0.2 flits/cycle of 64 bytes every 64 ns: 200 MB/s while on (1000 of 2000 cycles).
    assert row["offered_mbps"] == pytest.approx(100.0, rel=0.05)
    ts = r.timeseries
    assert ts.column_names[-2:] == ["bytes", "bin_start_ns"]
    assert ts["bytes"].to_pylist() == [64 * f for f in ts["flits"].to_pylist()]
    assert r["units"] == {"flit_bytes": 64, "cycle_ns": 64.0}
    sl = r.per_sl.to_pylist()[0]
    assert sl["message_latency_ns_mean"] == pytest.approx(64.0 * sl["message_latency_mean"])
    assert sl["jitter_std_ns"] == pytest.approx(64.0 * sl["jitter_std"])
    assert sl["accepted_mbps"] == pytest.approx(sl["accepted_load"] * 1000.0)


def test_runs_without_flows_have_an_empty_flows_table():
    r = flitsim.run({"topology": {"kind": "torus", "sides": [4, 4]},
                     "traffic": {"load": 0.2}, "run": {"warmup": 100, "measure": 300}})
    assert r.flows.num_rows == 0 and "id" in r.flows.column_names
    assert "flows" not in r


def test_flow_plot_and_cli(runner, tmp_path: Path):
    pytest.importorskip("matplotlib")
    from flitsim.plot import flow_throughput_over_time_figure

    r = flitsim.run(FLOWS + UNITS)
    fig = flow_throughput_over_time_figure(r, max_flows=4)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 4
    assert "MB/s" in ax.get_ylabel() and "first 4 of 33" in ax.get_title()
    with pytest.raises(ValueError, match="per-flow"):
        flow_throughput_over_time_figure(flitsim.run(FLOWS.replace("timeseries_bin = 100\n", "")))
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps(r.summary))
    out = invoke(runner, "plot", str(run_file), "--format", "png")
    assert out.exit_code == 0, out.stderr
    assert sorted(Path(p).name for p in out.stdout.split()) == [
        "flow_throughput_over_time.png", "throughput_over_time.png"]
