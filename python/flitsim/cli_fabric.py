"""Fabric commands of the ``flitsim`` command line: ``topo``, ``route``, ``ebb``,
``bandwidth`` and ``cac``.

A TOPO argument is a topology file (``.json``: flitsim's format; anything else: an
``ibnetdiscover`` dump or ``ibsim`` net file) or a generator spec such as ``torus:6x6``,
``kary-ntree:k=8,n=3``, ``xgft:h=2,m=10,10,w=5,5``, ``kautz:b=3,n=3,endpoints=4``,
``fly:k=4,n=3``, ``min:endpoints=128,radix=16`` (folded perfect-shuffle MIN) or
``random:switches=128,ports=32,endpoints=16,links=256,seed=1``.

* ``flitsim topo generate|info|convert`` builds, describes and converts topologies.
* ``flitsim route TOPO --engine E`` routes a topology, checks its channel dependency graph for
  deadlock freedom and reports path lengths; ``--out DIR`` writes the tables as OpenSM dumps
  (``opensm-lfts.dump``, ``guid2lid``, ``opensm-sl2vl.dump``, ``path-sl.txt``), which an
  experiment loads with ``routing.tables = "DIR"``.
* ``flitsim ebb`` computes the effective bisection bandwidth of a routing.
* ``flitsim bandwidth TOPO --flow SRC:DST:RATE ... --best-effort SRC:DST ...`` runs the
  bandwidth manager's admission control and prints each flow's verdict and IDT.
* ``flitsim cac TOPO --flows FILE --limit F`` runs the connection admission control of
  deadline-based QoS: QoS flows on their least occupied candidate path within a link-load
  limit, rejections naming the link that refused.

Errors print ``error: <message>`` on stderr and exit with status 2, without a traceback
(:mod:`flitsim._cli`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import click

from . import _core
from ._catalog import CYCLE_HEURISTICS, TOPOLOGY_FORMATS, engines_for_help
from ._cli import Group, fail

# Options that several commands take with the same meaning.
_out_file_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to FILE instead of standard output.",
)
_max_vls_option = click.option(
    "--max-vls",
    type=click.IntRange(1, 255),
    default=8,
    show_default=True,
    help="Data VLs the engine may use.",
)

def _write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a failure leaves no partial file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        fail(f"cannot write {path}: {e.strerror or e}")


def _format_for(out: Optional[Path], fmt: Optional[str]) -> str:
    """The explicit format, else the one the TOPO loader expects for ``out``'s extension."""
    if fmt is not None:
        return fmt
    if out is None or out.suffix.lower() == ".json":
        return "json"
    return "ibnetdiscover"


def _emit(text: str, out: Optional[Path]) -> None:
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        _write_text(out, text)
        click.echo(f"wrote {out}")


# ---------------------------------------------------------------------------------------- topo


@click.group("topo", cls=Group)
def topo() -> None:
    """Generate, describe and convert topologies.

    \b
    Examples:
      flitsim topo generate kary-ntree:k=4,n=3 --out fat.topo
      flitsim topo info fat.topo
      flitsim topo info min:endpoints=128,radix=16
      flitsim topo convert fabric.topo --to json --out fabric.json

    Generator specs: torus:6x6, mesh:4x4, kary-ntree:k=8,n=3, xgft:h=2,m=10,10,w=5,5,
    kautz:b=3,n=3,endpoints=4, random:switches=128,ports=32,endpoints=16,links=256,seed=1,
    fly:k=4,n=3 (folded butterfly) and min:endpoints=128,radix=16 (folded perfect-shuffle MIN).
    """


@topo.command("generate")
@click.argument("spec", metavar="SPEC")
@_out_file_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(TOPOLOGY_FORMATS),
    default=None,
    help="Output format (default: json; ibnetdiscover when --out does not end in .json).",
)
def topo_generate(spec: str, out: Optional[Path], fmt: Optional[str]) -> None:
    """Build the topology SPEC (e.g. torus:6x6) and print or write it.

    Generated switches and endpoints get deterministic GUIDs and LIDs.
    """
    _emit(_core.topo_convert(spec, _format_for(out, fmt)), out)


