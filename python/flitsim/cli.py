"""The ``flitsim`` command line (click).

Commands: ``run`` one experiment, ``sweep`` a grid of experiments into a Parquet dataset,
``bench`` the macro-benchmarks, ``demo`` a small load sweep, ``schema`` the JSON Schema of
experiment files, ``version``; ``topo``, ``route`` and ``ebb`` (:mod:`flitsim.cli_fabric`),
``qos`` (:mod:`flitsim.cli_qos`) and ``trace`` (:mod:`flitsim.cli_trace`). Errors in the
user's input print ``error: <message>`` on stderr and exit with status 2, without a
traceback; Ctrl-C exits with 130 (:mod:`flitsim._cli` is the one place that does this).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import click

from . import FlitsimError, __version__, _core, _read_config, _run_text, check_set
from ._cli import EXIT_INTERRUPTED, EXIT_USAGE, INTERRUPT_HINT, Group, fail  # noqa: F401
from ._format import fixed as _fmt
from ._format import row as _row
from ._format import scale as _scale
from ._format import value_label
from ._format import yes_no as _yes_no

# (name, file under examples/, load) of the scenarios `flitsim bench` runs. The package
# ships copies of the three files (flitsim/scenarios/, kept equal to examples/ by
# tests/python/test_cli.py), so that the benchmark runs from anywhere after `pip install`.
BENCH_SCENARIOS: Tuple[Tuple[str, str, float], ...] = (
    ("torus-16x16-uniform", "torus-16x16-uniform.toml", 0.2),
    ("torus-8x8-uniform", "torus-8x8-uniform.toml", 0.5),
    ("fattree-4ary3-uniform", "fattree-4ary3-uniform.toml", 0.5),
)
# `flitsim bench --scale`: the 16×16 torus scenario grown to 32×32 and 64×64 with the load
# scaled so that every switch carries the same traffic (the mean distance grows with the
# side): (name, topology.sides, load, warmup, measure). Issue 19's measure of how the cost
# per flit-hop grows with the fabric (docs/performance.md, "Scale").
BENCH_SCALE: Tuple[Tuple[str, str, float, int, int], ...] = (
    ("torus 16x16", "[16,16]", 0.2, 5000, 50000),
    ("torus 32x32", "[32,32]", 0.1, 2000, 10000),
    ("torus 64x64", "[64,64]", 0.05, 1000, 5000),
)
# `flitsim bench --scale --large` adds issue 19's largest fabrics, each against the 16×16
# torus: 4 096 switches as a fat tree, and 65 536 endpoints as a torus and as a fat tree
# (381 and 572 MiB): (name, scenario file, its overrides, load, warmup, measure). Their runs
# are short already, and --quick leaves them as they are.
BENCH_SCALE_LARGE: Tuple[Tuple[str, str, Tuple[str, ...], float, int, int], ...] = (
    ("4-ary 6-tree", "fattree-4ary3-uniform.toml", ("topology.n=6",), 0.5, 500, 1500),
    ("torus 256x256", "torus-16x16-uniform.toml", ("topology.sides=[256,256]",), 0.01, 300, 700),
    ("16-ary 4-tree", "fattree-4ary3-uniform.toml", ("topology.k=16", "topology.n=4"), 0.2,
     300, 700),
)
# The same run lengths as the Rust benchmark (crates/flitsim-app/examples/bench.rs).
BENCH_SETS = ("run.warmup=5000", "run.measure=50000", "run.per_port_stats=false")
# Every benchmark run counts hardware events (performance.counters) where the platform has
# them.
BENCH_COUNTERS = "run.counters=true"
BENCH_QUICK_SETS = ("run.measure=2000", "run.warmup=1000")
# `flitsim bench --omni-path`: the Omni-Path QoS 2D torus at the paper's units (64 switches of
# 48 ports, 8-byte flits) with hierarchical switches and with single crossbars, under the
# schedulers and loads of issue 19's target (docs/performance.md, "The Omni-Path switch
# against the crossbar"): (qos.scheduler, load). The package ships the file with the others.
BENCH_OPA_FILE = "opa-qos-torus2d.toml"
BENCH_OPA: Tuple[Tuple[str, float], ...] = (("rr", 0.5), ("dtable", 1.0))
BENCH_OPA_SETS = ('run.warmup="1.28us"', 'run.measure="2.56us"', 'run.drain_max="1.28us"')
BENCH_OPA_QUICK_SETS = ('run.warmup="0.64us"', 'run.measure="1.28us"', "run.drain_max=0")


def _run(config: Any, sets: Sequence[str], seed: Optional[int]) -> str:
    """Run one experiment and return its JSON summary (errors: see :mod:`flitsim._cli`)."""
    checked = [check_set(s) for s in sets]
    text, origin = _read_config(config)
    return _run_text(text, origin, checked, seed)


# `flitsim demo` and `flitsim sweep` take the same --jobs.
_jobs_option = click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Runs at once (default: the number of CPUs).",
)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="flitsim")
def main() -> None:
    """flitsim: flit-level simulator of lossless, credit-based HPC interconnects."""


@main.command()
@click.argument("file", metavar="FILE.toml")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override one config key, e.g. --set traffic.load=0.4 (repeatable). VALUE is a "
    "TOML value, else a bare word taken as a string.",
)
@click.option("--seed", type=int, default=None, help="Replace the config's seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def run(file: str, sets: Tuple[str, ...], seed: Optional[int], as_json: bool) -> None:
    """Run one experiment file and print its summary.

    \b
    Example:
      flitsim run examples/torus-8x8-uniform.toml --set traffic.load=0.4 --seed 7 --json
    """
    text = _run(Path(file), sets, seed)
    if as_json:
        click.echo(text.strip())
        return
    click.echo(format_summary(json.loads(text), title=file))


@main.command()
@click.option(
    "--quick",
    is_flag=True,
    help="Shorter runs (warmup 1000, measure 2000 cycles; --omni-path: 0.64 + 1.28 us, no "
    "drain; --large leaves its rows as they are).",
)
@click.option(
    "--scale",
    is_flag=True,
    help="Instead: the 16x16 torus grown to 32x32 and 64x64 at equal traffic per switch, "
    "with each one's cost per flit-hop relative to the 16x16.",
)
@click.option(
    "--large",
    is_flag=True,
    help="With --scale: also the 4-ary 6-tree, the 256x256 torus and the 16-ary 4-tree "
    "(65 536 endpoints; about 0.6 GiB and a minute in all).",
)
@click.option(
    "--omni-path",
    "omni_path",
    is_flag=True,
    help="Instead: the Omni-Path QoS 2D torus with hierarchical Omni-Path switches and with "
    "single crossbars (RR at 0.5, DTable at 1.0), and the Omni-Path model's speed as a share "
    "of the crossbar's, over --rounds alternated rounds.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="With --omni-path: rounds of the four runs (the median share is printed last).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="Threads per run (run.threads). Default: the engine's choice (every core from 2048 "
    "switch ports); --scale and --omni-path run on one thread unless given.",
)
@click.option(
    "--examples-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory holding the scenario files (default: the copies installed with flitsim, "
    "the same as the repository's examples/).",
)
def bench(
    quick: bool,
    scale: bool,
    large: bool,
    omni_path: bool,
    rounds: int,
    threads: Optional[int],
    examples_dir: Optional[Path],
) -> None:
    """Run the macro-benchmark scenarios and print simulation speed.

    With --scale: the 16x16 torus grown to 32x32 and 64x64 at equal traffic per switch, and
    each one's cost per flit-hop (CPU time where available) relative to the 16x16 — how the
    cost grows with the fabric. --large adds the 4-ary 6-tree at 0.5 (6 144 switches), the
    256x256 torus at 0.01 and the 16-ary 4-tree at 0.2 (65 536 endpoints each).

    Per scenario: simulated cycles per wall second, flit-hops per second and their inverse
    (wall nanoseconds per flit-hop), CPU nanoseconds per flit-hop (the run loop's thread CPU
    time, where the platform has the clock; with several threads, the process's),
    instructions, L1 data-cache read misses and last-level cache misses per flit-hop (from
    the processor's counters, every thread of the run; "-" where the platform does not give
    them, and a note on stderr says why), the build time (topology, routing, table checks
    and the simulated network), which the rates leave out, and the threads the run took.

    With --omni-path: examples/opa-qos-torus2d.toml (the paper's units) built with hierarchical
    Omni-Path switches and with single crossbars, under RR at load 0.5 and DTable at 1.0, each
    pair run back to back in --rounds rounds (the order alternating); per round the CPU time
    per flit-hop of both and the Omni-Path model's speed as a share of the crossbar's (the
    crossbar's time over the Omni-Path model's), then the median share. Runs in one process
    time alike only within a few per cent on a busy or virtual machine, and the first round
    is often the slowest: hence the rounds.

    The scenarios are examples/torus-16x16-uniform.toml, torus-8x8-uniform.toml,
    fattree-4ary3-uniform.toml and opa-qos-torus2d.toml; flitsim installs copies of them, so
    this runs from any directory.
    """
    directory = examples_dir if examples_dir is not None else bench_scenarios_dir()
    if not directory.is_dir():
        fail(f"benchmark scenario directory not found: {directory}")
    if scale and omni_path:
        fail("--scale and --omni-path are two different benchmarks: give one of them")
    if large and not scale:
        fail("--large adds fabrics to --scale: give --scale too")
    if scale:
        _bench_scale(directory, quick, threads or 1, large)
        return
    if omni_path:
        _bench_omni_path(directory, quick, rounds, threads or 1)
        return
    missing = [f for _, f, _ in BENCH_SCENARIOS if not (directory / f).is_file()]
    if missing:
        fail(f"benchmark scenario file(s) not found in {directory}: {', '.join(missing)}")

    header = (
        "scenario",
        "load",
        "sim cycles",
        "wall s",
        "cycles/s",
        "Mflit-hops/s",
        "ns/flit-hop",
        "cpu ns/fh",
        "instr/fh",
        "L1d miss/fh",
        "LLC miss/fh",
        "build s",
        "threads",
    )
    widths = (24, 5, 11, 8, 11, 12, 11, 9, 9, 11, 11, 8, 7)
    click.echo(_row(header, widths))
    missing: List[str] = []
    for name, filename, load in BENCH_SCENARIOS:
        sets = [f"traffic.load={load}", *BENCH_SETS, BENCH_COUNTERS]
        if quick:
            sets.extend(BENCH_QUICK_SETS)
        if threads is not None:
            sets.append(f"run.threads={threads}")
        r = json.loads(_run(directory / filename, sets, None))
        perf = r.get("performance") or {}
        cells = (
            name,
            f"{load:g}",
            _fmt((r.get("cycles") or {}).get("total"), 0),
            _fmt(perf.get("wall_seconds"), 3),
            _fmt(perf.get("cycles_per_second"), 0),
            _fmt(_scale(perf.get("flit_hops_per_second"), 1e-6), 2),
            _fmt(_ns_per(perf.get("flit_hops_per_second")), 1),
            _fmt(_cpu_ns_per_flit_hop(perf), 1),
            *_counter_cells(perf),
            _fmt(perf.get("build_seconds"), 3),
            _fmt(perf.get("threads"), 0),
        )
        click.echo(_row(cells, widths))
        _note_missing_counters(perf, missing)
    _print_counter_notes(missing)


def _bench_scale(directory: Path, quick: bool, threads: int, large: bool = False) -> None:
    """`flitsim bench --scale`: cost per flit-hop by fabric size (see BENCH_SCALE, and
    BENCH_SCALE_LARGE with `large`), on `threads` threads per run."""
    base = BENCH_SCENARIOS[0][1]
    rows: List[Tuple[str, str, Tuple[str, ...], float, int, int]] = [
        (name, base, (f"topology.sides={sides}",), load,
         1000 if quick else warmup, 2000 if quick else measure)
        for name, sides, load, warmup, measure in BENCH_SCALE
    ]
    if large:
        rows.extend(BENCH_SCALE_LARGE)
    missing_files = sorted({f for _, f, *_ in rows if not (directory / f).is_file()})
    if missing_files:
        fail(f"benchmark scenario file(s) not found in {directory}: {', '.join(missing_files)}")
    header = (
        "fabric",
        "load",
        "sim cycles",
        "Mflit-hops/s",
        "ns/flit-hop",
        "instr/fh",
        "L1d miss/fh",
        "LLC miss/fh",
        "cpu ns/fh",
        "x 16x16",
    )
    widths = (13, 5, 11, 12, 11, 9, 11, 11, 9, 8)
    click.echo(_row(header, widths))
    first: Optional[float] = None
    missing: List[str] = []
    for name, filename, overrides, load, warmup, measure in rows:
        sets = [
            *overrides,
            f"traffic.load={load}",
            f"run.warmup={warmup}",
            f"run.measure={measure}",
            "run.per_port_stats=false",
            f"run.threads={threads}",
            BENCH_COUNTERS,
        ]
        r = json.loads(_run(directory / filename, sets, None))
        perf = r.get("performance") or {}
        cpu = _cpu_ns_per_flit_hop(perf)
        cost = cpu if cpu is not None else _ns_per(perf.get("flit_hops_per_second"))
        if first is None:
            first = cost
        cells = (
            name,
            f"{load:g}",
            _fmt((r.get("cycles") or {}).get("total"), 0),
            _fmt(_scale(perf.get("flit_hops_per_second"), 1e-6), 2),
            _fmt(_ns_per(perf.get("flit_hops_per_second")), 1),
            *_counter_cells(perf),
            _fmt(cpu, 1),
            _fmt(cost / first if cost and first else None, 2),
        )
        click.echo(_row(cells, widths))
        _note_missing_counters(perf, missing)
    _print_counter_notes(missing)


def _bench_omni_path(directory: Path, quick: bool, rounds: int, threads: int) -> None:
    """`flitsim bench --omni-path`: the Omni-Path switch model against the crossbar on one
    fabric (see BENCH_OPA), `rounds` rounds on `threads` threads per run."""
    scenario = directory / BENCH_OPA_FILE
    if not scenario.is_file():
        fail(f"benchmark scenario file not found in {directory}: {BENCH_OPA_FILE}")
    header = ("scheduler", "load", "round", "crossbar cpu ns/fh", "omni-path cpu ns/fh", "share")
    widths = (9, 5, 6, 18, 19, 6)
    click.echo(_row(header, widths))
    lengths = BENCH_OPA_QUICK_SETS if quick else BENCH_OPA_SETS
    for scheduler, load in BENCH_OPA:
        shares: List[float] = []
        for k in range(rounds):
            cost: Dict[str, Optional[float]] = {}
            # Alternate which organisation runs first, so that a drift of the machine's
            # speed within a round does not always favour the same one.
            order = ("opa", "crossbar") if k % 2 == 0 else ("crossbar", "opa")
            for organisation in order:
                sets = [
                    f'qos.scheduler="{scheduler}"',
                    f"traffic.load={load}",
                    f'switch.organisation="{organisation}"',
                    *lengths,
                    f"run.threads={threads}",
                ]
                perf = json.loads(_run(scenario, sets, None)).get("performance") or {}
                ns = _cpu_ns_per_flit_hop(perf)
                cost[organisation] = ns if ns is not None else _ns_per(
                    perf.get("flit_hops_per_second")
                )
            xbar, opa = cost["crossbar"], cost["opa"]
            share = xbar / opa if xbar and opa else None
            if share is not None:
                shares.append(share)
            cells = (
                scheduler, f"{load:g}", str(k + 1), _fmt(xbar, 1), _fmt(opa, 1), _fmt(share, 2)
            )
            click.echo(_row(cells, widths))
        median = statistics.median(shares) if shares else None
        click.echo(_row((scheduler, f"{load:g}", "median", "", "", _fmt(median, 2)), widths))


def _cpu_ns_per_flit_hop(perf: Dict[str, Any]) -> Optional[float]:
    """CPU nanoseconds of the run loop per flit-hop (None without a CPU clock or flit-hops)."""
    cpu, hops = perf.get("cpu_seconds"), perf.get("flit_hops")
    return 1e9 * cpu / hops if cpu is not None and hops else None


def _counter_cells(perf: Dict[str, Any]) -> Tuple[str, str, str]:
    """The bench columns instr/fh, L1d miss/fh and LLC miss/fh of one run."""
    return (
        _fmt(_per_flit_hop(perf, "instructions"), 0),
        _fmt(_per_flit_hop(perf, "l1d_read_misses"), 2),
        _fmt(_per_flit_hop(perf, "cache_misses"), 2),
    )


def _per_flit_hop(perf: Dict[str, Any], counter: str) -> Optional[float]:
    """A hardware event count of the run (``performance.counters``) per flit-hop (None
    where it was not counted)."""
    value, hops = (perf.get("counters") or {}).get(counter), perf.get("flit_hops")
    return value / hops if value is not None and hops else None


def _note_missing_counters(perf: Dict[str, Any], notes: List[str]) -> None:
    """Adds to ``notes`` why a run's hardware counters are missing, once per reason."""
    why = (perf.get("counters") or {}).get("unavailable")
    if why and why not in notes:
        notes.append(why)


def _print_counter_notes(notes: List[str]) -> None:
    # After the table, also when stdout is a pipe (block-buffered) and stderr is not.
    sys.stdout.flush()
    for why in notes:
        click.echo(f"note: hardware counters not counted: {why}", err=True)


def _ns_per(rate: Optional[float]) -> Optional[float]:
    """Nanoseconds per unit of a per-second rate (None if there is no rate)."""
    return 1e9 / rate if rate else None


@main.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("flitsim-demo"),
    show_default=True,
    help="Directory for the dataset, the plots and report.html.",
)
@_jobs_option
def demo(out_dir: Path, jobs: Optional[int]) -> None:
    """Two-class load sweep on a 4x4 torus, with plots and a report.

    Runs a small sweep (12 loads x 2 seeds, a few seconds), prints a table, and writes
    the Parquet dataset, six plots (OUT/plots/) and OUT/report.html.
    """
    from .demo import DEMO_LOADS, DEMO_SEEDS, run_demo

    click.echo(
        "4x4 torus, 16 endpoints, uniform random traffic, DOR routing, 4 VLs; two classes: "
        "hi (1/4 of the load, strict priority) and lo (3/4)"
    )
    loads = ", ".join(f"{x:g}" for x in DEMO_LOADS)
    click.echo(f"offered loads {loads} flits/cycle/endpoint, {DEMO_SEEDS} seeds each")
    result = run_demo(out_dir, jobs=jobs)
    names = sorted({k.split(".", 1)[1] for row in result.rows for k in row if "." in k})
    header = ("load", "accepted", "lat mean", "lat p99") + tuple(
        f"{n} mean" for n in names
    ) + ("saturated",)
    widths = (5, 9, 9, 9) + tuple(max(9, len(n) + 5) for n in names) + (9,)
    click.echo(_row(header, widths))
    for row in result.rows:
        cells = (
            _fmt(row["load"], 2),
            _fmt(row["accepted_load"], 3),
            _fmt(row["latency_mean"], 1),
            _fmt(row["latency_p99"], 1),
        ) + tuple(_fmt(row.get(f"latency_mean.{n}"), 1) for n in names) + (
            f"{row['saturated']}/{row['seeds']}",
        )
        click.echo(_row(cells, widths))
    click.echo("(loads in flits/cycle/endpoint, latencies in cycles, means over seeds)")
    click.echo(f"dataset: {result.out_dir} (read with flitsim.load_sweep)")
    if result.skipped:
        click.echo(f"plots and report skipped: {result.skipped}")
    else:
        click.echo(f"plots:   {result.plots[0].parent}")
        click.echo(f"report:  {result.report}")
    click.echo(f"done in {result.seconds:.1f} s")


@main.command("plot")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(["png", "svg", "pdf"]),
    help="Image format (repeatable; default: png and svg).",
)
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the images (default: DIR/plots; for a run's file, its directory).",
)
def plot_command(directory: Path, formats: Tuple[str, ...], dest: Optional[Path]) -> None:
    """Plot the sweep in DIR and print the paths of the images.

    Writes latency_vs_load, accepted_vs_offered, sl_throughput, latency_cdf,
    sl_latency_vs_offered and sl_share_vs_offered (per-SL latency and share of the accepted
    traffic against the total offered load, one panel per value of the other varied keys,
    e.g. qos.scheduler), each in every --format.

    DIR may instead be the JSON file of one run (flitsim run --json) with a time series
    (run.timeseries_bin): that writes throughput_over_time, one line per class.
    """
    from .plot import plot_run, plot_sweep

    fmts = formats or ("png", "svg")
    if directory.is_file():
        paths = plot_run(directory, dest=dest, formats=fmts)
    else:
        paths = plot_sweep(directory, dest=dest, formats=fmts)
    for path in paths:
        click.echo(str(path))


