"""``flitsim view``: draw the fabric (python/flitsim/view.py) from a run, an experiment or a
topology and the routing of an engine.

Errors print ``error: <message>`` naming the argument or option and exit with status 2
(:mod:`flitsim._cli`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import click

from . import _core, _read_config
from ._catalog import ENGINE_NAMES, engines_for_help
from ._cli import fail
from ._core import FlitsimError
from .view import (
    Key,
    Scene,
    Topology,
    add_highlights,
    build_scene,
    layout,
    load_values,
    result_buffered,
    result_frames,
    result_values,
    route_hops,
    write,
)

FORMATS = (".svg", ".png", ".html", ".htm")


@click.command("view")
@click.argument("target", metavar="RESULT|EXPERIMENT|TOPO")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="FILE.svg, FILE.png (needs matplotlib) or FILE.html (one self-contained page; with a "
    "per-port time series, a slider over its bins). Default: NAME.svg here.",
)
@click.option(
    "--engine", "-e", "engines", multiple=True,
    help=f"TOPO: route it with this engine ({engines_for_help()}); repeat to draw engines "
    "side by side on one colour scale.",
)
@click.option(
    "--tables", "tables_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="TOPO: use the OpenSM dumps in DIR instead of an engine.",
)
@click.option(
    "--load", type=click.Choice(["uniform", "hotspot"]), default=None,
    help="TOPO: colour links by the flows the tables put on them: uniform = all-to-all (the "
    "link loads of `flitsim ebb --all-to-all`), hotspot = every endpoint to --hotspot.",
)
@click.option("--hotspot", type=click.IntRange(0), default=0, show_default=True,
              help="--load hotspot: the endpoint every other one sends to.")
@click.option("--route", "routes", multiple=True, metavar="SRC:DST",
              help="TOPO: draw the path from endpoint SRC to DST, VL per hop (repeatable).")
@click.option("--cycle", is_flag=True,
              help="TOPO: draw the channel-dependency cycle of a routing that is not "
              "deadlock-free, channels and VLs named.")
@click.option("--metric", type=click.Choice(["utilisation", "flits"]), default="utilisation",
              show_default=True,
              help="RESULT/EXPERIMENT: colour by utilisation or by flits sent in the window.")
@click.option("--vl", type=click.IntRange(0, 255), default=None,
              help="RESULT/EXPERIMENT: flits on this VL only (implies --metric flits).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="EXPERIMENT: override one config key (repeatable).")
@click.option("--experiment", "experiment", type=click.Path(dir_okay=False, path_type=Path),
              default=None,
              help="RESULT: the experiment file that produced it (its topology is drawn).")
@click.option("--topo", "topo_spec", default=None,
              help="RESULT: its topology (file or generator spec), when the result's name of "
              "it is not enough.")
@click.option("--endpoints", type=click.Choice(["auto", "each", "grouped", "hidden"]),
              default="auto", show_default=True,
              help="Draw every endpoint, one marker per switch (largest value of its members), "
              "or none; auto: every endpoint up to 128.")
@click.option("--max-vls", type=click.IntRange(1, 255), default=8, show_default=True,
              help="Data VLs the engine may use.")
def view(
    target: str,
    out: Optional[Path],
    engines: Tuple[str, ...],
    tables_dir: Optional[Path],
    load: Optional[str],
    hotspot: int,
    routes: Tuple[str, ...],
    cycle: bool,
    metric: str,
    vl: Optional[int],
    sets: Tuple[str, ...],
    experiment: Optional[Path],
    topo_spec: Optional[str],
    endpoints: str,
    max_vls: int,
) -> None:
    """Draw the fabric: links per direction coloured by load, routes, deadlock cycles.

    \b
    RESULT      the JSON of `flitsim run X.toml --json`: links coloured by the ports
                table (utilisation, or flits per VL with --vl).
    EXPERIMENT  an experiment .toml: run first, then drawn as a result.
    TOPO        a topology file or generator spec (torus:6x6, kary-ntree:k=4,n=3, ...),
                with --engine E for --load, --route and --cycle.

    \b
    Examples:
      flitsim view run.json --out run.svg
      flitsim view torus:6x6 --engine minhop --cycle --out cycle.png
      flitsim view kary-ntree:k=4,n=3 --engine ftree --engine minhop --load uniform
      flitsim view torus:8x8 --engine dor --route 0:27 --out route.svg
    """
    if out is not None and out.suffix.lower() not in FORMATS:
        fail(f"--out {out}: give a file ending in .svg, .png or .html")
    if vl is not None:
        metric = "flits"
    kind, data = _classify(target)
    routing = bool(engines or tables_dir or load or routes or cycle)
    if kind in ("result", "experiment"):
        if routing:
            fail(f"{target}: --engine, --tables, --load, --route and --cycle draw the routing "
                 "of a topology; give TOPO (a topology file or spec), not a result")
        html = out is not None and out.suffix.lower() in (".html", ".htm")
        if kind == "experiment":
            result, topo = _run_experiment(Path(target), list(sets), html)
        else:
            if sets:
                fail("--set goes with an EXPERIMENT (.toml), not a result")
            result = data
            topo = _result_topology(target, result, experiment, topo_spec)
        scenes = [result_scene(result, topo, metric, vl, endpoints, html)]
        name = result.get("topology") or topo.name
    else:
        if sets or experiment or topo_spec:
            fail("--set, --experiment and --topo go with a RESULT or EXPERIMENT, not TOPO")
        if vl is not None or metric != "utilisation":
            fail("--metric and --vl colour a RESULT or EXPERIMENT; TOPO takes --load")
        if engines and tables_dir:
            fail("give --engine E or --tables DIR, not both")
        for e in engines:
            if e not in ENGINE_NAMES:
                fail(f"--engine {e}: unknown routing engine; choose from {engines_for_help()}")
        if routing and not (engines or tables_dir):
            fail("--load, --route and --cycle need --engine E or --tables DIR")
        pairs = [_pair(r) for r in routes]
        topo = _load_topology(target)
        scenes = []
        choices: Sequence[Optional[str]] = engines or [None]
        for engine in choices:
            scenes.append(topo_scene(target, topo, engine, tables_dir, max_vls, load, hotspot,
                                      pairs, cycle, endpoints))
        name = topo.name
    if out is None:
        out = Path(re.sub(r"[^A-Za-z0-9_.-]+", "_", name or "view") + ".svg")
    write(scenes, out, title=f"flitsim view: {target}")
    click.echo(f"wrote {out}")


# ------------------------------------------------------------------------------------ inputs


def _classify(target: str) -> Tuple[str, Any]:
    """``("result", dict)``, ``("experiment", None)`` or ``("topo", None)``."""
    p = Path(target)
    suffix = p.suffix.lower()
    if not p.exists():
        if suffix in (".json", ".toml"):
            fail(f"RESULT|EXPERIMENT {target}: no such file")
        return "topo", None
    if p.is_dir():
        fail(f"{target}: is a directory; give a result (.json), an experiment (.toml) or a "
             "topology")
    if suffix == ".toml":
        return "experiment", None
    if suffix == ".json":
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            fail(f"RESULT {target}: not JSON ({e})")
        if isinstance(d, dict) and d.get("format") == "flitsim-topology":
            return "topo", None
        if not isinstance(d, dict) or "ports" not in d and "config_hash" not in d:
            fail(f"RESULT {target}: neither a flitsim result (`flitsim run --json`) nor a "
                 "topology")
        return "result", d
    return "topo", None


def _load_topology(spec: str, what: str = "TOPO") -> Topology:
    try:
        return Topology.from_json(_core.topo_json(spec))
    except FlitsimError as e:
        fail(f"{what} {spec}: {e}")


def _pair(text: str) -> Tuple[int, int]:
    fields = text.split(":")
    try:
        if len(fields) != 2:
            raise ValueError
        src, dst = int(fields[0]), int(fields[1])
        if src < 0 or dst < 0:
            raise ValueError
    except ValueError:
        fail(f"--route {text}: expected SRC:DST (two endpoint indices, e.g. 0:5)")
    return src, dst


_NAMED = [
    (re.compile(r"^(torus|mesh)-(\d+(?:x\d+)*)$"), lambda m: f"{m[1]}:{m[2]}"),
    (re.compile(r"^(\d+)-ary-(\d+)-tree$"), lambda m: f"kary-ntree:k={m[1]},n={m[2]}"),
]


def _result_topology(target: str, result: Dict[str, Any], experiment: Optional[Path],
                     topo_spec: Optional[str]) -> Topology:
    """The topology a result ran on: from --experiment, --topo, or the name it carries."""
    if experiment is not None and topo_spec is not None:
        fail("give --experiment or --topo, not both")
    if experiment is not None:
        text, origin = _read_config(experiment)
        try:
            topo = Topology.from_json(_core.experiment_topology_json(text, origin, []))
        except FlitsimError as e:
            fail(f"--experiment {experiment}: {e}")
        how = f"--experiment {experiment}"
    elif topo_spec is not None:
        topo = _load_topology(topo_spec, "--topo")
        how = f"--topo {topo_spec}"
    else:
        name = str(result.get("topology") or "")
        spec = next((f(m) for rx, f in _NAMED for m in [rx.match(name)] if m), None)
        if spec is None:
            fail(f"RESULT {target}: the result names its topology only as '{name}'; give "
                 "--experiment X.toml (the experiment that made it) or --topo TOPO")
        topo = _load_topology(spec, f"RESULT {target}: its topology")
        how = f"its topology name ('{name}' read as {spec}); give --experiment X.toml"
    names = set(topo.switches)
    ports = result.get("ports") or []
    unknown = [r["switch"] for r in ports if r["switch"].split("/")[0] not in names]
    endpoints = result.get("endpoints")
    if unknown or (endpoints is not None and endpoints != len(topo.ep_switch)):
        fail(f"RESULT {target}: does not match the topology from {how} "
             f"({len(topo.ep_switch)} endpoints, switch {unknown[0] if unknown else '-'} "
             "unknown)")
    return topo


def _run_experiment(path: Path, sets: List[str], html: bool) -> Tuple[Dict[str, Any], Topology]:
    """Run the experiment (with the ports table; for HTML with per-port bins) and return its
    result and topology."""
    from . import _run_text
    from .traces.cache import experiment_sets

    text, origin = _read_config(path)
    sets = sets + ["run.per_port_stats=true"]
    cfg = json.loads(_core.resolve_json(text, origin, sets))["config"]
    if html:
        run = cfg.get("run", {})
        if run.get("timeseries_bin") is None:
            span = int(run.get("warmup", 0)) + int(run.get("measure", 0))
            sets.append(f"run.timeseries_bin={max(1, span // 40)}")
        sets.append("run.port_timeseries=true")
    result = json.loads(_run_text(text, origin, sets, None))
    result["_pattern"] = (cfg.get("traffic") or {}).get("pattern")
    topo = Topology.from_json(
        _core.experiment_topology_json(text, origin, experiment_sets(text, origin, sets)))
    return result, topo


# ------------------------------------------------------------------------------------ scenes


def result_scene(result: Dict[str, Any], topo: Topology, metric: str, vl: Optional[int],
                  endpoints: str, html: bool) -> Scene:
    if not result.get("ports"):
        fail("the result has no ports table (it ran with run.per_port_stats = false); rerun "
             "it with the table to draw it")
    values = result_values(result, metric, vl)
    if metric == "utilisation":
        legend, vmax = "utilisation (window)", 1.0
    else:
        legend, vmax = ("flits sent in the window" if vl is None else f"flits on VL {vl}"), None
    frames: Optional[List[Dict[Key, float]]] = None
    labels: List[str] = []
    notes = []
    if html:
        frames, labels = result_frames(result, topo)
        if frames:
            legend = "utilisation (window; slider: per bin)"
            vmax = 1.0
        else:
            frames = None
            notes.append("no per-port time series in this result (run.timeseries_bin and "
                         "run.port_timeseries = true): no slider")
    marked = []
    dl = result.get("deadlock")
    if dl:
        marked = sorted({b["switch"] for b in dl.get("blocked", [])})
        notes.append(f"deadlock at cycle {dl.get('cycle')}: {len(marked)} switch(es) holding "
                     "blocked buffers marked red")
    pattern = result.get("_pattern")
    title = (f"{result.get('routing', '')} on {result.get('topology', topo.name)}"
             + (f", {pattern} traffic" if isinstance(pattern, str) else "")
             + f", offered {_num(result.get('offered_load'))}, accepted "
             f"{_num(result.get('accepted_load'))}")
    buffered, buffered_frames = result_buffered(result)
    if buffered is not None:
        notes.append("circles: the mean flits each switch buffered (input and output buffers) "
                     "over the window" + ("; per bin on the slider" if frames else ""))
    scene = build_scene(topo, values, title=title, legend=legend, vmax=vmax, endpoints=endpoints,
                        marked=marked, frames=frames, frame_labels=labels,
                        switch_values=buffered,
                        switch_frames=buffered_frames if frames else None)
    scene.notes += notes + [
        "each link drawn per direction, offset to the right of travel; endpoint links: "
        "switch to endpoint coloured by the ports table, endpoint to switch not measured"]
    return scene


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:.3g}"


def topo_scene(spec: str, topo: Topology, engine: Optional[str], tables_dir: Optional[Path],
                max_vls: int, load: Optional[str], hotspot: int,
                pairs: Sequence[Tuple[int, int]], cycle: bool, endpoints: str) -> Scene:
    tables = None if tables_dir is None else str(tables_dir)
    n = len(topo.ep_switch)
    values: Dict[Key, float] = {}
    legend = "flows"
    top = 0.0
    who = engine or ("tables" if tables else "")
    title = f"{who} on {topo.name}" if who else topo.name
    if load == "hotspot" and hotspot >= n:
        fail(f"--hotspot {hotspot}: {topo.name} has {n} endpoints (0..{n - 1})")
    if load is not None:
        values = load_values(spec, engine, tables, max_vls, load, hotspot, n)
        legend = ("flows per link, all-to-all" if load == "uniform"
                  else f"flows per link, all to endpoint {hotspot}")
        # The scale is the switch-to-switch links': every endpoint link of all-to-all traffic
        # carries n - 1 flows, which would wash the fabric's own differences out.
        inner = {(topo.switches[a], pa) for a, pa, _, _, _ in topo.links}
        inner |= {(topo.switches[b], pb) for _, _, b, pb, _ in topo.links}
        top = max((v for k, v in values.items() if k[0] == "port" and (k[1], k[2]) in inner),
                  default=0.0)
        title += f", {load}: max {top:.0f} flows per switch link"
    lay = layout(topo)
    # With a load, a link no flow crosses carries 0 (not "no data").
    scene = build_scene(topo, values, title=title, legend=legend, endpoints=endpoints, lay=lay,
                        vmax=(top or 1.0) if values else 1.0,
                        no_data=0.0 if load is not None else None)
    if load is not None:
        scene.notes.append("colour scale: switch-to-switch links; endpoint links above it are "
                           "drawn in its top colour")
    if pairs:
        for src, dst in pairs:
            for e, name in ((src, "SRC"), (dst, "DST")):
                if e >= n:
                    fail(f"--route {src}:{dst}: {name} {e} does not exist ({topo.name} has {n} "
                         f"endpoints, 0..{n - 1})")
        for p in route_hops(spec, engine, tables, max_vls, pairs):
            hops = p["hops"]
            marks = [(h["switch"], int(h["out_port"]), f"vl{h['vl']}") for h in hops]
            if marks:
                marks[0] = (marks[0][0], marks[0][1], f"{p['src']}→{p['dst']} vl{hops[0]['vl']}")
            add_highlights(scene, topo, lay, marks)
            click.echo(f"route {p['src']} -> {p['dst']}: " + " -> ".join(
                f"{h['switch']}:{h['out_port']}/vl{h['vl']}" for h in hops))
        scene.title += ", route" + ("s " if len(pairs) > 1 else " ") + ", ".join(
            f"{s}→{d}" for s, d in pairs)
    if cycle:
        r = json.loads(_core.route_json(spec, engine or "", max_vls) if engine else
                       _fail_cycle_tables())
        ring = r.get("cycle") or []
        if r.get("deadlock_free") or not ring:
            scene.notes.append(f"{who}: the routing is deadlock-free; no cycle to draw")
            click.echo(f"{who} on {topo.name} is deadlock-free: no cycle")
        else:
            marks = [(c["switch"], int(c["port"]), f"c{i + 1} vl{c['vl']}")
                     for i, c in enumerate(ring)]
            add_highlights(scene, topo, lay, marks)
            scene.title += f", dependency cycle of {len(ring)} channels"
            click.echo(f"cycle ({len(ring)} channels): " + " -> ".join(
                f"{c['switch']}:{c['port']}/vl{c['vl']}" for c in ring))
            scene.notes.append(
                "dependency cycle, each channel waiting for the next: " + ", ".join(
                    f"c{i + 1} = {c['switch']} port {c['port']} VL {c['vl']}"
                    for i, c in enumerate(ring)) + ", back to c1")
    scene.notes.append("each link drawn per direction, offset to the right of travel")
    return scene


def _fail_cycle_tables() -> str:
    fail("--cycle needs --engine E (the dependency check runs on an engine's routing)")