@topo.command("info")
@click.argument("topology", metavar="TOPO")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as one JSON object.")
def topo_info(topology: str, as_json: bool) -> None:
    """Print switches, endpoints, links, ports, connectivity and diameter of TOPO."""
    text = _core.topo_info_json(topology)
    if as_json:
        click.echo(text)
        return
    click.echo(format_topo_info(json.loads(text)))


@topo.command("convert")
@click.argument("topology", metavar="TOPO")
@click.option(
    "--to", "fmt", type=click.Choice(TOPOLOGY_FORMATS), required=True, help="Output format."
)
@_out_file_option
def topo_convert(topology: str, fmt: str, out: Optional[Path]) -> None:
    """Convert TOPO to flitsim JSON or an ibnetdiscover dump."""
    _emit(_core.topo_convert(topology, fmt), out)


def format_topo_info(i: Dict[str, Any]) -> str:
    """Render ``topo info`` facts for people."""
    lo, hi = i.get("ports_min"), i.get("ports_max")
    ports = f"{lo}" if lo == hi else f"{lo}..{hi}"
    diameter = i.get("diameter")
    rows = [
        ("topology", i.get("name", "")),
        ("shape", _shape(i.get("shape") or {})),
        ("switches", i.get("switches")),
        ("endpoints", i.get("endpoints")),
        ("inter-switch links", i.get("inter_switch_links")),
        ("ports per switch", ports),
        ("connected", "yes" if i.get("connected") else "no"),
        ("diameter", "-" if diameter is None else f"{diameter} switch hops"),
    ]
    return "\n".join(f"{k:<20}{v}" for k, v in rows)


def _shape(s: Dict[str, Any]) -> str:
    kind = s.get("kind", "irregular")
    if kind in ("torus", "mesh"):
        dims = "x".join(str(x) for x in s.get("dims", []))
        how = " (recognised from the links)" if s.get("detected") else ""
        return f"{kind} {dims}{how}"
    if kind == "fat_tree":
        if s.get("family") == "kary_n_tree":
            return f"{s.get('k')}-ary {s.get('n')}-tree"
        if s.get("family") == "xgft":
            m = ",".join(str(x) for x in s.get("m", []))
            w = ",".join(str(x) for x in s.get("w", []))
            return f"XGFT({s.get('h')}; {m}; {w})"
        return f"fat tree, {s.get('levels')} levels"
    return str(kind)


# --------------------------------------------------------------------------------------- route