@main.command("report")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--dest",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="HTML file to write (default: DIR/report.html).",
)
@click.option("--no-view", "no_view", is_flag=True,
              help="Leave out the fabric view (it runs the most loaded point once more).")
def report_command(directory: Path, dest: Optional[Path], no_view: bool) -> None:
    """Write an HTML report of the sweep in DIR and print its path.

    One self-contained page (OUT/report.html by default): the sweep's configuration, the
    four plots embedded as images, the fabric of the most loaded point (run once more, links
    coloured by utilisation; see `flitsim view`), and tables per point and per service level.
    """
    from .report import write_report

    path = write_report(directory, dest=dest, view=not no_view)
    click.echo(str(path))


@main.command()
def version() -> None:
    """Print the flitsim version, and the Python and pyarrow versions."""
    click.echo(f"flitsim {__version__} (core {_core.version()})")
    click.echo(f"python {sys.version.split()[0]}")
    try:
        import pyarrow

        click.echo(f"pyarrow {pyarrow.__version__}")
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        click.echo("pyarrow not installed")


@main.command()
def schema() -> None:
    """Print the JSON Schema of experiment files."""
    click.echo(_core.schema_json().strip())


# -- flitsim sweep ------------------------------------------------------------------------


@main.command(short_help="Run a grid of experiments into a Parquet dataset.")
@click.argument("file", metavar="FILE.toml")
@click.option(
    "--vary",
    "varies",
    multiple=True,
    metavar="KEY=VALUES",
    help="A key and its values: key=v1,v2,... (each a TOML value, else a bare word taken as a "
    "string, as for --set) or key=start:stop:step (inclusive numeric range). Repeatable; "
    "the grid is the product.",
)
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Seeds per point: the config's seed and the next N-1.",
)
@_jobs_option
@click.option(
    "--backend",
    type=click.Choice(["local", "dask"]),
    default=None,
    help="local: a thread pool (default); dask: a Dask cluster (see --scheduler).",
)
@click.option(
    "--scheduler",
    metavar="ADDR",
    default=None,
    help="Dask scheduler address (implies --backend dask); default: a local cluster of "
    "--jobs worker processes.",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override one config key for every run (repeatable).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the Parquet dataset (rerun into it to resume).",
)
@click.option("--overwrite", is_flag=True, help="Replace a different sweep found in --out.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress on stderr: a bar on a terminal, else one line per finished run "
    "(default: the bar when stderr is a terminal, else nothing).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary rows as JSON.")
