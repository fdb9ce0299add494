"""The on-disk side of a sweep: the grid of points, the dataset's layout (``sweep.json`` and
``{summary,per_sl,histogram}/point-<id>/seed-<s>.parquet``), writing a run's tables
atomically, checking the files of finished runs on resume, and reading the dataset back.
:mod:`flitsim.sweep` plans and runs the sweep; this module owns its files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

from . import FlitsimError
from ._format import value_label
from .results import (
    PER_SL_ADDED,
    histogram_rows,
    histogram_schema,
    per_sl_rows,
    per_sl_schema,
    summary_row,
    summary_schema,
)
from .values import format_value

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

SWEEP_FORMAT = "flitsim-sweep"
# 2: point-<id>/seed-<s>.parquet (flitsim 0.2); 1: <key>=<value>/…/seed=<s>.parquet (0.1).
SWEEP_FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
SPEC_FILE = "sweep.json"
TABLES = ("summary", "per_sl", "histogram")

_log = logging.getLogger("flitsim.sweep")

# Columns every file has besides the varied keys; a varied key may not take these names.
_RESERVED = {"seed", "config_hash", "version", "sl", "name", "latency", "count"}


@dataclass(frozen=True)
class _Run:
    """One (point, seed) of the grid."""

    index: int  # position in grid order
    values: Tuple[Any, ...]  # the varied values of its point
    seed: int
    sets: Tuple[str, ...]  # every override, the varied keys last
    config_hash: str
    labels: Tuple[str, ...]  # the values as (version 1) directory labels


class _Grid:
    """The varied keys, their values, and how they appear in columns and directory names."""

    def __init__(self, vary: Mapping[str, Sequence[Any]]) -> None:
        self.keys: List[str] = list(vary)
        self.values: List[List[Any]] = [list(v) for v in vary.values()]
        self.kinds = [_column_kind(v) for v in self.values]
        self.labels: List[List[str]] = [[_dir_label(v) for v in vs] for vs in self.values]

    def check_labels(self) -> None:
        """Refuse values that would share a version-1 directory name (``a/b`` and ``a_b``)."""
        for key, values, labels in zip(self.keys, self.values, self.labels):
            for i, label in enumerate(labels):
                j = labels.index(label)
                if j != i:
                    raise FlitsimError(
                        f"vary {key}: values {values[j]!r} and {values[i]!r} would share the "
                        f"directory name {key}={label} of this version-1 dataset; write the "
                        "sweep to a new directory"
                    )

    def points(self) -> Iterator[Tuple[Tuple[Any, ...], Tuple[str, ...]]]:
        """(values, labels) of every point, the first key varying slowest."""
        idx = itertools.product(*(range(len(v)) for v in self.values))
        for combo in idx:
            yield (
                tuple(self.values[k][i] for k, i in enumerate(combo)),
                tuple(self.labels[k][i] for k, i in enumerate(combo)),
            )

    def fields(self) -> List["pa.Field"]:
        import pyarrow as pa

        types = {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64()}
        return [
            pa.field(key, types.get(kind, pa.string()))
            for key, kind in zip(self.keys, self.kinds)
        ]

    def cells(self, values: Sequence[Any]) -> Dict[str, Any]:
        cells = {}
        for key, kind, value in zip(self.keys, self.kinds, values):
            if kind == "float64":
                value = float(value)
            elif kind == "label":
                value = value_label(value)
            cells[key] = value
        return cells

    def describe(self, values: Sequence[Any]) -> str:
        return ", ".join(f"{k}={format_value(v)}" for k, v in zip(self.keys, values))



# ---------------------------------------------------------------------------------------
# The dataset on disk


def _store(
    run: _Run, summary_json: str, grid: _Grid, out: Optional[Path], relpath: Optional[str]
) -> "pa.Table":
    """Build the three tables of a finished run, write them under ``out`` (summary last),
    and return the summary table."""
    import pyarrow as pa

    summary = json.loads(summary_json)
    prefix_fields = _prefix_fields(grid)
    prefix = grid.cells(run.values)
    prefix.update(
        seed=run.seed,
        config_hash=str(summary.get("config_hash")),
        version=str(summary.get("version")),
    )
    summary_table = pa.Table.from_pylist(
        [{**prefix, **summary_row(summary)}], schema=summary_schema(prefix_fields, summary)
    )
    if out is None or relpath is None:
        return summary_table
    per_sl = pa.Table.from_pylist(
        [{**prefix, **row} for row in per_sl_rows(summary)], schema=per_sl_schema(prefix_fields)
    )
    histogram = pa.Table.from_pylist(
        [{**prefix, **row} for row in histogram_rows(summary)],
        schema=histogram_schema(prefix_fields),
    )
    summary_path = out / "summary" / relpath
    if summary_path.exists():  # a stale run being redone: not complete until rewritten
        summary_path.unlink()
    _write_atomic(histogram, out / "histogram" / relpath)
    _write_atomic(per_sl, out / "per_sl" / relpath)
    _write_atomic(summary_table, summary_path)
    return summary_table


def _write_atomic(table: "pa.Table", path: Path) -> None:
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    # A leading dot keeps a half-written file out of pyarrow.dataset's file discovery; the
    # process and thread ids keep two writers of the same file from sharing a temporary.
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _resume(
    out: Path,
    runs: Sequence[_Run],
    relpaths: Mapping[int, str],
    grid: _Grid,
    done: Dict[int, "pa.Table"],
    log: Optional[Callable[[str], None]],
) -> None:
    """Add the sound finished runs stored in ``out`` to ``done``; say what was skipped and
    which damaged or stale runs will run again."""
    damaged: List[str] = []
    stale = 0
    for run in runs:
        status, table, problem = _stored_run(out, grid, relpaths[run.index], run.config_hash)
        if table is not None:
            done[run.index] = table
        elif status == "damaged":
            damaged.append(problem)
        elif status == "stale":
            stale += 1
    say = log if log is not None else _log.info
    warn = log if log is not None else _log.warning
    if done:
        say(f"resuming {out}: {len(done)} of {len(runs)} runs already finished, skipped")
    if damaged:
        shown = "; ".join(damaged[:5])
        if len(damaged) > 5:
            shown += f"; and {len(damaged) - 5} more"
        warn(f"rerunning {_plural(len(damaged), 'damaged run')}: {shown}")
    if stale:
        warn(f"rerunning {_plural(stale, 'run')} stored with another configuration hash")


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _stored_run(
    out: Path, grid: _Grid, relpath: str, config_hash: str
) -> Tuple[str, Optional["pa.Table"], str]:
    """What ``out`` holds of one run: ``("done", summary, "")``; ``("todo", None, "")``
    (never finished); ``("stale", None, "")`` (another configuration); or ``("damaged",
    None, "<file>: <problem>")`` (finished, but one of its files cannot be used)."""
    summary_path = out / "summary" / relpath
    if not summary_path.is_file():
        return "todo", None, ""
    tables: Dict[str, "pa.Table"] = {}
    for name in TABLES:
        path = out / name / relpath
        table, problem = _read_checked(path, name, grid)
        if table is None:
            return "damaged", None, f"{path}: {problem}"
        hashes = set(table.column("config_hash").to_pylist())
        if name == "summary" and hashes != {config_hash}:
            return "stale", None, ""
        if hashes - {config_hash}:
            return "damaged", None, f"{path}: written by another configuration"
        tables[name] = table
    summary = tables["summary"].to_pylist()[0]
    measured = summary.get("latency_mean") is not None and not summary.get("deadlock")
    if measured and tables["histogram"].num_rows == 0:
        return "damaged", None, f"{out / 'histogram' / relpath}: no rows"
    return "done", tables["summary"], ""


def _read_checked(
    path: Path, name: str, grid: _Grid
) -> Tuple[Optional["pa.Table"], str]:
    """``(table, "")`` when ``path`` is a readable Parquet file of table ``name`` with the
    columns and types it must have (one row for a summary, at least one for per_sl), else
    ``(None, problem)``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        return None, "missing"
    try:
        table = pq.ParquetFile(path).read()
    except (OSError, ValueError, pa.ArrowException) as e:
        return None, f"not a readable Parquet file: {_first_line(e)}"
    for field in _expected_fields(name, grid):
        if field.name not in table.schema.names:
            return None, f"no column {field.name}"
        actual = table.schema.field(field.name).type
        if actual != field.type:
            return None, f"column {field.name} is {actual}, not {field.type}"
    if name == "summary" and table.num_rows != 1:
        return None, f"{table.num_rows} rows instead of 1"
    if name == "per_sl" and table.num_rows == 0:
        return None, "no rows"
    return table, ""


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def _expected_fields(name: str, grid: _Grid) -> List["pa.Field"]:
    """The columns every file of table ``name`` has (the summary's per-SL columns vary)."""
    prefix = _prefix_fields(grid)
    if name == "summary":
        return list(summary_schema(prefix, {}))
    if name == "per_sl":
        return [f for f in per_sl_schema(prefix) if f.name not in PER_SL_ADDED]
    return list(histogram_schema(prefix))