@click.command("route")
@click.argument("topology", metavar="TOPO")
@click.option(
    "--engine",
    "-e",
    required=True,
    help=f"{engines_for_help()}.",
)
@_max_vls_option
@click.option(
    "--classes",
    type=click.IntRange(1, 255),
    default=1,
    show_default=True,
    help="Traffic classes (each gets its own VLs).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the OpenSM dumps into DIR (all four files or none).",
)
@click.option(
    "--guid2lid",
    "guid2lid",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Take LIDs from this OpenSM guid2lid file (nodes it does not list keep theirs or get "
    "one assigned).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--heuristic",
    type=click.Choice(CYCLE_HEURISTICS),
    default=None,
    help=f"dfsssp: which edge of a dependency cycle to cut (default {CYCLE_HEURISTICS[0]}).",
)
@click.option("--online", is_flag=True, help="dfsssp: first-fit layer assignment.")
@click.option(
    "--restarts",
    type=click.IntRange(0, 1024),
    default=None,
    help="dfsssp: first-fit restarts tried after the paper's layering, the fewest layers win "
    "(default 8; 0 = the paper's algorithm alone).",
)
@click.option(
    "--balance/--no-balance",
    default=None,
    help="dfsssp, lash: spread layers over spare VLs (default: on for dfsssp, off for lash).",
)
@click.option(
    "--max-layers",
    type=click.IntRange(1, 255),
    default=None,
    help="dfsssp, lash, nue: at most this many layers per class.",
)
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="GUID",
    help="updn: a root switch by node GUID (repeatable).",
)
@click.option(
    "--lmc",
    type=click.IntRange(0, 7),
    default=0,
    show_default=True,
    help="LID mask count: every CA port gets 2^L LIDs and every destination 2^L paths, "
    "distinct where the topology allows (minhop, updn, ftree, dmodk, sssp, dfsssp; dor gives "
    "every LID the same path; other engines refuse L > 0).",
)
@click.option(
    "--voqsw",
    is_flag=True,
    help="Replace the SL2VL tables and path SLs by VOQsw's (Gomez et al.), which emulate "
    "virtual output queues with --sls SLs and --vls VLs, inside the engine's layers (each "
    "engine VL split into --vls / engine VLs).",
)
@click.option(
    "--sls",
    default=None,
    metavar="N|full",
    help="--voqsw: SLs VOQsw may use (1..255; at most 16 with --out), or 'full' for as many "
    "as full VOQ needs (reported as sls_for_full). Default 8.",
)
@click.option(
    "--vls",
    type=click.IntRange(1, 255),
    default=None,
    help="--voqsw: VLs of the links (default: --max-vls).",
)
def route(
    topology: str,
    engine: str,
    max_vls: int,
    classes: int,
    out_dir: Optional[Path],
    guid2lid: Optional[Path],
    as_json: bool,
    heuristic: Optional[str],
    online: bool,
    restarts: Optional[int],
    balance: Optional[bool],
    max_layers: Optional[int],
    roots: Tuple[str, ...],
    lmc: int,
    voqsw: bool,
    sls: Optional[str],
    vls: Optional[int],
) -> None:
    """Route TOPO with an engine, check deadlock freedom and report path lengths.

    With --out, nodes without a LID (ibsim net files, say) get one first: LIDs the input has
    are kept, the rest assigned in order (switches, then CA ports, in file order). With
    --lmc L, CA ports get aligned blocks of 2^L LIDs (a file's kept LIDs must be aligned; a
    generator's are reassigned) and the dumps list every LID: LID base+k is path k.

    \b
    Examples:
      flitsim route torus:8x8 --engine dor --json
      flitsim route random:switches=64,ports=16,endpoints=4,links=160,seed=1 \\
          --engine dfsssp --out tables/
      flitsim route kary-ntree:k=4,n=3 --engine ftree --lmc 2 --out tables/
      flitsim route random:switches=16,ports=8,endpoints=4,links=32,seed=3 \\
          --engine updn --voqsw --sls 8 --vls 8 --out tables/
    """
    options: Dict[str, Any] = {"online": online}
    if heuristic is not None:
        options["heuristic"] = heuristic
    if restarts is not None:
        options["restarts"] = restarts
    if balance is not None:
        options["balance"] = balance
    if max_layers is not None:
        options["max_layers"] = max_layers
    if roots:
        options["roots"] = list(roots)
    if lmc:
        options["lmc"] = lmc
    if voqsw:
        options["voqsw"] = {"sls": _voqsw_sls(sls), "vls": vls if vls is not None else max_vls}
    elif sls is not None or vls is not None:
        raise click.UsageError("--sls and --vls go with --voqsw")
    text = _core.route_json(
        topology,
        engine,
        max_vls,
        classes,
        None if out_dir is None else str(out_dir),
        json.dumps(options),
        None if guid2lid is None else str(guid2lid),
    )
    if as_json:
        click.echo(text)
        return
    click.echo(format_route(json.loads(text)))


def _voqsw_sls(sls: Optional[str]) -> Any:
    """--sls as the options JSON wants it: a number or "full"."""
    if sls is None:
        return 8
    if sls.strip().lower() == "full":
        return "full"
    try:
        n = int(sls)
    except ValueError:
        raise click.BadParameter(
            f"{sls!r}: give a number of SLs or 'full'", param_hint="--sls"
        ) from None
    if not 1 <= n <= 255:
        raise click.BadParameter(f"{n}: give 1 to 255 SLs, or 'full'", param_hint="--sls")
    return n


