"""Parameter sweeps: a grid of experiments run in parallel, stored as a Parquet dataset.

:func:`sweep` runs the cartesian product of the values of some configuration keys, each
with one or more seeds, on a thread pool (the engine releases the GIL) or on a Dask
cluster, and returns one summary row per run. With ``out=DIR`` it also writes every run to
a resumable dataset that :func:`load_sweep` reads back::

    DIR/sweep.json                                   what was swept (see SweepResult.spec)
    DIR/summary/point-<id>/seed-<s>.parquet          one row per run
    DIR/per_sl/point-<id>/seed-<s>.parquet           one row per service level
    DIR/histogram/point-<id>/seed-<s>.parquet        one row per (service level, latency bin)

``<id>`` is 16 hex digits of a hash of the point's varied values (:func:`point_id`), so a
directory name never has to spell a value (a ``/`` in a path, a float's digits) and no
directory looks like a hive partition (``key=value``): pandas, pyarrow (with or without hive
partitioning), polars and DuckDB all read the three tables with the types of their columns.
Every file holds the varied keys as typed columns (named by the dotted key), ``seed``,
``config_hash`` and ``version``. A run's summary file is written last, so its presence means
the run is complete; rerunning the same sweep checks every file of each complete run, skips
the sound ones and reruns the damaged ones.

Datasets written by flitsim 0.1 (``sweep.json`` version 1) put each varied value in a
directory name instead, ``DIR/summary/<k1>=<v1>/.../seed=<s>.parquet``; :func:`load_sweep`
reads them, and resuming one keeps writing that layout.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import (
    ConfigSource,
    FlitsimError,
    __version__,
    _collect_sets,
    _core,
    _read_config,
)
from .traces.cache import experiment_sets
from .values import format_value, parse_vary

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = ["SweepInterrupted", "SweepResult", "load_sweep", "parse_vary", "point_id", "sweep"]

from ._sweep_store import (
    _RESERVED,
    SPEC_FILE,
    SWEEP_FORMAT,
    SWEEP_FORMAT_VERSION,
    _concat,
    _empty_table,
    _Grid,
    _prepare_out,
    _read_checked,
    _read_spec,
    _relpath,
    _resume,
    _Run,
    _store,
    point_id,
)


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C. Finished runs are kept; rerunning the sweep resumes it.

    ``finished`` counts the complete runs (including those found already done), ``total``
    the runs of the whole grid, ``out`` is the output directory (or ``None``).
    """

    def __init__(self, finished: int, total: int, out: Optional[Path]) -> None:
        super().__init__(f"interrupted: {finished} of {total} runs finished")
        self.finished = finished
        self.total = total
        self.out = out


# ---------------------------------------------------------------------------------------
# Public API