def sweep(
    file: str,
    varies: Tuple[str, ...],
    seeds: int,
    jobs: Optional[int],
    backend: Optional[str],
    scheduler: Optional[str],
    sets: Tuple[str, ...],
    out_dir: Path,
    overwrite: bool,
    progress: Optional[bool],
    as_json: bool,
) -> None:
    """Run FILE for every combination of --vary values and seeds; store the results.

    Writes OUT/sweep.json and one Parquet file per run under OUT/summary, OUT/per_sl and
    OUT/histogram; read them with flitsim.load_sweep(OUT), pandas, polars or DuckDB.
    Rerunning the same command skips the runs already finished (and says how many) and
    reruns those with a damaged file.

    \b
    Example:
      flitsim sweep examples/torus-8x8-uniform.toml --vary traffic.load=0.1:0.5:0.1 \\
          --vary routing.vls=2,4 --seeds 3 --jobs 2 --out sweep-8x8
    """
    from .sweep import sweep as run_sweep
    from .values import parse_vary

    vary: Dict[str, List[Any]] = {}
    for spec in varies:
        try:
            key, values = parse_vary(spec)
        except FlitsimError as e:
            fail(f"--vary {spec}: {e}")
        if key in vary:
            fail(f"--vary {spec}: key {key} is already varied")
        vary[key] = values
    if backend is None:
        backend = "dask" if scheduler is not None else "local"
    checked = [check_set(s) for s in sets]
    # Ctrl-C keeps the finished runs: say how to resume.
    click.get_current_context().meta[INTERRUPT_HINT] = "rerun the same command to resume"
    table = run_sweep(
        Path(file),
        vary,
        seeds=seeds,
        jobs=jobs,
        backend=backend,
        scheduler=scheduler,
        out=out_dir,
        progress=progress,
        overwrite=overwrite,
        sets=checked,
        log=lambda message: click.echo(message, err=True),
    )

    rows = table.to_pylist()
    if as_json:
        click.echo(json.dumps(rows))
        return
    click.echo(format_sweep_table(rows, list(vary)))
    click.echo(f"{len(rows)} runs in {out_dir} (read with flitsim.load_sweep)")


