"""The sweep dataset on disk: read by pandas, pyarrow, polars and DuckDB with the types of its
columns; datasets of flitsim 0.1 still read and resume; damaged files are named, not crashed
on, and a resumed sweep reruns their runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import flitsim
from flitsim._sweep_store import _dir_label
from flitsim.sweep import point_id
from helpers import TINY_CONFIG, assert_user_error, cli_runner, invoke

V01_DATASET = Path(__file__).parent / "data" / "sweep-v0.1"
SHORT = ["run.warmup=100", "run.measure=300"]
TYPES = {"traffic.load": pa.float64(), "switch.vl_buffer_flits": pa.int64(),
         "routing.tables": pa.string(), "seed": pa.int64()}
KEYS = list(TYPES)


@pytest.fixture(scope="module")
def typed_sweep(tmp_path_factory) -> Tuple[Path, List[Tuple[Any, ...]]]:
    """A sweep varying a float, an int and a string holding `/` and a blank (a directory of
    routing tables), with its expected (load, buffer, tables, seed) rows."""
    root = tmp_path_factory.mktemp("typed")
    tables = []
    for engine, sub in (("dor", "a/dor"), ("minhop", "b/min hop")):
        path = root / "tables" / sub
        result = invoke(cli_runner(), "route", "torus:4x4", "--engine", engine,
                        "--max-vls", 2, "--out", path)
        assert result.exit_code == 0, result.stderr
        tables.append(str(path))
    vary = {"traffic.load": [0.1, 0.25], "switch.vl_buffer_flits": [16, 32],
            "routing.tables": tables}
    out = root / "out"
    flitsim.sweep(TINY_CONFIG, vary=vary, seeds=[1, 2], jobs=2, out=out, sets=SHORT)
    expected = [(load, buf, t, seed) for load in vary["traffic.load"]
                for buf in vary["switch.vl_buffer_flits"] for t in tables for seed in (1, 2)]
    return out, expected


def _rows(records: List[Dict[str, Any]]) -> List[Tuple[Any, ...]]:
    return sorted(tuple(r[k] for k in KEYS) for r in records)


def test_the_layout_has_no_hive_directories(typed_sweep):
    out, expected = typed_sweep
    for name in ("summary", "per_sl", "histogram"):
        files = [p.relative_to(out / name) for p in (out / name).rglob("*.parquet")]
        assert len(files) == len(expected)
        assert all(len(f.parts) == 2 and f.parts[0].startswith("point-") for f in files)
        assert not any("=" in str(f) for f in files)
    table = flitsim.load_sweep(out).summary
    assert [tuple(r[k] for k in KEYS) for r in table.to_pylist()] == expected
    for key, typ in TYPES.items():
        assert table.schema.field(key).type == typ


@pytest.mark.parametrize("partitioning", [None, "hive"])
def test_pyarrow_dataset_reads_types_and_values(typed_sweep, partitioning):
    out, expected = typed_sweep
    for name in ("summary", "per_sl", "histogram"):
        table = ds.dataset(out / name, format="parquet", partitioning=partitioning).to_table()
        for key, typ in TYPES.items():
            assert table.schema.field(key).type == typ, (name, key)
        if name == "summary":
            assert _rows(table.to_pylist()) == sorted(expected)
    assert _rows(pq.read_table(out / "summary").to_pylist()) == sorted(expected)


def test_pandas_reads_types_and_values(typed_sweep):
    pd = pytest.importorskip("pandas")
    out, expected = typed_sweep
    df = pd.read_parquet(out / "summary")
    assert str(df["traffic.load"].dtype) == "float64"
    assert str(df["switch.vl_buffer_flits"].dtype) == "int64"
    assert str(df["seed"].dtype) == "int64"
    assert _rows(df.to_dict("records")) == sorted(expected)
    for name in ("per_sl", "histogram"):
        detail = pd.read_parquet(out / name)
        assert str(detail["traffic.load"].dtype) == "float64"
        assert set(detail["routing.tables"]) == {e[2] for e in expected}


def test_polars_reads_types_and_values(typed_sweep):
    pl = pytest.importorskip("polars")
    out, expected = typed_sweep
    for source in (str(out / "summary"), str(out / "summary" / "**" / "*.parquet")):
        df = pl.read_parquet(source)
        assert df.schema["traffic.load"] == pl.Float64
        assert df.schema["switch.vl_buffer_flits"] == pl.Int64
        assert df.schema["routing.tables"] == pl.String
        assert _rows(df.to_dicts()) == sorted(expected)
    assert pl.read_parquet(str(out / "histogram")).schema["traffic.load"] == pl.Float64


@pytest.mark.parametrize("hive", ["", ", hive_partitioning = true"])
def test_duckdb_reads_types_and_values(typed_sweep, hive):
    duckdb = pytest.importorskip("duckdb")
    out, expected = typed_sweep
    con = duckdb.connect()
    columns = ", ".join(f'"{k}"' for k in KEYS)
    for name in ("summary", "per_sl", "histogram"):
        glob = (out / name / "**" / "*.parquet").as_posix()
        rel = con.sql(f"SELECT {columns} FROM read_parquet('{glob}'{hive})")
        assert [str(t) for t in rel.types] == ["DOUBLE", "BIGINT", "VARCHAR", "BIGINT"]
        if name == "summary":
            assert sorted(rel.fetchall()) == sorted(expected)


def test_a_sweeps_per_sl_table_has_message_latency_and_jitter(typed_sweep):
    out, _ = typed_sweep
    per_sl = flitsim.load_sweep(out).per_sl
    for name in ("message_latency_mean", "message_latency_p99", "jitter_std"):
        assert per_sl.schema.field(name).type == pa.float64()
        assert per_sl[name].null_count == 0
    # A message of one packet: its latency is the packet's (the sweep's messages fit one MTU).
    rows = per_sl.to_pylist()
    assert all(r["message_latency_mean"] == r["latency_mean"] for r in rows)


# -- datasets of flitsim 0.1 -------------------------------------------------------------


def test_a_version_1_dataset_still_loads():
    sweep = flitsim.load_sweep(V01_DATASET)
    assert sweep.version == 1 and sweep.complete
    assert sweep.vary == {"traffic.load": [0.1, 0.3], "traffic.pattern": ["uniform", "transpose"]}
    summary = sweep.summary
    assert summary.num_rows == 8
    assert summary.schema.field("traffic.load").type == pa.float64()
    assert summary.schema.field("traffic.pattern").type == pa.string()
    assert [(r["traffic.load"], r["traffic.pattern"], r["seed"]) for r in summary.to_pylist()] == [
        (load, pattern, seed) for load in (0.1, 0.3) for pattern in ("uniform", "transpose")
        for seed in (1, 2)
    ]
    assert sweep.per_sl.num_rows == 8 and sweep.histogram.num_rows > 8
    # Written before message latency existed: complete without those columns.
    assert "message_latency_mean" not in sweep.per_sl.column_names


def test_a_version_1_dataset_plots_and_reports(runner, tmp_path: Path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "v1"
    shutil.copytree(V01_DATASET, out)
    assert invoke(runner, "plot", out, "--format", "png").exit_code == 0
    result = invoke(runner, "report", out)
    assert result.exit_code == 0, result.stderr
    assert (out / "report.html").is_file()


def test_resuming_the_0_1_dataset_keeps_its_layout(tmp_path: Path):
    out = tmp_path / "v1"
    shutil.copytree(V01_DATASET, out)
    spec = json.loads((out / "sweep.json").read_text())
    victim = out / "summary" / "traffic.load=0.3" / "traffic.pattern=transpose" / "seed=2.parquet"
    victim.unlink()
    flitsim.sweep(spec["config"], vary=spec["vary"], seeds=spec["seeds"], jobs=2, out=out)
    assert victim.is_file()
    assert not list(out.rglob("point-*"))
    assert json.loads((out / "sweep.json").read_text())["version"] == 1
    assert flitsim.load_sweep(out).complete


def _to_version_1(out: Path) -> None:
    """Rewrite a dataset into the layout of flitsim 0.1, as 0.1 would have written it."""
    spec = json.loads((out / "sweep.json").read_text())
    keys = list(spec["vary"])
    for name in ("summary", "per_sl", "histogram"):
        for path in list((out / name).rglob("*.parquet")):
            row = pq.read_table(path).slice(0, 1).to_pylist()[0]
            parts = [f"{k}={_dir_label(row[k])}" for k in keys]
            target = out / name / Path(*parts) / f"seed={row['seed']}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
            path.parent.rmdir()
    spec["version"] = 1
    (out / "sweep.json").write_text(json.dumps(spec, indent=2) + "\n")


def test_an_interrupted_version_1_sweep_resumes_in_its_layout(
    tiny_config: Path, tmp_path: Path, count_runs
):
    out = tmp_path / "old"
    vary = {"traffic.load": [0.1, 0.3], "traffic.pattern": ["uniform", "transpose"]}
    first = flitsim.sweep(tiny_config, vary=vary, out=out, sets=SHORT)
    _to_version_1(out)
    assert flitsim.load_sweep(out).summary.equals(first)
    victim = out / "summary" / "traffic.load=0.3" / "traffic.pattern=uniform" / "seed=1.parquet"
    victim.unlink()
    counter = count_runs()
    again = flitsim.sweep(tiny_config, vary=vary, out=out, sets=SHORT)
    assert len(counter.calls) == 1
    assert victim.is_file() and not list(out.rglob("point-*"))
    assert again.drop(["wall_seconds"]).equals(first.drop(["wall_seconds"]))


# -- damaged files -------------------------------------------------------------------------

LOADS = [0.1, 0.2, 0.3]


@pytest.fixture(scope="module")
def clean_sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "out"
    flitsim.sweep(TINY_CONFIG, vary={"traffic.load": LOADS}, jobs=2, out=out, sets=SHORT)
    return out


def _damage(out: Path, table: str, load: float, how: str) -> Path:
    path = out / table / point_id({"traffic.load": load}) / "seed-1.parquet"
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"this is not a parquet file\n" * 4)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "no rows":
        good = pq.read_table(path)
        pq.write_table(good.slice(0, 0), path)
    elif how == "missing column":
        good = pq.read_table(path)
        pq.write_table(good.drop([good.column_names[-1] if table != "summary" else "seed"]),
                       path)
    return path


DAMAGES = [
    ("per_sl", "garbage", "not a readable Parquet file"),
    ("histogram", "empty", "not a readable Parquet file"),
    ("summary", "truncated", "not a readable Parquet file"),
    ("summary", "missing column", "no column seed"),
    ("per_sl", "no rows", "no rows"),
    ("histogram", "no rows", "no rows"),
]


@pytest.fixture
def damaged(clean_sweep: Path, tmp_path: Path, request):
    table, how, problem = request.param
    out = tmp_path / "out"
    shutil.copytree(clean_sweep, out)
    return out, _damage(out, table, 0.2, how), problem, table


@pytest.mark.parametrize("damaged", DAMAGES, indirect=True, ids=lambda d: f"{d[0]}-{d[1]}")
def test_resume_reruns_a_damaged_run_and_says_so(damaged, count_runs):
    out, path, problem, _ = damaged
    messages: List[str] = []
    counter = count_runs()
    table = flitsim.sweep(TINY_CONFIG, vary={"traffic.load": LOADS}, jobs=2, out=out,
                          sets=SHORT, log=messages.append)
    assert [c[0][-1] for c in counter.calls] == ["traffic.load=0.2"]
    assert messages[0] == f"resuming {out}: 2 of 3 runs already finished, skipped"
    assert messages[1].startswith(f"rerunning 1 damaged run: {path}: ")
    assert problem in messages[1]
    assert table.num_rows == 3
    loaded = flitsim.load_sweep(out)
    assert loaded.summary.num_rows == 3 and loaded.per_sl.num_rows == 3


@pytest.mark.parametrize(
    "damaged", [d for d in DAMAGES if d[2] != "no rows" or d[0] == "per_sl"], indirect=True,
    ids=lambda d: f"{d[0]}-{d[1]}",
)
def test_loading_a_damaged_file_names_it(damaged, runner):
    out, path, problem, table = damaged
    sweep = flitsim.load_sweep(out)
    with pytest.raises(flitsim.FlitsimError) as caught:
        getattr(sweep, table)
    assert str(caught.value).startswith(f"{path}: damaged result file ({problem}")
    assert "rerun the sweep" in str(caught.value)
    pytest.importorskip("matplotlib")
    for command in ("plot", "report"):
        assert_user_error(invoke(runner, command, out), str(path), "damaged result file")


def test_cli_sweep_reports_skipped_and_damaged_runs(clean_sweep: Path, tmp_path: Path, runner):
    out = tmp_path / "out"
    shutil.copytree(clean_sweep, out)
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    args = ["sweep", config, "--vary", "traffic.load=0.1,0.2,0.3", "--jobs", 2, "--out", out]
    args += [a for s in SHORT for a in ("--set", s)]
    # The same sweep as clean_sweep, but from a file: the config text is the same.
    spec = json.loads((out / "sweep.json").read_text())
    spec["origin"] = str(config)
    (out / "sweep.json").write_text(json.dumps(spec))
    path = _damage(out, "per_sl", 0.3, "garbage")
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == f"resuming {out}: 2 of 3 runs already finished, skipped"
    assert lines[1].startswith(f"rerunning 1 damaged run: {path}: not a readable Parquet file")
    again = invoke(runner, *args)
    assert again.stderr == f"resuming {out}: 3 of 3 runs already finished, skipped\n"
    assert again.stdout == result.stdout


def test_progress_on_a_pipe_prints_a_line_per_run(tiny_config: Path, tmp_path: Path, runner):
    result = invoke(runner, "sweep", tiny_config, "--vary", "traffic.load=0.1,0.2", "--seeds", 2,
                    "--jobs", 1, "--out", tmp_path / "p", "--progress")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 4
    assert [line.split(":")[0] for line in lines] == [
        "sweep [1/4] traffic.load=0.1, seed 1", "sweep [2/4] traffic.load=0.1, seed 2",
        "sweep [3/4] traffic.load=0.2, seed 1", "sweep [4/4] traffic.load=0.2, seed 2",
    ]
    assert all(" accepted 0." in line and line.endswith(" s") for line in lines)
    assert "\r" not in result.stderr


@pytest.mark.parametrize(
    "change, message",
    [
        ({"version": 9}, "sweep format version 9 is not supported (this flitsim reads versions"),
        ({"vary": None}, "damaged sweep description (no valid 'vary')"),
        ({"seeds": "1"}, "damaged sweep description (no valid 'seeds')"),
    ],
)
def test_a_bad_sweep_description_is_named(clean_sweep: Path, tmp_path: Path, runner, change,
                                          message):
    out = tmp_path / "out"
    shutil.copytree(clean_sweep, out)
    spec = json.loads((out / "sweep.json").read_text())
    (out / "sweep.json").write_text(json.dumps({**spec, **change}))
    with pytest.raises(flitsim.FlitsimError, match="sweep.json: "):
        flitsim.load_sweep(out)
    assert_user_error(invoke(runner, "report", out), str(out / "sweep.json"), message)