def _prefix_fields(grid: _Grid) -> List["pa.Field"]:
    import pyarrow as pa

    return grid.fields() + [
        pa.field("seed", pa.int64()),
        pa.field("config_hash", pa.string()),
        pa.field("version", pa.string()),
    ]


def _prepare_out(out: Path, spec: Dict[str, Any], overwrite: bool) -> int:
    """Check that ``out`` is empty or holds this same sweep; write ``sweep.json``. Returns
    the layout version to write: that of the sweep found there, else the current one."""
    if out.exists() and not out.is_dir():
        raise FlitsimError(f"sweep output {out} exists and is not a directory")
    old = _read_spec(out, strict=False) if out.is_dir() else None
    has_data = out.is_dir() and any((out / name).exists() for name in TABLES)
    if old is not None or has_data:
        differs = _differences(old, spec) if old is not None else [f"no {SPEC_FILE}"]
        if overwrite:
            for name in TABLES:
                shutil.rmtree(out / name, ignore_errors=True)
            (out / SPEC_FILE).unlink(missing_ok=True)
            old = None
        elif differs:
            raise FlitsimError(
                f"{out} already holds a different sweep ({'; '.join(differs)}); rerun with "
                "--overwrite (overwrite=True) to replace it, or choose another directory"
            )
    version = old["version"] if old is not None else SWEEP_FORMAT_VERSION
    spec["version"] = version
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{SPEC_FILE}.tmp"
    tmp.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / SPEC_FILE)
    return int(version)


