"""flitsim.Result (the summary as a Mapping plus Arrow tables) and dict configs."""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pytest

import flitsim
from flitsim import Result, results, to_toml
from helpers import TINY_CONFIG, check_summary, invoke, without_performance

TWO_CLASSES = TINY_CONFIG.replace(
    "[run]",
    '[[traffic.class]]\nname = "RT"\nshare = 0.5\nmessage_flits = 4\nmtu_flits = 4\n\n[run]',
)

# TINY_CONFIG as a dict: nested tables and an array of tables.
TINY_DICT = {
    "seed": 1,
    "topology": {"kind": "torus", "sides": [4, 4], "endpoints_per_switch": 1, "link_latency": 1},
    "routing": {"engine": "dor", "vls": 2},
    "switch": {"vl_buffer_flits": 16, "routing_delay": 1},
    "traffic": {
        "load": 0.3,
        "pattern": "uniform",
        "class": [{"name": "BE", "share": 1.0, "message_flits": 16, "mtu_flits": 16}],
    },
    "run": {"warmup": 300, "measure": 1000},
}


@pytest.fixture(scope="module")
def result() -> Result:
    return flitsim.run(TWO_CLASSES)


def test_run_returns_a_result_that_reads_like_the_summary(result: Result):
    assert isinstance(result, Result)
    assert isinstance(result, Mapping)
    raw = json.loads(result.to_json())
    assert dict(result) == raw == result.summary
    assert result == raw  # Mapping equality with a plain dict
    assert len(result) == len(raw)
    assert list(result) == list(raw)
    assert result["accepted_load"] == raw["accepted_load"]
    assert result.get("no such key") is None
    assert result.get("no such key", 5) == 5
    assert "latency" in result and "nope" not in result
    assert set(result.keys()) == set(raw)
    with pytest.raises(KeyError):
        result["nope"]


def test_result_keeps_the_summary_contract(tiny_config: Path):
    r = flitsim.run(tiny_config)
    check_summary(r)
    assert r.summary is r.summary  # one dict, not a copy per access
    assert "Result(" in repr(r) and "accepted_load" in repr(r)


def test_result_is_read_only(result: Result):
    with pytest.raises(TypeError):
        result["seed"] = 3  # type: ignore[index]


def test_per_sl_table_matches_the_json(result: Result):
    table = result.per_sl
    assert isinstance(table, pa.Table)
    assert table.num_rows == len(result["per_sl"]) == 2
    assert table.column_names == [
        "sl", "name", "offered_load", "accepted_load", "share",
        "latency_mean", "latency_p50", "latency_p99", "latency_max", "latency_count",
        "network_latency_mean", "network_latency_p50", "network_latency_p99",
        "network_latency_max", "network_latency_count",
        "message_latency_mean", "message_latency_p50", "message_latency_p99",
        "message_latency_max", "message_latency_count", "jitter_std", "jitter_p99_minus_p50",
    ]
    for row, raw in zip(table.to_pylist(), result["per_sl"]):
        assert row["sl"] == raw["sl"] and row["name"] == raw["name"]
        assert row["accepted_load"] == raw["accepted_load"]
        assert row["latency_p99"] == raw["latency"]["p99"]
        assert row["latency_count"] == raw["latency"]["count"]
        assert row["network_latency_mean"] == raw["network_latency"]["mean"]
        assert row["message_latency_p99"] == raw["message_latency"]["p99"]
        assert row["jitter_std"] == raw["jitter"]["std"]
        # Single-packet messages (message_flits <= mtu_flits): message latency = packet latency.
        assert raw["message_latency"] == raw["latency"]
    assert table.schema.field("latency_p50").type == pa.float64()
    assert result.per_sl is table  # built once