def sweep(
    config: ConfigSource,
    vary: Optional[Mapping[str, Iterable[Any]]] = None,
    *,
    seeds: Union[int, Iterable[int]] = 1,
    jobs: Optional[int] = None,
    backend: str = "local",
    scheduler: Any = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    progress: Optional[bool] = None,
    overwrite: bool = False,
    sets: Optional[Iterable[str]] = None,
    log: Optional[Callable[[str], None]] = None,
    **overrides: Any,
) -> "pa.Table":
    """Run every combination of the ``vary`` values with every seed; return the summaries.

    ``config`` is a path, TOML text or a dict, as for :func:`flitsim.run`; ``sets`` and
    keyword ``overrides`` (``traffic__load=0.3``) change it first, for every run.

    * ``vary``: ``{dotted key: [values]}``. The grid is the cartesian product of the
      values, in the order given (the first key varies slowest).
    * ``seeds``: a count ``N`` (seeds ``base … base+N-1``, ``base`` being the config's seed
      after the overrides) or an explicit list of seeds.
    * ``jobs``: runs at once (default: :func:`os.cpu_count`). A run whose ``run.threads``
      is unset takes at most ``cpu_count // jobs`` threads (large fabrics simulate on
      several threads, see ``run.threads``), so the runs share the cores.
    * ``backend``: ``"local"`` (a thread pool) or ``"dask"``: ``scheduler`` is then the
      address of a Dask scheduler or a ``distributed.Client``; ``None`` starts a
      ``LocalCluster`` of ``jobs`` single-threaded worker processes for this sweep (as
      with :mod:`multiprocessing`, a script doing that needs the
      ``if __name__ == "__main__":`` guard).
    * ``out``: directory of the Parquet dataset (see :mod:`flitsim.sweep`). A rerun into the
      same directory skips finished runs, after checking each of their files; a run with a
      damaged file (unreadable, missing columns, empty) is run again. A directory holding a
      different sweep is refused unless ``overwrite=True``, which deletes that dataset
      first.
    * ``progress``: show progress on stderr: a bar when stderr is a terminal, else one line
      per finished run (for batch logs); ``None`` shows the bar when stderr is a terminal
      and nothing otherwise.
    * ``log``: called with each message about a resumed sweep: how many finished runs were
      skipped, which damaged runs are rerun. Default: the ``flitsim.sweep`` logger (damaged
      runs as warnings, which Python prints on stderr when logging is not configured).

    Every run is validated before any starts, so a bad value in ``vary`` raises
    :class:`flitsim.FlitsimError` at once. The result is a :class:`pyarrow.Table`, one row
    per (point, seed) in grid order then seed order; :class:`SweepResult` lists its
    columns. It is the same whatever ``jobs`` and ``backend`` (apart from ``wall_seconds``).
    Ctrl-C stops the sweep, keeps the finished runs and raises :class:`SweepInterrupted`
    (a :class:`KeyboardInterrupt`).

    >>> import flitsim, tempfile
    >>> cfg = {"topology": {"kind": "torus", "sides": [4, 4]},
    ...        "traffic": {"load": 0.1}, "run": {"warmup": 200, "measure": 1000}}
    >>> tmp = tempfile.TemporaryDirectory()
    >>> t = flitsim.sweep(cfg, vary={"traffic.load": [0.1, 0.2]}, seeds=2, jobs=2,
    ...                   out=tmp.name)
    >>> t.num_rows, t.column_names[:4]
    (4, ['traffic.load', 'seed', 'config_hash', 'version'])
    >>> t.select(["traffic.load", "seed"]).to_pylist()[1]
    {'traffic.load': 0.1, 'seed': 2}
    >>> flitsim.load_sweep(tmp.name).summary.equals(t)
    True
    >>> tmp.cleanup()
    """
    text, origin = _read_config(config)
    base_sets = _collect_sets(sets, overrides)
    grid = _Grid(_normalise_vary(vary))
    jobs = _check_jobs(jobs)
    if backend not in ("local", "dask"):
        raise FlitsimError(f"backend must be 'local' or 'dask', not {backend!r}")
    if scheduler is not None and backend != "dask":
        raise FlitsimError("scheduler is only used with backend='dask'")

    base = json.loads(
        _core.resolve_json(text, origin, experiment_sets(text, origin, base_sets), None)
    )
    seed_list = _seed_list(seeds, int(base["seed"]))
    runs = _plan(grid, text, origin, base_sets, seed_list)

    out_dir = Path(out) if out is not None else None
    done: Dict[int, "pa.Table"] = {}
    relpaths: Dict[int, str] = {}
    if out_dir is not None:
        spec = {
            "format": SWEEP_FORMAT,
            "version": SWEEP_FORMAT_VERSION,
            "flitsim_version": __version__,
            "config": text,
            "origin": origin,
            "vary": {k: v for k, v in zip(grid.keys, grid.values)},
            "seeds": seed_list,
            "overrides": list(base_sets),
        }
        spec = json.loads(json.dumps(spec))
        version = _prepare_out(out_dir, spec, overwrite)
        if version == 1:
            grid.check_labels()
        relpaths = {r.index: _relpath(version, grid.keys, r.values, r.labels, r.seed)
                    for r in runs}
        _resume(out_dir, runs, relpaths, grid, done, log)

    todo = [r for r in runs if r.index not in done]
    if todo:
        _execute(todo, len(runs), done, grid, text, origin, out_dir, relpaths, jobs, backend,
                 scheduler, _progress_mode(progress))
    return _concat([done[r.index] for r in runs])


