"""The ``flitsim`` command line (click).

Commands: ``run`` one experiment, ``bench`` the macro-benchmarks, ``demo`` a small load
sweep, ``version``. Errors in the user's input print ``error: <message>`` on stderr and exit
with status 2, without a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, NoReturn, Optional, Sequence, Tuple

import click

from . import FlitsimError, __version__, _core, _read_config, _run_text, check_set

EXIT_USAGE = 2

# (name, file under examples/, load) of the scenarios `flitsim bench` runs.
BENCH_SCENARIOS: Tuple[Tuple[str, str, float], ...] = (
    ("torus-16x16-uniform", "torus-16x16-uniform.toml", 0.2),
    ("torus-8x8-uniform", "torus-8x8-uniform.toml", 0.5),
    ("fattree-4ary3-uniform", "fattree-4ary3-uniform.toml", 0.5),
)
# The same run lengths as the Rust benchmark (crates/flitsim-sim/examples/bench.rs).
BENCH_SETS = ("run.warmup=5000", "run.measure=50000", "run.per_port_stats=false")
BENCH_QUICK_SETS = ("run.measure=2000", "run.warmup=1000")


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_USAGE)


def _run(config: Any, sets: Sequence[str], seed: Optional[int]) -> str:
    """Run one experiment; turn user errors into ``error: …`` and exit status 2."""
    try:
        checked = [check_set(s) for s in sets]
        text, origin = _read_config(config)
        return _run_text(text, origin, checked, seed)
    except FlitsimError as e:
        _fail(str(e))
    except OSError as e:
        _fail(str(e) if not e.filename else f"{e.strerror or e}: {e.filename}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    help="Override one config key, e.g. --set traffic.load=0.4 (repeatable).",
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
@click.option("--quick", is_flag=True, help="Shorter runs (warmup 1000, measure 2000 cycles).")
@click.option(
    "--examples-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory holding the scenario files (default: ./examples, then the repository's).",
)
def bench(quick: bool, examples_dir: Optional[Path]) -> None:
    """Run the macro-benchmark scenarios and print simulation speed."""
    directory = examples_dir if examples_dir is not None else find_examples_dir()
    if directory is None:
        _fail(
            "cannot find the examples/ directory; run `flitsim bench` from the repository "
            "root or pass --examples-dir"
        )
    missing = [f for _, f, _ in BENCH_SCENARIOS if not (directory / f).is_file()]
    if missing:
        _fail(f"benchmark scenario file(s) not found in {directory}: {', '.join(missing)}")

    header = ("scenario", "load", "sim cycles", "wall s", "cycles/s", "Mflit-hops/s")
    widths = (24, 5, 11, 8, 11, 12)
    click.echo(_row(header, widths))
    for name, filename, load in BENCH_SCENARIOS:
        sets = [f"traffic.load={load}", *BENCH_SETS]
        if quick:
            sets.extend(BENCH_QUICK_SETS)
        r = json.loads(_run(directory / filename, sets, None))
        perf = r.get("performance") or {}
        cells = (
            name,
            f"{load:g}",
            _fmt((r.get("cycles") or {}).get("total"), 0),
            _fmt(perf.get("wall_seconds"), 3),
            _fmt(perf.get("cycles_per_second"), 0),
            _fmt(_scale(perf.get("flit_hops_per_second"), 1e-6), 2),
        )
        click.echo(_row(cells, widths))


@main.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("flitsim-demo"),
    show_default=True,
    help="Directory for demo.csv.",
)
def demo(out_dir: Path) -> None:
    """Sweep the load on a small 4x4 torus and print a latency/throughput table."""
    from .demo import DEMO_LOADS, run_demo, write_csv

    click.echo("4x4 torus, 16 endpoints, uniform random traffic, DOR routing, 2 VLs")
    try:
        rows = run_demo(DEMO_LOADS)
    except FlitsimError as e:
        _fail(str(e))
    header = ("load", "accepted", "lat mean", "lat p99", "saturated")
    widths = (6, 9, 9, 9, 9)
    click.echo(_row(header, widths))
    for row in rows:
        cells = (
            f"{row['load']:.1f}",
            _fmt(row["accepted_load"], 3),
            _fmt(row["latency_mean"], 1),
            _fmt(row["latency_p99"], 1),
            _yes_no(row["saturated"]),
        )
        click.echo(_row(cells, widths))
    try:
        path = write_csv(rows, out_dir / "demo.csv")
    except OSError as e:
        _fail(f"cannot write {out_dir / 'demo.csv'}: {e.strerror or e}")
    click.echo(f"wrote {path}")


@main.command()
def version() -> None:
    """Print the flitsim version."""
    click.echo(f"flitsim {__version__} (core {_core.version()})")


def find_examples_dir() -> Optional[Path]:
    """``./examples`` if it exists, else ``examples/`` of the repository holding this package."""
    for candidate in _example_dir_candidates():
        if candidate.is_dir():
            return candidate
    return None


def _example_dir_candidates() -> Iterator[Path]:
    yield Path.cwd() / "examples"
    # In a source checkout this file is <repo>/python/flitsim/cli.py.
    here = Path(__file__).resolve()
    if len(here.parents) > 2:
        yield here.parents[2] / "examples"


def format_summary(r: Dict[str, Any], title: str = "") -> str:
    """Render an engine summary as a short human-readable report."""
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
    item("offered load", f"{_fmt(r.get('offered_load'), 4)} flits/cycle/endpoint")
    item("accepted load", f"{_fmt(r.get('accepted_load'), 4)} flits/cycle/endpoint")
    item("saturated", _yes_no(r.get("saturated")))
    item("latency", _latency(r.get("latency")))
    item("network latency", _latency(r.get("network_latency")))
    item("hops (mean)", _fmt(r.get("hops_mean"), 2))
    dl = r.get("deadlock")
    if dl:
        blocked = dl.get("blocked") or []
        where = ", ".join(
            f"{b['switch']} port {b['in_port']} VL {b['vl']} -> port {b['out_port']} VL {b['out_vl']}"
            for b in blocked[:6]
        )
        more = f" (+{len(blocked) - 6} more)" if len(blocked) > 6 else ""
        item(
            "DEADLOCK",
            f"no flit moved since cycle {dl.get('last_progress')}; stopped at cycle "
            f"{dl.get('cycle')}; blocked: {where}{more}",
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
            cells = (
                _fmt(c.get("sl"), 0),
                str(c.get("name", "")),
                _fmt(c.get("share"), 2),
                _fmt(c.get("offered_load"), 4),
                _fmt(c.get("accepted_load"), 4),
                _fmt(lat.get("mean"), 1),
                _fmt(lat.get("p50"), 1),
                _fmt(lat.get("p99"), 1),
                _fmt(lat.get("max"), 1),
            )
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


def _latency(lat: Optional[Dict[str, Any]]) -> str:
    lat = lat or {}
    return (
        f"mean {_fmt(lat.get('mean'), 1)}  p50 {_fmt(lat.get('p50'), 1)}  "
        f"p99 {_fmt(lat.get('p99'), 1)}  max {_fmt(lat.get('max'), 1)}  cycles"
    )


def _fmt(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return _yes_no(value)
    if isinstance(value, (int, float)):
        if digits == 0:
            return f"{value:.0f}"
        return f"{value:.{digits}f}"
    return str(value)


def _scale(value: Any, factor: float) -> Any:
    return value * factor if isinstance(value, (int, float)) else value


def _yes_no(value: Any) -> str:
    if value is None:
        return "-"
    return "yes" if value else "no"


def _row(cells: Sequence[str], widths: Sequence[int], left: int = 1) -> str:
    """One table row: the first ``left`` cells left-aligned, the others right-aligned."""
    out = []
    for i, (cell, width) in enumerate(zip(cells, widths)):
        out.append(f"{cell:<{width}}" if i < left else f"{cell:>{width}}")
    return " ".join(out).rstrip()


if __name__ == "__main__":
    main(prog_name="flitsim")
