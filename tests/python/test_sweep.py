"""flitsim.sweep / flitsim.load_sweep and the `flitsim sweep` command."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import flitsim
from flitsim.cli import main
from helpers import TINY_CONFIG, console_script

sweep_module = importlib.import_module("flitsim.sweep")
parse_vary = sweep_module.parse_vary

LOADS = [0.1, 0.3]
VARY = {"traffic.load": LOADS, "routing.vls": [2, 4]}

SUMMARY_COLUMNS = [
    "traffic.load", "routing.vls", "seed", "config_hash", "version", "endpoints",
    "offered_load", "accepted_load", "saturated", "drained", "deadlock",
    "latency_mean", "latency_p50", "latency_p99", "latency_max",
    "network_latency_mean", "network_latency_p50", "network_latency_p99",
    "network_latency_max", "hops_mean", "flits_generated", "flits_delivered",
    "flits_remaining", "cycles_total", "wall_seconds",
    "sl.BE.offered_load", "sl.BE.accepted_load", "sl.BE.share", "sl.BE.latency_mean",
    "sl.BE.latency_p99",
]
PER_SL_COLUMNS = [
    "traffic.load", "routing.vls", "seed", "config_hash", "version", "sl", "name",
    "offered_load", "accepted_load", "share", "latency_mean", "latency_p50", "latency_p99",
    "latency_max", "network_latency_mean", "network_latency_p99",
    "message_latency_mean", "message_latency_p99", "jitter_std",
]
HISTOGRAM_COLUMNS = [
    "traffic.load", "routing.vls", "seed", "config_hash", "version", "sl", "name", "latency",
    "count",
]


def run_file(out: Path, table: str, point: Dict[str, Any], seed: int) -> Path:
    """Where a sweep stores the ``table`` file of one run."""
    return out / table / sweep_module.point_id(point) / f"seed-{seed}.parquet"


def deterministic(table: pa.Table) -> pa.Table:
    """The table less its wall-clock column, the only one allowed to differ between runs."""
    return table.drop(["wall_seconds"])


# -- the API ----------------------------------------------------------------------------


def test_sweep_table_has_one_row_per_point_and_seed_in_grid_order(tiny_config: Path):
    table = flitsim.sweep(tiny_config, vary=VARY, seeds=2, jobs=2, progress=False)
    assert table.column_names == SUMMARY_COLUMNS
    assert table.num_rows == 2 * 2 * 2
    cells = table.select(["traffic.load", "routing.vls", "seed"]).to_pylist()
    assert [tuple(c.values()) for c in cells] == [
        (load, vls, seed) for load in LOADS for vls in (2, 4) for seed in (1, 2)
    ]
    schema = table.schema
    assert schema.field("traffic.load").type == pa.float64()
    assert schema.field("routing.vls").type == pa.int64()
    assert schema.field("seed").type == pa.int64()
    assert schema.field("saturated").type == pa.bool_()
    assert schema.field("latency_p99").type == pa.float64()
    assert table["version"].to_pylist() == [flitsim.__version__] * 8


def test_sweep_rows_equal_single_runs(tiny_config: Path):
    table = flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, seeds=[7], jobs=1)
    for row, load in zip(table.to_pylist(), LOADS):
        r = flitsim.run(tiny_config, seed=7, traffic__load=load)
        assert row["config_hash"] == r["config_hash"]
        assert row["accepted_load"] == r["accepted_load"]
        assert row["latency_p99"] == r["latency"]["p99"]
        assert row["flits_delivered"] == r["flits"]["delivered"]
        assert row["sl.BE.accepted_load"] == r["per_sl"][0]["accepted_load"]
        assert row["cycles_total"] == r["cycles"]["total"]


def test_jobs_do_not_change_the_results(tiny_config: Path):
    one = flitsim.sweep(tiny_config, vary=VARY, seeds=2, jobs=1)
    two = flitsim.sweep(tiny_config, vary=VARY, seeds=2, jobs=2)
    assert deterministic(one).equals(deterministic(two))


def test_dask_backend_matches_the_local_backend(tiny_config: Path, tmp_path: Path):
    local = flitsim.sweep(tiny_config, vary=VARY, seeds=2, jobs=1)
    dask = flitsim.sweep(
        tiny_config, vary=VARY, seeds=2, jobs=2, backend="dask", out=tmp_path / "d"
    )
    assert deterministic(dask).equals(deterministic(local))
    assert deterministic(flitsim.load_sweep(tmp_path / "d").summary).equals(
        deterministic(local)
    )


def test_dask_backend_with_a_client(tiny_config: Path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        dask = flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, backend="dask",
                             scheduler=client)
        # The caller's client stays usable.
        assert client.submit(sum, [1, 2]).result() == 3
    local = flitsim.sweep(tiny_config, vary={"traffic.load": LOADS})
    assert deterministic(dask).equals(deterministic(local))


def test_seeds_count_starts_at_the_configured_seed(tiny_config: Path):
    table = flitsim.sweep(tiny_config, seeds=3, sets=["seed=10"])
    assert table["seed"].to_pylist() == [10, 11, 12]
    table = flitsim.sweep(tiny_config, seeds=2, seed=20)  # a keyword override of `seed`
    assert table["seed"].to_pylist() == [20, 21]
    table = flitsim.sweep(tiny_config, seeds=[5, 3])
    assert table["seed"].to_pylist() == [5, 3]


def test_overrides_apply_to_every_run(tiny_config: Path):
    table = flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, run__measure=500)
    expected = flitsim.run(tiny_config, traffic__load=0.3, run__measure=500)
    assert table["cycles_total"].to_pylist()[1] == expected["cycles"]["total"]


def test_sweep_accepts_text_and_dict_configs(tiny_text: str, tiny_config: Path):
    from test_results import TINY_DICT

    by_path = flitsim.sweep(tiny_config, vary={"traffic.load": LOADS})
    by_text = flitsim.sweep(tiny_text, vary={"traffic.load": LOADS})
    by_dict = flitsim.sweep(TINY_DICT, vary={"traffic.load": LOADS})
    assert deterministic(by_text).equals(deterministic(by_path))
    assert deterministic(by_dict).equals(deterministic(by_path))


def test_value_types_become_column_types(tiny_config: Path, tmp_path: Path):
    table = flitsim.sweep(
        tiny_config,
        vary={
            "routing.verify": [False, True],
            "traffic.pattern": ["uniform", "transpose"],
            "topology.sides": [[4, 4], [8, 2]],
            "traffic.load": [0.2, 1],  # int and float: float64
        },
        out=tmp_path / "o",
    )
    schema = table.schema
    assert schema.field("routing.verify").type == pa.bool_()
    assert schema.field("traffic.pattern").type == pa.string()
    assert schema.field("topology.sides").type == pa.string()
    assert schema.field("traffic.load").type == pa.float64()
    assert table["topology.sides"].to_pylist()[:4] == ["4x4", "4x4", "8x2", "8x2"]
    assert table["traffic.load"].to_pylist()[:2] == [0.2, 1.0]
    first = {"routing.verify": False, "traffic.pattern": "uniform"}
    point = {**first, "topology.sides": [4, 4], "traffic.load": 0.2}
    assert run_file(tmp_path / "o", "summary", point, 1).is_file()
    point = {**first, "topology.sides": [8, 2], "traffic.load": 1}
    assert run_file(tmp_path / "o", "summary", point, 1).is_file()
    assert flitsim.load_sweep(tmp_path / "o").vary["topology.sides"] == [[4, 4], [8, 2]]


def test_numpy_values_are_accepted(tiny_config: Path):
    np = pytest.importorskip("numpy")
    table = flitsim.sweep(tiny_config, vary={"traffic.load": np.array([0.1, 0.3])},
                          seeds=np.array([1, 2]))
    assert table["traffic.load"].to_pylist() == [0.1, 0.1, 0.3, 0.3]


# -- the dataset ------------------------------------------------------------------------


def test_dataset_layout_and_contents(tiny_config: Path, tmp_path: Path):
    out = tmp_path / "sweep"
    table = flitsim.sweep(tiny_config, vary=VARY, seeds=2, jobs=2, out=out)

    spec = json.loads((out / "sweep.json").read_text())
    assert spec["format"] == "flitsim-sweep" and spec["version"] == 2
    assert spec["flitsim_version"] == flitsim.__version__
    assert spec["config"] == TINY_CONFIG
    assert spec["origin"] == str(tiny_config)
    assert spec["vary"] == VARY
    assert spec["seeds"] == [1, 2]
    assert spec["overrides"] == []

    for name in ("summary", "per_sl", "histogram"):
        files = sorted(p.relative_to(out / name).as_posix() for p in (out / name).rglob("*"))
        parquet = [f for f in files if f.endswith(".parquet")]
        assert len(parquet) == 8, files
        assert not any("=" in f for f in files), files  # nothing looks like a hive partition
        for load, vls, seed in ((0.1, 2, 1), (0.3, 4, 2)):
            point = {"traffic.load": load, "routing.vls": vls}
            assert run_file(out, name, point, seed).is_file()
        assert not any(f.endswith(".tmp") for f in files)

    one = pq.read_table(run_file(out, "summary", {"traffic.load": 0.3, "routing.vls": 4}, 2))
    assert one.num_rows == 1
    assert one.column_names == SUMMARY_COLUMNS
    assert one.to_pylist()[0] == table.to_pylist()[7]

    loaded = flitsim.load_sweep(out)
    assert loaded.complete and loaded.missing == []
    assert loaded.vary == VARY and loaded.spec == spec
    assert loaded.summary.equals(table)
    assert loaded.per_sl.column_names == PER_SL_COLUMNS
    assert loaded.per_sl.num_rows == 8  # one SL
    assert loaded.histogram.column_names == HISTOGRAM_COLUMNS
    assert loaded.histogram.num_rows > 8
    keys = loaded.histogram.select(["traffic.load", "routing.vls", "seed"]).to_pylist()
    assert [tuple(k.values()) for k in keys] == sorted(
        (tuple(k.values()) for k in keys), key=lambda k: (LOADS.index(k[0]), k[1], k[2])
    )

    # The files also read as one dataset without hive partitioning inference.
    summary = ds.dataset(out / "summary", format="parquet", partitioning=None).to_table()
    assert summary.num_rows == 8
    assert set(summary.column_names) == set(SUMMARY_COLUMNS)


def test_histogram_matches_the_run(tiny_config: Path, tmp_path: Path):
    flitsim.sweep(tiny_config, seeds=[3], out=tmp_path / "h")
    hist = flitsim.load_sweep(tmp_path / "h").histogram
    r = flitsim.run(tiny_config, seed=3)
    assert hist.select(["sl", "latency", "count"]).equals(
        r.latency_histogram.select(["sl", "latency", "count"])
    )


def test_names_are_filesystem_safe(tiny_config: Path, tmp_path: Path):
    label = importlib.import_module("flitsim._sweep_store")._dir_label
    assert label(0.3) == "0.3" and label(8) == "8" and label(True) == "true"
    assert label("dor") == "dor" and label([4, 4]) == "4x4"
    assert label("a/b c") == "a_b_c"
    assert label("..") == "_."
    assert len(label("x" * 500)) <= 64
    # Directory names are hashes: values that share a version-1 label are no longer refused
    # (they fail here only because they are not traffic patterns).
    with pytest.raises(flitsim.FlitsimError, match="pattern"):
        flitsim.sweep(tiny_config, vary={"traffic.pattern": ["a/b", "a b"]})
    assert sweep_module.point_id({"k": "a/b"}) != sweep_module.point_id({"k": "a b"})
    assert sweep_module.point_id({"k": 1}) != sweep_module.point_id({"k": 1.0})
    assert sweep_module.point_id({"k": 1}) != sweep_module.point_id({"k": True})


def test_resume_reruns_only_the_missing_run(tiny_config: Path, tmp_path: Path, count_runs):
    out = tmp_path / "resume"
    vary = {"traffic.load": LOADS}
    first = flitsim.sweep(tiny_config, vary=vary, seeds=2, jobs=2, out=out)
    victim = run_file(out, "summary", {"traffic.load": 0.3}, 1)
    kept = run_file(out, "summary", {"traffic.load": 0.1}, 1)
    kept_mtime = kept.stat().st_mtime_ns
    victim.unlink()

    counter = count_runs()
    second = flitsim.sweep(tiny_config, vary=vary, seeds=2, jobs=2, out=out)
    assert counter.calls == [(("traffic.load=0.3",), 1)]
    assert kept.stat().st_mtime_ns == kept_mtime
    assert victim.is_file()
    assert deterministic(second).equals(deterministic(first))
    assert flitsim.load_sweep(out).summary.equals(second)

    # Nothing left to do: no run at all.
    counter.calls.clear()
    third = flitsim.sweep(tiny_config, vary=vary, seeds=2, out=out)
    assert counter.calls == []
    assert third.equals(second)


def test_resume_redoes_runs_with_a_stale_config_hash(
    tiny_config: Path, tmp_path: Path, count_runs
):
    out = tmp_path / "stale"
    flitsim.sweep(tiny_config, seeds=2, out=out)
    path = run_file(out, "summary", {}, 2)
    table = pq.read_table(path)
    table = table.set_column(
        table.column_names.index("config_hash"), "config_hash", pa.array(["0" * 16])
    )
    pq.write_table(table, path)
    counter = count_runs()
    result = flitsim.sweep(tiny_config, seeds=2, out=out)
    assert counter.calls == [((), 2)]
    assert result["config_hash"].to_pylist()[1] == flitsim.run(tiny_config, seed=2)["config_hash"]


def test_resume_redoes_a_run_missing_its_detail_files(
    tiny_config: Path, tmp_path: Path, count_runs
):
    out = tmp_path / "detail"
    flitsim.sweep(tiny_config, seeds=2, out=out)
    run_file(out, "histogram", {}, 1).unlink()
    counter = count_runs()
    flitsim.sweep(tiny_config, seeds=2, out=out)
    assert counter.calls == [((), 1)]
    assert run_file(out, "histogram", {}, 1).is_file()


def test_interrupt_keeps_finished_runs_and_a_rerun_completes(
    tiny_config: Path, tmp_path: Path, count_runs
):
    out = tmp_path / "interrupted"
    vary = {"traffic.load": LOADS}
    count_runs(interrupt_on=2)
    with pytest.raises(KeyboardInterrupt) as caught:
        flitsim.sweep(tiny_config, vary=vary, seeds=2, jobs=1, out=out)
    assert isinstance(caught.value, flitsim.SweepInterrupted)
    assert (caught.value.finished, caught.value.total) == (1, 4)
    summaries = sorted(p.relative_to(out).as_posix() for p in out.rglob("summary/**/*.parquet"))
    first = run_file(out, "summary", {"traffic.load": 0.1}, 1)
    assert summaries == [first.relative_to(out).as_posix()]
    assert not list(out.rglob("*.tmp"))
    partial = flitsim.load_sweep(out)
    assert not partial.complete
    assert partial.summary.num_rows == 1
    assert partial.missing == [
        ({"traffic.load": 0.1}, 2), ({"traffic.load": 0.3}, 1), ({"traffic.load": 0.3}, 2)
    ]

    counter = count_runs()
    finished = flitsim.sweep(tiny_config, vary=vary, seeds=2, jobs=1, out=out)
    assert len(counter.calls) == 3
    fresh = flitsim.sweep(tiny_config, vary=vary, seeds=2)
    assert deterministic(finished).equals(deterministic(fresh))


def test_a_different_sweep_is_refused_without_overwrite(tiny_config: Path, tmp_path: Path):
    out = tmp_path / "taken"
    flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, out=out)
    with pytest.raises(flitsim.FlitsimError, match="different sweep.*overwrite"):
        flitsim.sweep(tiny_config, vary={"traffic.load": [0.2]}, out=out)
    with pytest.raises(flitsim.FlitsimError, match="seeds"):
        flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, seeds=2, out=out)
    with pytest.raises(flitsim.FlitsimError, match="overrides were"):
        flitsim.sweep(tiny_config, vary={"traffic.load": LOADS}, out=out, routing__vls=4)
    edited = tmp_path / "edited.toml"
    edited.write_text(TINY_CONFIG.replace("vls = 2", "vls = 4"))
    with pytest.raises(flitsim.FlitsimError, match="config differs"):
        flitsim.sweep(edited, vary={"traffic.load": LOADS}, out=out)
    assert json.loads((out / "sweep.json").read_text())["vary"] == {"traffic.load": LOADS}

    flitsim.sweep(tiny_config, vary={"traffic.load": [0.2]}, out=out, overwrite=True)
    assert not (out / "summary" / "traffic.load=0.1").exists()
    assert flitsim.load_sweep(out).summary["traffic.load"].to_pylist() == [0.2]


def test_data_without_sweep_json_is_refused(tiny_config: Path, tmp_path: Path):
    out = tmp_path / "odd"
    (out / "summary").mkdir(parents=True)
    with pytest.raises(flitsim.FlitsimError, match="sweep.json"):
        flitsim.sweep(tiny_config, out=out)
    (out / "notes.txt").write_text("keep me")
    flitsim.sweep(tiny_config, out=out, overwrite=True)
    assert (out / "notes.txt").read_text() == "keep me"


def test_bad_vary_value_fails_before_any_run(tiny_config: Path, tmp_path: Path, count_runs):
    counter = count_runs()
    with pytest.raises(flitsim.FlitsimError, match="traffic.load") as caught:
        flitsim.sweep(
            tiny_config, vary={"traffic.load": [0.1, 0.2, "high"]}, out=tmp_path / "bad"
        )
    assert "invalid type" in str(caught.value)
    with pytest.raises(flitsim.FlitsimError, match="traffic.load"):
        flitsim.sweep(tiny_config, vary={"traffic.load": [0.1, -1.0]})
    with pytest.raises(flitsim.FlitsimError, match="did you mean `load`"):
        flitsim.sweep(tiny_config, vary={"traffic.lod": [0.1]})
    assert counter.calls == []
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vary": {"traffic.load": []}}, "no values"),
        ({"vary": {"traffic.load": 0.3}}, "list of values"),
        ({"vary": {"traffic.load": "0.1,0.2"}}, "list of values"),
        ({"vary": {"traffic.load": [0.1, 0.1]}}, "twice"),
        ({"vary": {"seed": [1, 2]}}, "seeds="),
        ({"vary": {"": [1]}}, "non-empty"),
        ({"seeds": 0}, "at least 1"),
        ({"seeds": []}, "empty"),
        ({"seeds": [1, 1]}, "twice"),
        ({"seeds": [-1]}, "0..2"),
        ({"jobs": 0}, "jobs"),
        ({"backend": "mpi"}, "backend"),
        ({"scheduler": "tcp://localhost:8786"}, "scheduler"),
    ],
)
def test_bad_sweep_arguments(tiny_config: Path, kwargs, message):
    with pytest.raises(flitsim.FlitsimError, match=message):
        flitsim.sweep(tiny_config, **kwargs)


def test_unknown_engine_fails_before_any_run(tiny_config: Path, tmp_path: Path):
    # Engine names are checked when the configuration is resolved, so a bad value in `vary`
    # stops the sweep before anything runs or is written.
    with pytest.raises(flitsim.FlitsimError, match="routing.engine.*nope"):
        flitsim.sweep(tiny_config, vary={"routing.engine": ["dor", "nope"]}, jobs=1,
                      out=tmp_path / "e")
    assert not list((tmp_path / "e").rglob("*.parquet"))


# -- --vary parsing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, key, values",
    [
        ("traffic.load=0.1,0.2,0.4", "traffic.load", [0.1, 0.2, 0.4]),
        ("traffic.load=0.1:0.3:0.1", "traffic.load", [0.1, 0.2, 0.3]),
        ("traffic.load=0.05:0.4:0.05", "traffic.load",
         [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]),
        ("routing.vls=2:8:2", "routing.vls", [2, 4, 6, 8]),
        ("routing.vls=2:7:2", "routing.vls", [2, 4, 6]),
        ("x=1:2:0.5", "x", [1.0, 1.5, 2.0]),
        ("x=-1:1:1", "x", [-1, 0, 1]),
        ("x=5:5:1", "x", [5]),
        ("routing.engine=dor,minhop", "routing.engine", ["dor", "minhop"]),
        ('routing.engine="dor", "up,down"', "routing.engine", ["dor", "up,down"]),
        ("x='a:b'", "x", ["a:b"]),
        ("routing.verify=true,false", "routing.verify", [True, False]),
        ("topology.sides=[4,4],[8, 8]", "topology.sides", [[4, 4], [8, 8]]),
        ("topology.sides=[4,4]", "topology.sides", [[4, 4]]),
        ("run.measure=1_000,2e3", "run.measure", [1000, 2000.0]),
        (" traffic.load = 0.5 ", "traffic.load", [0.5]),
    ],
)
def test_parse_vary(text, key, values):
    assert parse_vary(text) == (key, values)


BAD_VARY = [
    ("traffic.load", "no '='"),
    ("=0.1,0.2", "empty key"),
    ("traffic.load=", "no values"),
    ("traffic.load=0.1,,0.2", "empty value"),
    ("traffic.load=0.1,", "empty value"),
    ("traffic.load=0.5:0.1:0.1", "greater than stop"),
    ("traffic.load=0.1:0.5:0", "step must be positive"),
    ("traffic.load=0.1:0.5:-0.1", "step must be positive"),
    ("traffic.load=a:b:c", "non-numeric"),
    ("traffic.load=0.1:0.5", "start:stop:step"),
    ("traffic.load=0.1:0.5:0.1:2", "start:stop:step"),
    ('routing.engine="dor', "unclosed quote"),
    ("topology.sides=[4,4", "unclosed"),
    ("topology.sides=4,4]", "unbalanced"),
]


@pytest.mark.parametrize("text, message", BAD_VARY)
def test_parse_vary_rejects(text, message):
    with pytest.raises(flitsim.FlitsimError, match=message):
        parse_vary(text)


# -- the command line -------------------------------------------------------------------


def test_cli_sweep_prints_a_table_and_resumes(runner, tiny_config: Path, tmp_path: Path):
    out = tmp_path / "cli"
    args = ["sweep", str(tiny_config), "--vary", "traffic.load=0.1:0.3:0.2",
            "--vary", "routing.vls=2,4", "--seeds", "2", "--jobs", "2", "--out", str(out)]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].split() == ["traffic.load", "routing.vls", "seeds", "accepted",
                                "lat", "mean", "saturated"]
    assert [line.split()[:3] for line in lines[1:5]] == [
        ["0.1", "2", "2"], ["0.1", "4", "2"], ["0.3", "2", "2"], ["0.3", "4", "2"]
    ]
    assert all(line.split()[-1] == "0/2" for line in lines[1:5])
    assert str(out) in lines[-1]
    table = flitsim.load_sweep(out).summary
    assert table.num_rows == 8
    api = flitsim.sweep(tiny_config, vary={"traffic.load": [0.1, 0.3], "routing.vls": [2, 4]},
                        seeds=2)
    assert deterministic(table).equals(deterministic(api))

    again = runner.invoke(main, args, catch_exceptions=False)
    assert again.exit_code == 0 and again.stdout == result.stdout


def test_cli_sweep_json(runner, tiny_config: Path, tmp_path: Path):
    result = runner.invoke(
        main,
        ["sweep", str(tiny_config), "--vary", "traffic.load=0.1,0.2", "--set",
         "run.measure=500", "--out", str(tmp_path / "j"), "--json", "--no-progress"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["traffic.load"] for r in rows] == [0.1, 0.2]
    assert rows[0]["seed"] == 1 and "accepted_load" in rows[0]
    assert json.loads((tmp_path / "j" / "sweep.json").read_text())["overrides"] == [
        "run.measure=500"
    ]
    assert result.stderr == ""


def test_cli_sweep_progress_bar(runner, tiny_config: Path, tmp_path: Path):
    result = runner.invoke(
        main,
        ["sweep", str(tiny_config), "--seeds", "3", "--out", str(tmp_path / "p"),
         "--progress"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert "sweep" in result.stderr


def test_cli_sweep_dask_backend(runner, tiny_config: Path, tmp_path: Path):
    result = runner.invoke(
        main,
        ["sweep", str(tiny_config), "--vary", "traffic.load=0.1,0.2", "--backend", "dask",
         "--jobs", "2", "--out", str(tmp_path / "dask"), "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)) == 2


def test_cli_sweep_refuses_another_sweep_then_overwrites(
    runner, tiny_config: Path, tmp_path: Path
):
    out = str(tmp_path / "o")
    base = ["sweep", str(tiny_config), "--out", out]
    assert runner.invoke(main, base + ["--vary", "traffic.load=0.1"]).exit_code == 0
    refused = runner.invoke(main, base + ["--vary", "traffic.load=0.2"])
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: ") and "--overwrite" in refused.stderr
    replaced = runner.invoke(main, base + ["--vary", "traffic.load=0.2", "--overwrite"])
    assert replaced.exit_code == 0, replaced.stderr
    assert flitsim.load_sweep(out).vary == {"traffic.load": [0.2]}


def test_cli_sweep_interrupted(runner, tiny_config: Path, tmp_path: Path, count_runs):
    out = tmp_path / "ctrl-c"
    args = ["sweep", str(tiny_config), "--vary", "traffic.load=0.1,0.2", "--seeds", "2",
            "--jobs", "1", "--out", str(out)]
    count_runs(interrupt_on=2)
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 130
    assert ("interrupted: 1 of 4 points finished; rerun the same command to resume"
            in result.stderr)
    counter = count_runs()
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert len(counter.calls) == 3


def test_cli_sweep_needs_out(runner, tiny_config: Path):
    result = runner.invoke(main, ["sweep", str(tiny_config)])
    assert result.exit_code == 2
    assert "--out" in result.stderr


def test_cli_sweep_subprocess(tiny_config: Path, tmp_path: Path):
    out = tmp_path / "sub"
    proc = subprocess.run(
        [console_script(), "sweep", str(tiny_config), "--vary", "traffic.load=0.1,0.3",
         "--seeds", "2", "--jobs", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "accepted" in proc.stdout and str(out) in proc.stdout
    assert proc.stderr == ""  # no progress bar: stderr is not a terminal
    loaded = flitsim.load_sweep(out)
    assert loaded.complete and loaded.summary.num_rows == 4


def test_cli_schema_is_json():
    runner = CliRunner()
    result = runner.invoke(main, ["schema"], catch_exceptions=False)
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["title"] == "ExperimentConfig"
    assert "traffic" in schema["properties"]


def test_cli_version_lists_python_and_pyarrow():
    result = CliRunner().invoke(main, ["version"], catch_exceptions=False)
    lines = result.output.splitlines()
    assert lines[0].startswith(f"flitsim {flitsim.__version__}")
    assert lines[1].startswith("python ") and lines[2] == f"pyarrow {pa.__version__}"