def test_ports_table_matches_the_json(result: Result):
    table = result.ports
    assert table.num_rows == len(result["ports"]) > 0
    assert table.column_names == [
        "switch", "port", "to_endpoint", "utilisation", "flits", "vl_flits",
    ]
    first, raw = table.to_pylist()[0], result["ports"][0]
    assert first["switch"] == raw["switch"] and first["port"] == raw["port"]
    assert first["vl_flits"] == raw["vl_flits"]
    assert first["flits"] == sum(raw["vl_flits"])


def test_ports_table_is_empty_without_port_stats(tiny_config: Path):
    r = flitsim.run(tiny_config, run__per_port_stats=False)
    assert r["ports"] == []
    assert r.ports.num_rows == 0
    assert "utilisation" in r.ports.column_names


def test_latency_histogram_table(result: Result):
    table = result.latency_histogram
    assert table.num_rows == len(result["latency_histogram"]) > 0
    assert table.column_names == ["sl", "name", "latency", "count"]
    assert set(table["name"].to_pylist()) == {"BE", "RT"}
    # Every measured packet lands in one bin.
    assert sum(table["count"].to_pylist()) == result["latency"]["count"]
    assert table.schema.field("latency").type == pa.int64()


def test_to_json_and_pickle(result: Result):
    assert json.loads(result.to_json(indent=2)) == result.summary
    copy = pickle.loads(pickle.dumps(result))
    assert copy == result
    assert copy.per_sl.equals(result.per_sl)


def test_run_accepts_a_dict_config(tiny_text: str):
    from_dict = flitsim.run(TINY_DICT)
    from_text = flitsim.run(tiny_text)
    assert without_performance(from_dict) == without_performance(from_text)
    assert from_dict["config_hash"] == from_text["config_hash"]


def test_dict_config_takes_overrides():
    r = flitsim.run(TINY_DICT, seed=4, traffic__load=0.1, sets=["run.measure=500"])
    assert (r["seed"], r["cycles"]["measure"]) == (4, 500)
    assert r["offered_load"] < 0.2


def test_dict_config_errors_name_the_key():
    bad = {**TINY_DICT, "traffic": {**TINY_DICT["traffic"], "lod": 0.3}}
    with pytest.raises(flitsim.FlitsimError, match="did you mean `load`"):
        flitsim.run(bad)


def test_to_toml_round_trips_through_a_toml_parser():
    # tomllib on Python >= 3.11, tomli (a dependency there) below.
    from flitsim.values import toml_loads

    data = {
        "seed": 7,
        "title": 'a "quoted" name\twith tab',
        "flag": True,
        "ratio": 1e-05,
        "empty": [],
        "topology": {"kind": "torus", "sides": [4, 4], "nested": {"deep": {"x": 1}}},
        "traffic": {"class": [{"name": "a", "extra": {"k": 1}}, {"name": "b"}], "load": 0.5},
        "dotted key": {"a.b": 1},
    }
    assert toml_loads(to_toml(data)) == data


def test_to_toml_leaves_out_none_and_rejects_non_dicts():
    assert to_toml({"a": None, "b": 1, "t": {"c": None}}) == "b = 1\n\n[t]\n"
    with pytest.raises(TypeError):
        to_toml([1, 2])  # type: ignore[arg-type]
    with pytest.raises(flitsim.FlitsimError):
        to_toml({"x": float("inf")})


# -- the tables against the core's result schema ---------------------------------------------


def _schema_leaves(schema, node, path=()):
    """Paths of the scalar fields under ``node`` of the core's result schema; a list of objects
    contributes its element's fields under ``path + ("[]",)``, an untyped field (any JSON)
    itself."""
    node = results.schema_node(schema, node)
    if "properties" in node:
        for key, sub in node["properties"].items():
            yield from _schema_leaves(schema, sub, (*path, key))
    elif node.get("type") in ("array", ["array", "null"]) and "properties" in results.schema_node(
        schema, node.get("items") or {}
    ):
        yield from _schema_leaves(schema, node["items"], (*path, "[]"))
    else:
        yield path