def format_route(r: Dict[str, Any]) -> str:
    """Render a route report for people."""
    if r.get("layers") is not None:
        layers = str(r.get("layers"))
    elif not r.get("deadlock_free"):
        layers = "- (the routing is not deadlock-free)"
    else:
        layers = "unknown"
    lines = [
        f"{r.get('engine')} on {r.get('topology')}: {r.get('switches')} switches, "
        f"{r.get('endpoints')} endpoints",
        f"VLs used        {r.get('vls_used')} of {r.get('max_vls')} "
        f"({r.get('classes')} class(es) x {r.get('routing_sls')} routing SL(s))",
        f"layers needed   {layers}"
        + (" per class (VLs for deadlock freedom)" if r.get("layers") is not None else ""),
        f"deadlock-free   {'yes' if r.get('deadlock_free') else 'NO'}",
        f"hops            max {r.get('max_hops')}, mean {r.get('mean_hops', 0):.3f} "
        "(switch-to-switch links)",
        f"time            routing {r.get('runtime_seconds', 0):.3f} s, "
        f"verification {r.get('verify_seconds', 0):.3f} s",
    ]
    div = r.get("path_diversity")
    if div:
        lines.append(
            f"paths           {div.get('paths')} per destination (LMC {r.get('lmc')}): "
            f"{100 * div.get('disjoint_share', 0):.1f}% of pairs link-disjoint, "
            f"{100 * div.get('distinct_share', 0):.1f}% all distinct, "
            f"{div.get('mean_distinct_paths', 0):.2f} distinct on average"
        )
    v = r.get("voqsw")
    if v:
        full = f", {v.get('sls_for_full')} for full VOQ" if v.get("sls_for_full") else ""
        lines.append(
            f"VOQsw           {v.get('considered')} of {v.get('tuples')} 4-tuples "
            f"({v.get('percent', 0):.1f}%, {v.get('weighted_percent', 0):.1f}% of path hops), "
            f"{v.get('sls_used')} SL(s) on {v.get('vls')} VL(s){full}"
            + (" - full VOQ" if v.get("full") else "")
        )
    cycle = r.get("cycle")
    if cycle:
        hops = " -> ".join(f"{c['switch']}:{c['ib_port']}/vl{c['vl']}" for c in cycle)
        lines.append(f"cycle           {hops}")
    if r.get("lids_assigned"):
        lines.append(f"LIDs assigned   {r.get('lids_assigned')} (nodes the input gave none)")
    for path in r.get("files") or []:
        lines.append(f"wrote           {path}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- ebb


@click.command("ebb")
@click.argument("topology", metavar="TOPO")
@click.option(
    "--engine", "-e", default=None, help=f"Route TOPO with this engine: {engines_for_help()}."
)
@click.option(
    "--tables",
    "tables_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Use the OpenSM dumps in DIR (as `flitsim route --out` or OpenSM write them).",
)
@click.option(
    "--patterns", type=click.IntRange(1), default=100, show_default=True,
    help="Random perfect matchings to evaluate.",
)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=1, show_default=True)
@_max_vls_option
@click.option(
    "--all-to-all", "all_to_all", is_flag=True,
    help="Instead: flows on every switch output port under all-to-all traffic.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def ebb(
    topology: str,
    engine: Optional[str],
    tables_dir: Optional[Path],
    patterns: int,
    seed: int,
    max_vls: int,
    all_to_all: bool,
    as_json: bool,
) -> None:
    """Effective bisection bandwidth of a routing of TOPO (--engine E or --tables DIR).

    The mean, over random perfect matchings of the endpoints, of the bandwidth each flow gets
    when flows share links equally (1.0: every flow at full link speed).
    """
    if (engine is None) == (tables_dir is None):
        fail("give exactly one of --engine E and --tables DIR")
    if all_to_all:
        text = _core.link_loads_json(
            topology, engine, None if tables_dir is None else str(tables_dir), max_vls
        )
        if as_json:
            click.echo(text)
            return
        r = json.loads(text)
        click.echo(
            f"all-to-all on {r['topology']} ({r['endpoints']} endpoints, {r['engine']}): "
            f"switch-to-switch links carry at most {r['switch_links_max_flows']} flows, "
            f"{r['switch_links_mean_flows']:.1f} on average"
        )
        for link in sorted(r["links"], key=lambda x: -x["flows"])[:10]:
            kind = "endpoint" if link["to_endpoint"] else "switch"
            click.echo(
                f"  {link['switch']:<20} port {link['port']:>3} ({kind}): {link['flows']} flows"
            )
        return
    text = _core.ebb_json(
        topology,
        engine,
        None if tables_dir is None else str(tables_dir),
        patterns,
        seed,
        max_vls,
    )
    if as_json:
        click.echo(text)
        return
    r = json.loads(text)
    click.echo(
        f"effective bisection bandwidth {r['ebb_mean']:.4f} "
        f"(min {r['ebb_min']:.4f}, max {r['ebb_max']:.4f}) over {r['patterns']} patterns, "
        f"seed {r['seed']}; {r['engine']} on {r['topology']} ({r['endpoints']} endpoints)"
    )


