"""``flitsim qos``: QoS table tools for fabric administrators.

``flitsim qos dtable`` builds a DTable arbitration table with the configuration methodology
and bandwidth correction of Cano-Cano et al., *Providing quality of service in Omni-Path
networks* (J. Supercomputing 2022, §3.3.2–3.3.3): each SL gets table entries no further apart
than its maximum distance (latency), entry weights that deliver its bandwidth share, and the
rounding error is corrected from the end of the table.
"""

from __future__ import annotations

import json
from typing import List, Tuple

import click

from . import _core
from ._cli import Group
from ._core import FlitsimError
from ._format import fixed, row

SlSpec = Tuple[str, int, int, float]

# Upper bounds of the DTable arguments: far above real tables (Omni-Path arbitration tables
# have at most a few hundred entries, weights fit a byte), low enough that a typo cannot
# make the command run for minutes or print megabytes.
MAX_ENTRIES = 4096
MAX_GMTU = 1024
MAX_WEIGHT = 255
MAX_POOL_FACTOR = 64
MAX_UNIT_BYTES = 65536


def parse_sl(text: str) -> SlSpec:
    """Parse ``NAME:MAX_DISTANCE:MTU:SHARE`` (MTU in units, share a fraction or a percent).

    Raises :class:`flitsim.FlitsimError` naming the option and what is wrong.

    >>> parse_sl("VO:2:2:0.1"), parse_sl("BK:16:16:5%")
    (('VO', 2, 2, 0.1), ('BK', 16, 16, 0.05))
    """
    parts = text.split(":")
    if len(parts) != 4 or not parts[0]:
        raise FlitsimError(f"--sl {text!r}: expected NAME:MAX_DISTANCE:MTU:SHARE, e.g. VO:2:2:0.1")
    name, distance, mtu, share = parts
    try:
        d, m = int(distance), int(mtu)
    except ValueError:
        raise FlitsimError(f"--sl {text!r}: MAX_DISTANCE and MTU must be whole numbers") from None
    if not 1 <= d <= MAX_ENTRIES:
        raise FlitsimError(f"--sl {text!r}: MAX_DISTANCE must be in 1..{MAX_ENTRIES}, not {d}")
    if not 1 <= m <= MAX_GMTU:
        raise FlitsimError(f"--sl {text!r}: MTU must be in 1..{MAX_GMTU} units, not {m}")
    try:
        s = float(share.rstrip("%")) / (100.0 if share.endswith("%") else 1.0)
    except ValueError:
        raise FlitsimError(f"--sl {text!r}: SHARE must be a number") from None
    return name, d, m, s


def dtable(
    sls: List[SlSpec],
    entries: int = 128,
    gmtu: int = 16,
    w: int = 8,
    k: int = 2,
    unit_bytes: int = 64,
) -> dict:
    """Configure a DTable; returns the engine's description of it. Arguments outside the
    bounds of ``flitsim qos dtable`` (``MAX_ENTRIES`` …) raise :class:`FlitsimError`.

    >>> t = dtable([("VO", 2, 2, 0.1), ("VI", 4, 4, 0.3), ("CL", 8, 8, 0.5),
    ...             ("BE", 16, 16, 0.05), ("BK", 16, 16, 0.05)])
    >>> t["total_weight"], [s["total_weight"] for s in t["sls"]]
    (4160, [416, 1248, 2080, 208, 208])
    """
    for name, value, top in (("entries", entries, MAX_ENTRIES), ("gmtu", gmtu, MAX_GMTU),
                             ("w", w, MAX_WEIGHT), ("k", k, MAX_POOL_FACTOR),
                             ("unit_bytes", unit_bytes, MAX_UNIT_BYTES)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise FlitsimError(f"DTable {name} must be an integer in 1..{top}, not {value!r}")
    return json.loads(_core.dtable_json(entries, gmtu, w, k, unit_bytes, list(sls)))


@click.group(cls=Group)
def qos() -> None:
    """QoS tables: DTable arbitration tables for Omni-Path-like fabrics."""


@qos.command("dtable")
@click.option(
    "--entries", "-n", type=click.IntRange(1, MAX_ENTRIES), default=128, show_default=True,
    help="Table entries N.",
)
@click.option(
    "--gmtu", type=click.IntRange(1, MAX_GMTU), default=16, show_default=True,
    help="Global MTU, in units.",
)
@click.option(
    "--w", "w", type=click.IntRange(1, MAX_WEIGHT), default=8, show_default=True,
    help="Largest entry weight, in GMTUs.",
)
@click.option(
    "--k", "k", type=click.IntRange(1, MAX_POOL_FACTOR), default=2, show_default=True,
    help="Pool factor (pool = N·GMTU·k).",
)
@click.option(
    "--sl",
    "sls",
    multiple=True,
    required=True,
    metavar="NAME:MAX_DISTANCE:MTU:SHARE",
    help="One SL: the largest distance between its entries (1..N), its MTU in units "
    "(1..GMTU), its share (a fraction, or a percent with %).",
)
@click.option(
    "--unit-bytes", type=click.IntRange(1, MAX_UNIT_BYTES), default=64, show_default=True,
    help="Bytes per unit.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def dtable_command(
    entries: int, gmtu: int, w: int, k: int, sls, unit_bytes: int, as_json: bool
) -> None:
    """Build a DTable arbitration table and print it with each SL's achieved share.

    \b
    Example (Table 10 of the paper):
      flitsim qos dtable --entries 128 --gmtu 16 --w 8 --k 2 \\
          --sl VO:2:2:0.1 --sl VI:4:4:0.3 --sl CL:8:8:0.5 --sl BE:16:16:0.05 --sl BK:16:16:0.05
    """
    specs = [parse_sl(s) for s in sls]
    table = dtable(specs, entries, gmtu, w, k, unit_bytes)
    if as_json:
        click.echo(json.dumps(table, indent=2))
        return
    click.echo(
        f"DTable: {entries} entries, GMTU {gmtu} units of {unit_bytes} B, w = {w}, k = {k}, "
        f"pool {table['pool']}, total weight {table['total_weight']}"
    )
    header = ("SL", "entries", "weights", "total", "min phi", "max phi", "asked", "before",
              "after")
    widths = (8, 8, 12, 8, 9, 9, 8, 8, 8)
    click.echo("  " + row(header, widths, sep=""))
    for s in table["sls"]:
        ws = sorted(set(s["weights"]))
        weights = str(ws[0]) if len(ws) == 1 else f"{ws[0]}-{ws[-1]}"
        cells = (s["name"], str(s["entries"]), weights, str(s["total_weight"])) + tuple(
            fixed(s[k], 4) for k in ("min_phi", "max_phi", "requested_phi", "raw_phi", "phi")
        )
        click.echo("  " + row(cells, widths, sep=""))
    layout = " ".join(f"{name or '-'}:{weight}" for name, weight in table["table"])
    click.echo("  table: " + layout)
