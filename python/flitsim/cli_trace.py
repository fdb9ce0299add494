"""``flitsim trace``: MPI traces for closed-loop replay (``docs/traces.md``).

* ``flitsim trace convert IN OUT.vef`` converts a DUMPI trace (a directory of per-rank
  ``dumpi-…-NNNN.bin`` files, or one of them) to VEF, written atomically.
* ``flitsim trace info FILE [--json]`` summarises a VEF file (checking it) or a DUMPI trace:
  ``tasks``, ``messages``, ``bytes`` (point-to-point), ``collectives`` (per operation),
  ``unsupported`` (MPI calls the conversion cannot model, by name: they are not in the VEF)
  and ``ignored`` (calls that move no data).

DUMPI needs the optional ``pydumpi`` package: ``pip install 'flitsim[trace]'``. Errors print
``error: <message>`` and exit with status 2 (:mod:`flitsim._cli`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import click

from ._cli import Group, fail


@click.group(cls=Group)
def trace() -> None:
    """MPI traces: convert DUMPI to VEF, summarise a trace."""


def _counts(table: Dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in table.items()) or "none"


def _print_summary(s: Dict[str, Any]) -> None:
    collectives = s["collectives"]
    click.echo(f"tasks        {s['tasks']}")
    click.echo(f"messages     {s['messages']} ({s['bytes']} bytes)")
    click.echo(f"collectives  {sum(collectives.values())}: {_counts(collectives)}")
    click.echo(f"unsupported  {_counts(s['unsupported'])}")
    if s.get("ignored"):
        click.echo(f"ignored      {_counts(s['ignored'])} (no data moved)")


@trace.command("convert")
@click.argument("source", metavar="IN", type=click.Path(path_type=Path))
@click.argument("out", metavar="OUT.vef", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (and write nothing) when the trace has MPI calls that cannot be modelled.",
)
def convert(source: Path, out: Path, as_json: bool, strict: bool) -> None:
    """Convert the DUMPI trace IN (a directory of rank files, or one of them) to VEF.

    OUT.vef appears only once complete (written beside it, then renamed). MPI calls that
    cannot be modelled are listed under 'unsupported' (and in a warning on stderr) and left
    out of the VEF; --strict refuses such traces.

    \b
    Example:
      flitsim trace convert ../shared/testdata/traces/lulesh-64 lulesh-64.vef
    """
    from .traces import is_vef, trace_summary
    from .traces.dumpi import read_dumpi
    from .traces.vef import write_vef_file

    if is_vef(source):
        fail(f"{source}: already a VEF file (convert reads DUMPI traces)")
    if out.is_dir():
        fail(f"{out}: is a directory; give the VEF file to write")
    if not out.parent.is_dir():
        fail(f"{out.parent}: no such directory")
    converted = read_dumpi(source)
    left_out = _counts(converted.unsupported)
    if strict and converted.unsupported:
        fail(f"{source}: MPI calls that cannot be modelled: {left_out} (--strict)")
    write_vef_file(converted, out)
    summary = trace_summary(converted)
    if converted.unsupported:
        n = sum(converted.unsupported.values())
        click.echo(f"warning: {n} MPI calls could not be modelled and are not in {out}: "
                   f"{left_out}", err=True)
    if as_json:
        click.echo(json.dumps({"out": str(out), **summary}))
        return
    click.echo(f"wrote {out}")
    _print_summary(summary)


@trace.command("info")
@click.argument("file", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def info(file: Path, as_json: bool) -> None:
    """Summarise a VEF file (checking every line) or a DUMPI trace.

    \b
    Example:
      flitsim trace info lulesh-64.vef --json
    """
    from .traces import info as trace_info

    if not file.exists():
        fail(f"{file}: no such file or directory")
    summary = trace_info(file)
    if as_json:
        click.echo(json.dumps(summary))
        return
    _print_summary(summary)