def format_sweep_table(rows: Sequence[Dict[str, Any]], keys: Sequence[str]) -> str:
    """One line per sweep point: its varied values, seed count, mean accepted load, mean
    latency and how many of its runs saturated. ``rows`` are in grid order."""
    groups: List[Tuple[Tuple[Any, ...], List[Dict[str, Any]]]] = []
    for row in rows:
        point = tuple(row.get(k) for k in keys)
        if groups and groups[-1][0] == point:
            groups[-1][1].append(row)
        else:
            groups.append((point, [row]))
    header = tuple(keys) + ("seeds", "accepted", "lat mean", "saturated")
    deadlocks = any(r.get("deadlock") for r in rows)
    if deadlocks:
        header += ("deadlock",)
    lines = []
    body = []
    for point, group in groups:
        n = len(group)
        accepted = _mean(r.get("accepted_load") for r in group)
        latency = _mean(r.get("latency_mean") for r in group)
        saturated = sum(1 for r in group if r.get("saturated"))
        deadlocked = sum(1 for r in group if r.get("deadlock"))
        # A point whose runs all deadlocked before measuring anything has no mean.
        miss = "deadlock" if deadlocked else "-"
        cells = tuple(value_label(v) for v in point) + (
            str(n), _fmt(accepted, 4, missing=miss), _fmt(latency, 1, missing=miss),
            f"{saturated}/{n}",
        )
        if deadlocks:
            cells += (f"{deadlocked}/{n}",)
        body.append(cells)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *body)]
    widths = [max(w, 6) for w in widths]
    lines.append(_row(header, widths, left=len(keys)))
    lines.extend(_row(cells, widths, left=len(keys)) for cells in body)
    return "\n".join(lines)