def load_sweep(out: Union[str, "os.PathLike[str]"]) -> "SweepResult":
    """Read the dataset a :func:`sweep` wrote to ``out``.

    Runs whose summary file is missing (an interrupted sweep) are left out of the tables and
    listed in :attr:`SweepResult.missing`. Reads the layout of flitsim 0.1 (``sweep.json``
    version 1) too. The tables are read when first asked for; a damaged file (not Parquet,
    truncated, missing columns) raises :class:`flitsim.FlitsimError` naming it.

    >>> import flitsim, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = flitsim.sweep({"topology": {"kind": "torus", "sides": [4, 4]},
    ...                    "traffic": {"load": 0.1}, "run": {"measure": 500}},
    ...                   vary={"routing.vls": [2, 4]}, seeds=[5], jobs=1, out=tmp.name)
    >>> res = flitsim.load_sweep(tmp.name)
    >>> res.vary, res.summary["routing.vls"].to_pylist(), res.per_sl.num_rows
    ({'routing.vls': [2, 4]}, [2, 4], 2)
    >>> res.complete
    True
    >>> tmp.cleanup()
    """
    out_dir = Path(out)
    spec = _read_spec(out_dir)
    if spec is None:
        raise FlitsimError(f"{out_dir}: no {SPEC_FILE}; not a flitsim sweep directory")
    return SweepResult(out_dir, spec)


class SweepResult:
    """A sweep dataset read back from disk (see :func:`load_sweep`).

    ``summary``, ``per_sl`` and ``histogram`` are :class:`pyarrow.Table`\\ s in grid order
    (the varied keys in the order of ``vary``, the first slowest), then seed.

    Summary columns: the varied keys, ``seed``, ``config_hash``, ``version``,
    ``endpoints``, ``offered_load``, ``accepted_load``, ``saturated``, ``drained``,
    ``deadlock``, ``latency_{mean,p50,p99,max}``, ``network_latency_{mean,p50,p99,max}``,
    ``hops_mean``, ``flits_{generated,delivered,remaining}``, ``cycles_total``,
    ``wall_seconds`` and per service level ``sl.<name>.{offered_load,accepted_load,share,
    latency_mean,latency_p99}``.

    per_sl columns: the varied keys, ``seed``, ``config_hash``, ``version``, ``sl``,
    ``name``, ``offered_load``, ``accepted_load``, ``share``,
    ``latency_{mean,p50,p99,max}``, ``network_latency_mean``, ``network_latency_p99``,
    ``message_latency_mean``, ``message_latency_p99``, ``jitter_std`` (the last three absent
    from datasets written before they existed).

    histogram columns: the varied keys, ``seed``, ``config_hash``, ``version``, ``sl``,
    ``name``, ``latency`` (bin lower bound, cycles), ``count``.
    """

    def __init__(self, out: Path, spec: Dict[str, Any]) -> None:
        self.path = out
        self.spec: Dict[str, Any] = spec
        self.vary: Dict[str, List[Any]] = {k: list(v) for k, v in spec["vary"].items()}
        self.seeds: List[int] = list(spec["seeds"])
        self.version: int = int(spec["version"])
        self._grid = _Grid(self.vary)
        self._cells = [
            (values, seed, _relpath(self.version, self._grid.keys, values, labels, seed))
            for values, labels in self._grid.points()
            for seed in self.seeds
        ]
        self.missing: List[Tuple[Dict[str, Any], int]] = [
            (dict(zip(self._grid.keys, values)), seed)
            for values, seed, rel in self._cells
            if not (out / "summary" / rel).is_file()
        ]
        self._tables: Dict[str, "pa.Table"] = {}

    @property
    def complete(self) -> bool:
        """Whether every run of the grid has its files."""
        return not self.missing

    @property
    def summary(self) -> "pa.Table":
        return self._table("summary")

    @property
    def per_sl(self) -> "pa.Table":
        return self._table("per_sl")

    @property
    def histogram(self) -> "pa.Table":
        return self._table("histogram")

    def __repr__(self) -> str:
        runs = len(self._cells)
        return (
            f"SweepResult({str(self.path)!r}, vary={self.vary!r}, seeds={self.seeds!r}, "
            f"runs={runs - len(self.missing)}/{runs})"
        )

    def _table(self, name: str) -> "pa.Table":
        if name not in self._tables:
            done = [rel for _, _, rel in self._cells if (self.path / "summary" / rel).is_file()]
            tables = []
            for rel in done:
                path = self.path / name / rel
                table, problem = _read_checked(path, name, self._grid)
                if table is None:
                    raise FlitsimError(
                        f"{path}: damaged result file ({problem}); rerun the sweep with the "
                        "same arguments to redo that run"
                    )
                tables.append(table)
            if not tables:
                tables = [_empty_table(name, self._grid)]
            self._tables[name] = _concat(tables)
        return self._tables[name]