# ----------------------------------------------------------------------------------- bandwidth


def _endpoints(
    text: str, option: str, parts: int, link_rate: Optional[str] = None
) -> Tuple[Any, ...]:
    """``SRC:DST`` (parts 2) or ``SRC:DST:RATE`` (parts 3) of ``option``, or a user error. RATE
    is flits/cycle, or with ``link_rate`` also a rate with a unit (its share of the link)."""
    fields = text.split(":")
    shape = "SRC:DST:RATE" if parts == 3 else "SRC:DST"
    try:
        if len(fields) != parts:
            raise ValueError
        src, dst = int(fields[0]), int(fields[1])
        if src < 0 or dst < 0:
            raise ValueError
        if parts == 2:
            return (src, dst)
    except ValueError:
        fail(f"{option} {text}: expected {shape} (endpoint indices, a rate in flits/cycle)")
    rate = fields[2]
    try:
        return (src, dst, float(rate))
    except ValueError:
        pass
    if link_rate is None:
        fail(
            f"{option} {text}: the rate `{rate}` is not a number of flits/cycle (a rate with "
            "a unit, such as 40MB/s, needs --link-rate)"
        )
    try:
        return (src, dst, _core.rate_per_link(rate, link_rate))
    except ValueError as e:
        fail(f"{option} {text}: {e}")


@click.command("bandwidth")
@click.argument("topology", metavar="TOPO")
@click.option(
    "--flow", "flows", multiple=True, metavar="SRC:DST:RATE",
    help="A premium flow reserving RATE flits/cycle (1.0: a whole link), in order; with "
    "--link-rate RATE may also be a rate such as 40MB/s or 2Gb/s.",
)
@click.option(
    "--link-rate", "link_rate", default=None, metavar="RATE",
    help="The links' rate (e.g. 1.28Gb/s): --flow rates with a unit are taken as shares of it.",
)
@click.option(
    "--best-effort", "best_effort", multiple=True, metavar="SRC:DST",
    help="A best-effort flow (shares the surplus on its path); after the premium flows.",
)
@click.option(
    "--engine", "-e", default=None,
    help=f"Route TOPO with this engine (default: the topology's): {engines_for_help()}.",
)
@click.option(
    "--mtu", type=click.FloatRange(0, min_open=True), default=16.0, show_default=True,
    help="Packet size, flits (B_max = MTU / T).",
)
@click.option(
    "--dispatch-time", "dispatch_time", type=click.FloatRange(0, min_open=True), default=None,
    help="T, the least cycles between two dispatches of a NIC (default: the MTU, so B_max is "
    "one link).",
)
@click.option(
    "--node-capacity", "node_capacity", type=click.FloatRange(0, min_open=True), default=None,
    help="What a node may send and receive in total, flits/cycle (default: its link).",
)
@_max_vls_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def bandwidth(
    topology: str,
    flows: Tuple[str, ...],
    best_effort: Tuple[str, ...],
    engine: Optional[str],
    mtu: float,
    dispatch_time: Optional[float],
    node_capacity: Optional[float],
    link_rate: Optional[str],
    max_vls: int,
    as_json: bool,
) -> None:
    """Admission control of the bandwidth manager over a routing of TOPO.

    Premium flows are admitted in order when the source node (flows from or to it), every
    switch output port on the path and the destination node keep within capacity (Gulati
    2001, §3.3.1); each gets IDT = T · B_max / RATE cycles. Best-effort flows share the
    surplus equally at every node and port, and get the least share over their path.
    """
    if not flows and not best_effort:
        fail("give at least one --flow SRC:DST:RATE or --best-effort SRC:DST")
    if link_rate is not None:
        try:
            _core.rate_per_link(link_rate, link_rate)
        except ValueError as e:
            fail(f"--link-rate {link_rate}: {e}")
    premium = [_endpoints(f, "--flow", 3, link_rate) for f in flows]
    be = [_endpoints(f, "--best-effort", 2) for f in best_effort]
    text = _core.bandwidth_json(
        topology,
        premium,
        be,
        engine,
        mtu if dispatch_time is None else dispatch_time,
        mtu,
        node_capacity,
        max_vls,
    )
    if as_json:
        click.echo(text)
        return
    r = json.loads(text)
    click.echo(
        f"{r['topology']} ({r['endpoints']} endpoints, {r['engine']}); T = {r['dispatch_time']:g} "
        f"cycles, MTU = {r['mtu']:g} flits, B_max = {r['b_max']:.4g} flits/cycle"
    )
    for f in r["flows"]:
        what = "best effort" if f["best_effort"] else f"reserve {f['requested']:.4g}"
        if f["admitted"]:
            idt = "no share" if f["idt"] is None else f"IDT {f['idt']:.4g} cycles"
            verdict = f"rate {f['granted']:.4g}, {idt}"
        else:
            verdict = f"refused: {f['refused_by']['message']}"
        click.echo(f"  {f['src']:>4} -> {f['dst']:<4} {what:<16} {verdict}")