def _mean(values: Iterable[Any]) -> Optional[float]:
    numbers = [v for v in values if isinstance(v, (int, float))]
    return sum(numbers) / len(numbers) if numbers else None


def bench_scenarios_dir() -> Path:
    """The scenario files of ``flitsim bench`` installed with the package."""
    return Path(__file__).resolve().parent / "scenarios"


def format_summary(r: Dict[str, Any], title: str = "") -> str:
    """Render an engine summary as a short human-readable report. A statistic that a
    deadlocked run could not measure prints as ``deadlock``."""
    from .results import measured

    r = measured(r)
    # What an unmeasured statistic prints as.
    miss = "deadlock" if r.get("deadlock") else "-"
    lines: List[str] = []
    head = f"flitsim run {title}".rstrip()
    described = ", ".join(str(r[k]) for k in ("topology", "routing") if r.get(k))
    if described:
        head += f"   {described}"
    head += f"   seed {r.get('seed')}   config {str(r.get('config_hash', '?'))[:16]}"
    lines.append(head)
    cyc = r.get("cycles") or {}
    flits = r.get("flits") or {}

    def item(label: str, value: str) -> None:
        lines.append(f"  {label:<18}{value}")

    item("endpoints", _fmt(r.get("endpoints"), 0))
    item(
        "cycles",
        f"warmup {_fmt(cyc.get('warmup'), 0)}, measure {_fmt(cyc.get('measure'), 0)}, "
        f"total {_fmt(cyc.get('total'), 0)}",
    )
    for label, key in (("offered load", "offered_load"), ("accepted load", "accepted_load")):
        value = r.get(key)
        twin = _gbps(r.get(key.replace("_load", "_gbps")))
        item(label, miss if value is None else f"{_fmt(value, 4)} flits/cycle/endpoint{twin}")
    item("saturated", _yes_no(r.get("saturated")))
    item("latency", _latency(r.get("latency"), miss))
    if r.get("latency_ns"):
        item("", _latency(r.get("latency_ns"), miss, "ns"))
    item("network latency", _latency(r.get("network_latency"), miss))
    if r.get("network_latency_ns"):
        item("", _latency(r.get("network_latency_ns"), miss, "ns"))
    item("hops (mean)", _fmt(r.get("hops_mean"), 2, missing=miss))
    dl = r.get("deadlock")
    if dl:
        blocked = dl.get("blocked") or []
        where = ", ".join(
            f"{b['switch']} port {b['in_port']} VL {b['vl']} -> "
            f"port {b['out_port']} VL {b['out_vl']}"
            for b in blocked[:6]
        )
        more = f" (+{len(blocked) - 6} more)" if len(blocked) > 6 else ""
        item(
            "DEADLOCK",
            f"no flit moved since cycle {dl.get('last_progress')}; stopped at cycle "
            f"{dl.get('cycle')}; blocked: {where}{more}",
        )
    tr = r.get("trace")
    if tr:
        if tr.get("complete"):
            ns = tr.get("execution_time_ns")
            twin = f" ({_fmt(ns / 1e6, 3)} ms)" if ns is not None else ""
            done = f"execution time {_fmt(tr.get('execution_time'), 0)} cycles{twin}"
        else:
            left = sum(1 for f in tr.get("finish") or () if f is None)
            done = f"INCOMPLETE: {left} tasks had not finished when the run stopped"
        item(
            "trace",
            f"{tr.get('tasks')} tasks, {tr.get('messages')} messages, "
            f"{tr.get('collectives')} collectives; {done}",
        )
    flows = r.get("flows")
    if flows:
        item("flows", f"{len(flows)}")
    bandwidth = r.get("bandwidth")
    if bandwidth:
        refused = [b for b in bandwidth if not b.get("admitted")]
        item(
            "bandwidth",
            f"{len(bandwidth) - len(refused)} of {len(bandwidth)} managed flows admitted"
            + "".join(
                f"; flow {b.get('flow')} refused: {(b.get('refused_by') or {}).get('message')}"
                for b in refused[:3]
            ),
        )
    deadline = r.get("deadline")
    if deadline:
        lost = [f"{d.get('class')} {d.get('packets')}" for d in deadline.get("discarded") or ()
                if d.get("packets")]
        ttd = deadline.get("max_ttd")
        ttd_ns = deadline.get("max_ttd_ns")
        item(
            "deadline",
            (f"{deadline.get('architecture')}; " if deadline.get("architecture") else "")
            + f"order errors {deadline.get('order_errors')}"
            + (f", largest TTD {_fmt(ttd, 0)} cycles" if ttd is not None else "")
            + (f" ({_fmt(ttd_ns / 1e3, 1)} us)" if ttd_ns is not None else "")
            + (f"; discarded packets: {', '.join(lost)}" if lost else "; nothing discarded"),
        )
    cdg = r.get("cdg")
    if cdg:
        item("deadlock-free", _yes_no(cdg.get("deadlock_free")) + " (channel dependency graph)")
    item(
        "flits",
        f"generated {_fmt(flits.get('generated'), 0)}, delivered "
        f"{_fmt(flits.get('delivered'), 0)}, remaining {_fmt(flits.get('remaining'), 0)}",
    )

    per_sl = r.get("per_sl") or []
    if per_sl:
        lines.append("")
        header = ("SL", "class", "share", "offered", "accepted", "mean", "p50", "p99", "max")
        widths = (3, 10, 6, 9, 9, 8, 8, 8, 8)
        lines.append("  " + _row(header, widths, left=2))
        for c in per_sl:
            lat = c.get("latency") or {}
            if miss != "-" and c.get("accepted_load") is None and lat.get("mean") is None:
                cells = (_fmt(c.get("sl"), 0), str(c.get("name", "")), "deadlock: nothing measured")
                lines.append("  " + _row(cells, widths[:2] + (0,), left=3))
                continue
            cells = (
                _fmt(c.get("sl"), 0),
                str(c.get("name", "")),
                _fmt(c.get("share"), 2, missing=miss),
                _fmt(c.get("offered_load"), 4, missing=miss),
                _fmt(c.get("accepted_load"), 4, missing=miss),
            ) + tuple(_fmt(lat.get(k), 1, missing=miss) for k in ("mean", "p50", "p99", "max"))
            lines.append("  " + _row(cells, widths, left=2))
        lines.append("  (latencies in cycles)")

    perf = r.get("performance") or {}
    if perf:
        lines.append("")
        item(
            "performance",
            f"{_fmt(perf.get('wall_seconds'), 3)} s wall, "
            f"{_fmt(_scale(perf.get('cycles_per_second'), 1e-6), 2)} M cycles/s, "
            f"{_fmt(_scale(perf.get('flit_hops_per_second'), 1e-6), 2)} M flit-hops/s",
        )
    return "\n".join(lines)


def _latency(lat: Optional[Dict[str, Any]], miss: str = "-", unit: str = "cycles") -> str:
    lat = lat or {}
    if lat.get("mean") is None and miss != "-":
        return f"{miss} (no packet measured)"
    return (
        f"mean {_fmt(lat.get('mean'), 1)}  p50 {_fmt(lat.get('p50'), 1)}  "
        f"p99 {_fmt(lat.get('p99'), 1)}  max {_fmt(lat.get('max'), 1)}  {unit}"
    )


def _gbps(value: Any) -> str:
    """`` (x Gb/s)`` when the run has physical units, else nothing."""
    return "" if value is None else f" ({_fmt(value, 3)} Gb/s per endpoint)"


from .cli_fabric import bandwidth, cac, ebb, route, topo  # noqa: E402  (fabric commands)
from .cli_qos import qos  # noqa: E402  (QoS tables)
from .cli_trace import trace  # noqa: E402  (MPI traces)
from .cli_view import view  # noqa: E402  (pictures of the fabric)

for _command in (topo, route, ebb, bandwidth, cac, qos, trace, view):
    main.add_command(_command)

if __name__ == "__main__":
    main(prog_name="flitsim")