def _run_one(
    text: str, origin: str, sets: Sequence[str], seed: int, thread_cap: int = 0
) -> str:
    """Run one experiment and return the engine's JSON (the task Dask workers execute).
    ``thread_cap``: the most threads the run takes when its ``run.threads`` is unset (0:
    leave the process's limit as it is)."""
    if thread_cap:
        _core.set_thread_cap(thread_cap)
    return _core.run_json(text, origin, experiment_sets(text, origin, sets), seed)


def _thread_cap(jobs: int) -> int:
    """Threads per run when ``jobs`` runs share this machine's cores (``run.threads``
    unset): a large fabric's run would otherwise take every core."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


# ---------------------------------------------------------------------------------------
# Planning and validation


def _normalise_vary(vary: Optional[Mapping[str, Iterable[Any]]]) -> Dict[str, List[Any]]:
    if vary is None:
        return {}
    if not isinstance(vary, Mapping):
        raise FlitsimError(f"vary must be a dict of key → list of values, not {vary!r}")
    result: Dict[str, List[Any]] = {}
    for raw_key, raw_values in vary.items():
        if not isinstance(raw_key, str) or not raw_key.strip():
            raise FlitsimError(f"vary keys must be non-empty strings, got {raw_key!r}")
        key = raw_key.strip().replace("__", ".")
        if key == "seed":
            raise FlitsimError("vary: use seeds=… to run several seeds, not vary={'seed': …}")
        if key in _RESERVED:
            raise FlitsimError(f"vary: {key!r} cannot be varied (it names a result column)")
        if key in result:
            raise FlitsimError(f"vary: key {key} given twice")
        if isinstance(raw_values, (str, bytes, Mapping)) or not isinstance(raw_values, Iterable):
            raise FlitsimError(f"vary {key}: expected a list of values, got {raw_values!r}")
        values = [_plain(v) for v in raw_values]
        if not values:
            raise FlitsimError(f"vary {key}: no values")
        for i, v in enumerate(values):
            format_value(v)  # raises FlitsimError for what TOML cannot hold
            if any(w == v and type(w) is type(v) for w in values[:i]):
                raise FlitsimError(f"vary {key}: value {v!r} given twice")
        result[key] = values
    return result


def _plain(value: Any) -> Any:
    """numpy scalars and arrays → Python values; tuples → lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _check_jobs(jobs: Optional[int]) -> int:
    if jobs is None:
        return max(1, os.cpu_count() or 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise FlitsimError(f"jobs must be a positive integer, got {jobs!r}")
    return jobs


def _seed_list(seeds: Union[int, Iterable[int]], base: int) -> List[int]:
    if isinstance(seeds, bool):
        raise FlitsimError(f"seeds must be a count or a list of seeds, got {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise FlitsimError(f"seeds must be at least 1, got {seeds}")
        result = list(range(base, base + seeds))
    else:
        result = [_plain(s) for s in seeds]
        if not result:
            raise FlitsimError("seeds: the list is empty")
    for s in result:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
            raise FlitsimError(f"seeds must be integers in 0..2^64-1, got {s!r}")
    if len(set(result)) != len(result):
        raise FlitsimError(f"seeds: a seed is given twice in {result}")
    return result


def _plan(
    grid: _Grid, text: str, origin: str, base_sets: Sequence[str], seeds: Sequence[int]
) -> List[_Run]:
    """Every run of the grid, validated by the engine (without simulating)."""
    runs: List[_Run] = []
    for values, labels in grid.points():
        sets = tuple(base_sets) + tuple(
            f"{k}={format_value(v)}" for k, v in zip(grid.keys, values)
        )
        for seed in seeds:
            try:
                resolved = json.loads(
                    _core.resolve_json(text, origin, experiment_sets(text, origin, sets), seed)
                )
            except FlitsimError as e:
                raise FlitsimError(f"sweep point {grid.describe(values)}: {e}") from None
            runs.append(
                _Run(
                    index=len(runs),
                    values=values,
                    seed=seed,
                    sets=sets,
                    config_hash=str(resolved["config_hash"]),
                    labels=labels,
                )
            )
    return runs


# ---------------------------------------------------------------------------------------
# Execution


def _execute(
    todo: List[_Run],
    total: int,
    done: Dict[int, "pa.Table"],
    grid: _Grid,
    text: str,
    origin: str,
    out: Optional[Path],
    relpaths: Mapping[int, str],
    jobs: int,
    backend: str,
    scheduler: Any,
    progress: Optional[str],
) -> None:
    """Run ``todo``, writing each finished run (in this thread) and adding it to ``done``.
    ``progress``: ``"bar"``, ``"lines"`` (one line per finished run) or ``None``."""
    import click

    workers = min(jobs, len(todo))
    if backend == "dask":
        results = _dask_results(todo, text, origin, workers, scheduler)
    else:
        results = _local_results(todo, text, origin, workers)
    bar = None
    if progress == "bar":
        bar = click.progressbar(
            length=len(todo), label="sweep", show_eta=True, show_pos=True, file=sys.stderr
        )
        bar.__enter__()
    try:
        for run, future in results:
            try:
                summary_json = future.result()
            except FlitsimError as e:
                raise FlitsimError(
                    f"sweep point {grid.describe(run.values) or '(base)'}, seed {run.seed}: {e}"
                ) from None
            table = _store(run, summary_json, grid, out, relpaths.get(run.index))
            done[run.index] = table
            if bar is not None:
                bar.update(1)
            elif progress == "lines":
                click.echo(_progress_line(run, table, grid, len(done), total), err=True)
    except KeyboardInterrupt as e:
        # Let the runner stop the runs in progress (they end "interrupted" and are not stored;
        # the finished ones are written already, so a resume redoes only the others). When
        # Ctrl-C arrived inside the runner, it has done so and throw() just re-raises.
        try:
            results.throw(KeyboardInterrupt())
        except (KeyboardInterrupt, StopIteration):
            pass
        raise SweepInterrupted(len(done), total, out) from e
    finally:
        results.close()  # cancel what has not started; wait for what is running
        if bar is not None:
            bar.__exit__(None, None, None)


def _local_results(
    todo: List[_Run], text: str, origin: str, jobs: int
) -> Iterator[Tuple[_Run, Any]]:
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="flitsim-sweep")
    cap_before = _core.set_thread_cap(_thread_cap(jobs))
    try:
        futures = {pool.submit(_run_one, text, origin, r.sets, r.seed): r for r in todo}
        for future in as_completed(futures):
            yield futures[future], future
    except KeyboardInterrupt:
        # Ctrl-C while waiting here: stop the runs in progress instead of waiting for them.
        _core.cancel_request()
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            _core.cancel_clear()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _core.set_thread_cap(cap_before)


def _dask_results(
    todo: List[_Run], text: str, origin: str, jobs: int, scheduler: Any
) -> Iterator[Tuple[_Run, Any]]:
    try:
        import logging

        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise FlitsimError(
            "backend='dask' needs dask.distributed: pip install 'flitsim[dask]'"
        ) from None
    cluster = None
    own_client = True
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # No dashboard; the scheduler's bare HTTP server takes any free port instead of
            # warning when 8787 is taken.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
    elif isinstance(scheduler, Client):
        client, own_client = scheduler, False
    else:
        client = Client(scheduler)
    futures: List[Any] = []
    # Runs on a local cluster share this machine's cores; a remote cluster's workers keep
    # their own default.
    cap = _thread_cap(jobs) if cluster is not None else 0
    try:
        by_key: Dict[Any, _Run] = {}
        for run in todo:
            future = client.submit(_run_one, text, origin, list(run.sets), run.seed,
                                   cap, pure=False)
            futures.append(future)
            by_key[future.key] = run
        for future in dask_completed(futures):
            yield by_key[future.key], future
    except KeyboardInterrupt:
        _stop_dask_runs(client, [f for f in futures if not f.done()])
        raise
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()


# Run on Dask workers by _stop_dask_runs: the stopped runs fail "interrupted", which the worker
# would log as "Compute Failed" with a traceback; its log is quiet until the request is cleared.
_WORKER_LOG = "distributed.worker"


def _cancel_request() -> None:

    logging.getLogger(_WORKER_LOG).disabled = True
    _core.cancel_request()


def _cancel_clear() -> None:

    _core.cancel_clear()
    logging.getLogger(_WORKER_LOG).disabled = False


def _stop_dask_runs(client: Any, running: List[Any]) -> None:
    """Ctrl-C: ask the workers' flitsim computations to stop (a cancelled Dask future's task
    would run to its end), give them a moment to return, and withdraw the request so that the
    workers of a shared cluster run later tasks again."""
    from distributed import wait

    if not running:
        return
    try:
        client.run(_cancel_request)
        wait(running, timeout=2)
    except Exception:  # a timeout or a lost worker: the cluster's own shutdown follows
        pass
    finally:
        try:
            client.run(_cancel_clear)
        except Exception:
            pass


def _progress_mode(progress: Optional[bool]) -> Optional[str]:
    """``"bar"`` on a terminal, ``"lines"`` when asked for elsewhere, else ``None``."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if progress is None:
        return "bar" if tty else None
    if not progress:
        return None
    return "bar" if tty else "lines"


def _progress_line(run: _Run, table: "pa.Table", grid: _Grid, finished: int, total: int) -> str:
    """``sweep [3/8] traffic.load=0.3, seed 1: accepted 0.2981, latency 25.4, 0.41 s``."""
    from ._format import fixed

    row = table.to_pylist()[0]
    if row.get("deadlock") and row.get("accepted_load") is None:
        outcome = "deadlock"
    else:
        outcome = (f"accepted {fixed(row.get('accepted_load'), 4)}, "
                   f"latency {fixed(row.get('latency_mean'), 1)}")
        if row.get("deadlock"):
            outcome += ", deadlock"
        elif row.get("saturated"):
            outcome += ", saturated"
    point = grid.describe(run.values) or "(base)"
    return (f"sweep [{finished}/{total}] {point}, seed {run.seed}: {outcome}, "
            f"{fixed(row.get('wall_seconds'), 2)} s")