# ----------------------------------------------------------------------------------------- cac


@click.command("cac")
@click.argument("topology", metavar="TOPO")
@click.option(
    "--flows", "flows_file", required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML ([[flow]] tables) or JSON ({\"flow\": [...]}) file of flows: src, dst, rate "
    "(flits/cycle), optional name and qos (default true; false: unregulated).",
)
@click.option(
    "--limit", type=float, default=0.7, show_default=True,
    help="Largest share of a link's capacity QoS flows may reserve (0 < F <= 1).",
)
@click.option(
    "--engine", "-e", default=None,
    help=f"Route TOPO with this engine (default: the topology's): {engines_for_help()}.",
)
@click.option(
    "--lmc", type=click.IntRange(0, 7), default=0, show_default=True,
    help="LID mask count: 2^L candidate paths per destination (minhop, updn, ftree, dmodk, "
    "sssp, dfsssp).",
)
@_max_vls_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def cac(
    topology: str,
    flows_file: Path,
    limit: float,
    engine: Optional[str],
    lmc: int,
    max_vls: int,
    as_json: bool,
) -> None:
    """Connection admission control of QoS flows over a routing of TOPO.

    QoS flows are admitted in file order when every link of one of their candidate paths
    (the fabric's paths for the pair, --lmc) stays within --limit of its capacity, injection
    and ejection links included; each gets the least occupied such path (Martinez et al.
    2008, section 4.1). A rejection names the link that refused. Flows with qos = false are
    unregulated: neither admitted nor counted.

    \b
    Examples:
      flitsim cac min:endpoints=128,radix=16 --flows flows.toml --lmc 3 --json
      flitsim cac kary-ntree:k=4,n=2 --flows flows.json --limit 0.5
    """
    text = _core.cac_json(topology, str(flows_file), engine, lmc, limit, max_vls)
    if as_json:
        click.echo(text)
        return
    click.echo(format_cac(json.loads(text)))


def format_cac(r: Dict[str, Any]) -> str:
    """Render a ``flitsim cac`` result for people."""
    paths = r.get("paths", 1)
    lines = [
        f"{r.get('topology')} ({r.get('endpoints')} endpoints, {r.get('engine')}, {paths} "
        f"path{'s' if paths != 1 else ''} per destination); limit {r.get('limit', 0):g}",
        f"admitted {len(r.get('admitted', []))}, rejected {len(r.get('rejected', []))}, "
        f"unregulated {len(r.get('unregulated', []))}",
    ]
    rows = []
    for a in r.get("admitted", []):
        rows.append((a, f"path {a['path']}, max load {a['max_load']:.4g}"))
    for x in r.get("rejected", []):
        rows.append((x, f"rejected: {x['message']}"))
    for u in r.get("unregulated", []):
        rows.append((u, "unregulated"))
    rows.sort(key=lambda row: row[0]["flow"])
    for f, verdict in rows:
        name = f.get("name") or "-"
        lines.append(
            f"  {f['flow']:>4} {name:<12} {f['src']:>4} -> {f['dst']:<4} {f['rate']:<8.4g} "
            f"{verdict}"
        )
    links = sorted(r.get("links", []), key=lambda link: -link["load"])
    if links:
        lines.append("most loaded links:")
        for link in links[:10]:
            lines.append(f"  {link['load']:.4g} ({link['flows']} flows)  {link['name']}")
    return "\n".join(lines)