def _tabled_paths():
    """Every summary path a table or the not-tabled list accounts for."""
    paths = [c.path for c in (*results._SUMMARY_COLUMNS, *results._PHYSICAL_COLUMNS)]
    paths += list(results.NOT_TABLED)
    for name, cols in results._LIST_TABLES:
        paths += [(name, "[]", *c.path) for c in cols]
    paths += [c.path for c in results._TIMESERIES_COLUMNS]
    paths += [c.path for c in results._TIMESERIES_FLOW_COLUMNS]
    return paths


def test_every_result_field_is_in_a_table_or_listed_as_not_tabled():
    schema = results.result_schema()
    known = _tabled_paths()
    missing = [
        ".".join(leaf)
        for leaf in _schema_leaves(schema, schema)
        if not any(leaf[: len(p)] == p for p in known)
    ]
    assert not missing, (
        f"the core's result has fields flitsim.results does not know: {missing}; add them to "
        "a table's columns or to results.NOT_TABLED"
    )


def test_every_column_names_a_field_of_the_core_result():
    schema = results.result_schema()
    leaves = set(_schema_leaves(schema, schema))
    for path in _tabled_paths():
        assert any(leaf[: len(path)] == path for leaf in leaves), path


def test_column_types_come_from_the_core_schema(result: Result):
    assert results.per_sl_schema([]).field("sl").type == pa.int64()
    assert results.summary_schema([], result.summary).field("saturated").type == pa.bool_()
    assert result.ports.schema.field("vl_flits").type == pa.list_(pa.int64())
    bogus = results._Column("x", ("no_such_field",))
    with pytest.raises(KeyError, match="no_such_field"):
        results._arrow_type("RunResult", bogus)


def test_physical_units_add_summary_columns_only_when_set(result: Result):
    from flitsim.cli import format_summary

    with_units = flitsim.run(
        TINY_CONFIG + '\n[units]\nflit_bytes = 64\nlink_rate = "8Gb/s"\n',
        sets=['run.measure="64us"'],
    )
    assert with_units["cycles"]["measure"] == 1000  # 64 µs at 64 ns per cycle
    row = results.summary_row(with_units.summary)
    assert row["latency_ns_p99"] == with_units["latency"]["p99"] * 64.0
    assert row["accepted_gbps"] == pytest.approx(with_units["accepted_load"] * 8.0)
    schema = results.summary_schema([], with_units.summary)
    assert schema.field("latency_ns_mean").type == pa.float64()
    assert "latency_ns_mean" not in results.summary_row(result.summary)
    assert "latency_ns_mean" not in results.summary_schema([], result.summary).names
    assert " ns" in format_summary(with_units.summary)
    assert "Gb/s" not in format_summary(result.summary)


# A MinHop 8x8 torus with one VL deadlocks long before its warm-up ends (issue 11, item 4).
DEADLOCKING = dict(
    topology__sides=[8, 8],
    routing__engine="minhop",
    routing__vls=1,
    traffic__load=0.9,
    run__stall_cycles=500,
    run__warmup=20000,
)


def test_a_deadlocked_run_reports_null_statistics_not_zeros(tiny_text: str):
    r = flitsim.run(tiny_text, **DEADLOCKING)
    s = r.summary
    assert s["deadlock"] and s["saturated"] and not s["drained"]
    for key in ("offered_load", "accepted_load", "hops_mean"):
        assert s[key] is None, key
    for block in ("latency", "network_latency"):
        assert s[block] == {"mean": None, "p50": None, "p99": None, "max": None, "count": 0}
    (sl,) = s["per_sl"]
    assert (sl["offered_load"], sl["accepted_load"], sl["share"]) == (None, None, None)
    assert sl["latency"]["mean"] is None
    # The tables keep the nulls (typed float64 columns), never 0.
    table = r.per_sl
    assert table.schema.field("accepted_load").type == pa.float64()
    assert table.column("accepted_load").to_pylist() == [None]
    assert table.column("latency_mean").to_pylist() == [None]
    assert table.column("latency_count").to_pylist() == [0]
    row = results.summary_schema([], s)
    assert row.field("latency_mean").type == pa.float64()