def _differences(old: Dict[str, Any], new: Dict[str, Any]) -> List[str]:
    if old.get("format") != SWEEP_FORMAT:
        return [f"{SPEC_FILE} is not a flitsim sweep description"]
    if old.get("version") not in READ_VERSIONS:
        return [f"{SPEC_FILE} has format version {old.get('version')}, unknown to this flitsim"]
    diffs = []
    if old.get("config") != new["config"]:
        diffs.append("the config differs")
    old_vary = old.get("vary")
    if not isinstance(old_vary, dict) or list(old_vary.items()) != list(new["vary"].items()):
        diffs.append(f"vary was {json.dumps(old_vary)}")
    if old.get("seeds") != new["seeds"]:
        diffs.append(f"seeds were {old.get('seeds')}")
    if old.get("overrides") != new["overrides"]:
        diffs.append(f"overrides were {old.get('overrides')}")
    return diffs


def _read_spec(out: Path, strict: bool = True) -> Optional[Dict[str, Any]]:
    path = out / SPEC_FILE
    if not path.is_file():
        return None
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        if not strict:
            return {"format": None}
        raise FlitsimError(f"{path}: cannot read the sweep description ({e})") from None
    if not isinstance(spec, dict) or spec.get("format") != SWEEP_FORMAT:
        if not strict:
            return {"format": None}
        raise FlitsimError(f"{path}: not a flitsim sweep description")
    if strict and spec.get("version") not in READ_VERSIONS:
        raise FlitsimError(
            f"{path}: sweep format version {spec.get('version')} is not supported "
            f"(this flitsim reads versions {', '.join(map(str, READ_VERSIONS))})"
        )
    if strict:
        for key, kind in (("vary", dict), ("seeds", list)):
            if not isinstance(spec.get(key), kind):
                raise FlitsimError(f"{path}: damaged sweep description (no valid {key!r})")
    return spec


def point_id(vary: Mapping[str, Any]) -> str:
    """The name of a point's directory in a sweep dataset: ``point-`` and 16 hex digits of
    the SHA-256 of the point's varied values as canonical JSON (keys sorted), so equal points
    share it whatever the order of ``vary`` and values of different types (``1``, ``1.0``,
    ``true``, ``"1"``) do not.

    >>> point_id({"traffic.load": 0.5, "routing.vls": 2})
    'point-c0aa42db0277d13b'
    >>> point_id({"routing.vls": 2, "traffic.load": 0.5}) == _
    True
    """
    canonical = json.dumps(dict(vary), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "point-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _relpath(
    version: int, keys: Sequence[str], values: Sequence[Any], labels: Sequence[str], seed: int
) -> str:
    """A run's file below ``summary/`` (``per_sl/``, ``histogram/``)."""
    if version == 1:
        parts = [f"{_safe(k)}={label}" for k, label in zip(keys, labels)]
        return "/".join(parts + [f"seed={seed}.parquet"])
    return f"{point_id(dict(zip(keys, values)))}/seed-{seed}.parquet"


def _concat(tables: List["pa.Table"]) -> "pa.Table":
    import pyarrow as pa

    if len(tables) == 1:
        return tables[0]
    try:
        return pa.concat_tables(tables, promote_options="default")
    except TypeError:  # pyarrow < 14
        return pa.concat_tables(tables, promote=True)


def _empty_table(name: str, grid: _Grid) -> "pa.Table":
    prefix = _prefix_fields(grid)
    schema = {
        "summary": lambda: summary_schema(prefix, {}),
        "per_sl": lambda: per_sl_schema(prefix),
        "histogram": lambda: histogram_schema(prefix),
    }[name]()
    return schema.empty_table()


# ---------------------------------------------------------------------------------------
# Values: column types and directory labels


def _column_kind(values: Sequence[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    if all(isinstance(v, str) for v in values):
        return "string"
    return "label"  # lists, tables or a mixture: stored as their directory label


def _dir_label(value: Any) -> str:
    return _safe(value_label(value))


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def _safe(text: str) -> str:
    """Text usable as (part of) a file name on any common file system."""
    safe = _UNSAFE.sub("_", text) or "_"
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if len(safe) > 64:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
        safe = f"{safe[:50]}-{digest}"
    return safe