def test_nullable_result_fields_have_nullable_schema_types():
    schema = results.result_schema()
    props = schema["properties"]
    assert props["accepted_load"]["type"] == ["number", "null"]
    latency = results.schema_node(schema, props["latency"])["properties"]
    assert latency["p99"]["type"] == ["integer", "null"]
    assert latency["count"]["type"] == "integer"


def test_the_text_report_of_a_deadlocked_run_says_deadlock(runner, tiny_config: Path):
    sets = [f"{k.replace('__', '.')}={json.dumps(v)}" for k, v in DEADLOCKING.items()]
    result = invoke(runner, "run", tiny_config, *[a for s in sets for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    lines = {line.split("  ")[1].strip(): line for line in result.output.splitlines()
             if line.startswith("  ") and len(line.split("  ")) > 2}
    for label in ("offered load", "accepted load", "latency", "hops (mean)"):
        assert "deadlock" in lines[label], result.output
    assert "0.0000" not in result.output
    assert "DEADLOCK" in result.output


def test_timeseries_table_sums_to_the_delivered_flits(result: Result):
    assert "timeseries" not in result
    assert result.timeseries.num_rows == 0
    assert result.timeseries.column_names == ["bin_start", "bin_cycles", "sl", "name", "flits",
                                              "flow"]
    r = flitsim.run(TWO_CLASSES, run__timeseries_bin=50)
    table = r.timeseries
    assert table.schema.field("flits").type == pa.int64()
    bins = -(-r["cycles"]["total"] // 50)
    assert table.num_rows == 2 * bins
    assert set(table["name"].to_pylist()) == {"BE", "RT"}
    assert sum(table["flits"].to_pylist()) == r["flits"]["delivered"]
    warmup, measure = r["cycles"]["warmup"], r["cycles"]["measure"]
    assert warmup % 50 == 0 and measure % 50 == 0
    for c in r["per_sl"]:
        window = sum(
            row["flits"]
            for row in table.to_pylist()
            if row["sl"] == c["sl"] and warmup <= row["bin_start"] < warmup + measure
        )
        assert window == round(c["accepted_load"] * measure * r["endpoints"])
    # Everything else is as without the time series.
    plain = flitsim.run(TWO_CLASSES)
    assert without_performance({k: v for k, v in r.items() if k not in ("timeseries",
                                                                         "config_hash")}) == \
        without_performance({k: v for k, v in plain.items() if k != "config_hash"})


def test_throughput_over_time_figure():
    pytest.importorskip("matplotlib")
    from flitsim.plot import throughput_over_time_figure

    r = flitsim.run(TWO_CLASSES, run__timeseries_bin=50)
    fig = throughput_over_time_figure(r)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 2
    with pytest.raises(ValueError, match="timeseries_bin"):
        throughput_over_time_figure(flitsim.run(TWO_CLASSES))


def test_cli_plot_of_a_run_with_a_time_series(runner, tiny_config: Path, tmp_path: Path):
    pytest.importorskip("matplotlib")
    result = invoke(runner, "run", str(tiny_config), "--set", "run.timeseries_bin=50", "--json")
    assert result.exit_code == 0, result.stderr
    run_file = tmp_path / "run.json"
    run_file.write_text(result.stdout)
    result = invoke(runner, "plot", str(run_file), "--format", "png")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == [str(tmp_path / "throughput_over_time.png")]
    assert (tmp_path / "throughput_over_time.png").is_file()
    plain = invoke(runner, "run", str(tiny_config), "--json")
    run_file.write_text(plain.stdout)
    result = invoke(runner, "plot", str(run_file))
    assert result.exit_code != 0
    assert "run.timeseries_bin" in result.stderr
