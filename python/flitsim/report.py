"""A self-contained HTML report of a sweep.

:func:`write_report` writes one HTML file (``OUT/report.html`` by default) holding the sweep's
description (configuration, varied keys, seeds, flitsim version), the four figures of
:mod:`flitsim.plot` as embedded PNG images, and two tables: the summary per sweep point and the
per-service-level detail, both as means over seeds. The page has no external references (no
scripts, style sheets, fonts or image files), so it can be mailed or archived on its own.

It also shows the fabric of the most loaded point (highest mean offered load) drawn by
:mod:`flitsim.view`, links coloured by utilisation. Sweep datasets keep no per-port table, so
that point is run once more for the picture (the sweep's configuration, overrides and point
values, its first seed, with ``run.per_port_stats = true``); ``view=False`` leaves it out.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import math
from html import escape
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._format import short_label, with_ci
from .plot import PLOT_NAMES, figures
from .stats import (
    CONFIDENCE,
    directory_of,
    load,
    seeds_of,
    spec_of,
    summarize,
    summarize_per_sl,
    vary_of,
)

__all__ = ["render_report", "write_report"]

PLOT_TITLES = {
    "latency_vs_load": "Latency vs accepted load",
    "accepted_vs_offered": "Accepted vs offered load",
    "sl_throughput": "Share of accepted traffic per service level",
    "latency_cdf": "Latency distribution",
}
PLOT_CAPTIONS = {
    "latency_vs_load": (
        "Mean end-to-end latency (generation to tail delivered) against accepted load, one "
        "line per service level; the band is the {conf} confidence interval of the mean over "
        "seeds. Hollow markers: saturated."
    ),
    "accepted_vs_offered": (
        "Accepted against offered load, in total and per service level. Points below the "
        "dashed y = x line lose throughput: the network or that class has saturated."
    ),
    "sl_throughput": (
        "Each service level's share of the accepted traffic per point; the black tick is its "
        "share of the offered traffic. A class above its tick takes more than it offers, "
        "one below it is starved."
    ),
    "latency_cdf": (
        "Cumulative distribution of end-to-end latency per service level, histograms of all "
        "seeds merged, at the highest load that did not saturate and at the highest load."
    ),
}

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.meta { color: #666; margin-top: 0; }
pre { background: #f6f6f6; border: 1px solid #e2e2e2; padding: 0.8em; overflow-x: auto;
      font-size: 0.85em; }
dl.spec { display: grid; grid-template-columns: max-content auto; gap: 0.25em 1.2em; }
dl.spec dt { font-weight: 600; }
dl.spec dd { margin: 0; }
figure { margin: 1em 0 2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; margin-top: 0.3em; }
table { border-collapse: collapse; font-size: 0.88em; margin: 0.5em 0 1em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; }
th { background: #f0f0f0; text-align: center; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.sat td { background: #fff4f0; }
.note { color: #666; font-size: 0.88em; }
"""


def _png_data_uri(fig: Any) -> str:
    from .plot import DPI

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _cell(text: str, numeric: bool = False) -> str:
    cls = ' class="num"' if numeric else ""
    return f"<td{cls}>{escape(text)}</td>"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], row_class=None) -> str:
    out = ["<table>", "<thead><tr>"]
    out.extend(f"<th>{escape(h)}</th>" for h in header)
    out.append("</tr></thead>", )
    out.append("<tbody>")
    for i, row in enumerate(rows):
        cls = row_class(i) if row_class else ""
        out.append(f'<tr class="{escape(cls)}">' if cls else "<tr>")
        for cell in row:
            if isinstance(cell, tuple):
                out.append(_cell(cell[0], numeric=cell[1]))
            else:
                out.append(_cell(str(cell)))
        out.append("</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _ci(stat: str, digits: int) -> Callable[[Dict[str, Any]], Tuple[str, bool]]:
    """A numeric cell: the entry's estimate of ``stat`` with its confidence interval, or
    ``deadlock`` where the point deadlocked before measuring it."""

    def cell(e: Dict[str, Any]) -> Tuple[str, bool]:
        if e.get("deadlocked") and not math.isfinite(e[stat].mean):
            return ("deadlock", True)
        return (with_ci(e[stat], digits), True)

    return cell


# (header, cell of an entry) of the columns between the varied keys and "saturated".
_SUMMARY_COLUMNS = (
    ("seeds", lambda e: (str(e["seeds"]), True)),
    ("offered load", _ci("offered_load", 4)),
    ("accepted load", _ci("accepted_load", 4)),
    ("latency mean", _ci("latency_mean", 1)),
    ("latency p99", _ci("latency_p99", 1)),
    ("network latency mean", _ci("network_latency_mean", 1)),
)
_PER_SL_COLUMNS = (
    ("SL", lambda e: (str(e["sl"]), True)),
    ("class", lambda e: (str(e["name"] if e["name"] is not None else ""), False)),
    ("offered load", _ci("offered_load", 4)),
    ("accepted load", _ci("accepted_load", 4)),
    ("share", _ci("share", 3)),
    ("latency mean", _ci("latency_mean", 1)),
    ("latency p50", _ci("latency_p50", 1)),
    ("latency p99", _ci("latency_p99", 1)),
)


def _point_table(entries: List[Dict[str, Any]], keys: Sequence[str], columns, kind: str) -> str:
    """A row per entry: its varied keys, ``columns`` and how many seeds saturated; the rows
    have the class ``kind``, or ``sat kind`` where a seed saturated."""
    header = list(keys) + [h for h, _ in columns] + ["saturated"]
    rows = [
        [(short_label(e["point"].get(k)), False) for k in keys]
        + [cell(e) for _, cell in columns]
        + [(f"{e['saturated']}/{e['seeds']}", True)]
        for e in entries
    ]
    return _table(header, rows, lambda i: f"sat {kind}" if entries[i]["saturated"] else kind)


def fabric_view(sweep: Any, points: List[Dict[str, Any]]) -> Tuple[str, str]:
    """The SVG of the fabric at the sweep's most loaded point and a caption; the point is run
    again (module docstring). A point that cannot be run gives an empty SVG and the reason."""
    import json

    from . import FlitsimError, _core, _run_text
    from .cli_view import result_scene
    from .traces.cache import experiment_sets
    from .values import format_value
    from .view import Topology, to_svg

    spec = spec_of(sweep)
    text = spec.get("config")
    if not text or not points:
        return "", "the sweep does not keep its configuration: no fabric view"

    def offered(p: Dict[str, Any]) -> float:
        m = p["offered_load"].mean
        return -math.inf if m is None or math.isnan(m) else m

    point = max(points, key=offered)
    origin = str(spec.get("origin") or "<string>")
    sets = [str(o) for o in spec.get("overrides") or []]
    sets += [f"{k}={format_value(v)}" for k, v in point["point"].items()]
    sets.append("run.per_port_stats=true")
    seed = seeds_of(sweep)[0]
    where = ", ".join(f"{k} = {short_label(v)}" for k, v in point["point"].items()) or "the point"
    try:
        full = experiment_sets(text, origin, sets)
        result = json.loads(_run_text(text, origin, sets, seed))
        topo = Topology.from_json(_core.experiment_topology_json(text, origin, full))
        scene = result_scene(result, topo, "utilisation", None, "auto", False)
    except FlitsimError as e:
        return "", f"the fabric view of {where} could not be drawn: {e}"
    caption = (f"The fabric at the most loaded point ({where}, seed {seed}), run again for the "
               "picture: every link drawn per direction (offset to the right of travel) and "
               "coloured by its utilisation in the window.")
    return to_svg([scene]), caption


def render_report(
    sweep: Any, title: Optional[str] = None, figs: Optional[Mapping[str, Any]] = None,
    view: bool = True,
) -> str:
    """The HTML text of the report of ``sweep`` (a sweep directory or a loaded sweep).
    ``figs`` may hold the figures of :func:`flitsim.plot.figures` already drawn; ``view``
    adds the fabric of the most loaded point (:func:`fabric_view`)."""
    sweep = load(sweep)
    spec = spec_of(sweep)
    vary = vary_of(sweep)
    keys = list(vary)
    seeds = seeds_of(sweep)
    points = summarize(sweep)
    per_sl = summarize_per_sl(sweep)
    if figs is None:
        figs = figures(sweep)
    images = {name: _png_data_uri(figs[name]) for name in PLOT_NAMES}

    if title is None:
        title = "flitsim sweep"
        if keys:
            title += ": " + ", ".join(keys)
    version = spec.get("flitsim_version") or ""
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    conf = f"{CONFIDENCE:.0%}"

    parts: List[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{_plural(len(points), "point")} × {_plural(len(seeds), "seed")}; '
        f"report written {escape(when)} by flitsim {escape(_current_version())}.</p>",
        "<h2>Sweep</h2>",
        '<dl class="spec">',
    ]

    def item(name: str, value: str) -> None:
        parts.append(f"<dt>{escape(name)}</dt><dd>{escape(value)}</dd>")

    for k, values in vary.items():
        item(f"varied: {k}", ", ".join(short_label(v) for v in values))
    if not vary:
        item("varied", "nothing (a single point)")
    item("seeds", ", ".join(str(s) for s in seeds))
    overrides = spec.get("overrides") or []
    if overrides:
        item("overrides", " ".join(str(o) for o in overrides))
    if spec.get("origin"):
        item("configuration from", str(spec["origin"]))
    if version:
        item("flitsim version of the runs", str(version))
    parts.append("</dl>")
    parts.append(
        '<p class="note">Loads are in flits/cycle/endpoint, latencies in cycles. Values are '
        f"means over seeds; “±” gives the half-width of the {conf} confidence interval of "
        "the mean (Student t over seeds).</p>"
    )
    config = spec.get("config")
    if config:
        parts.append("<h3>Configuration</h3>")
        parts.append(f"<pre>{escape(str(config))}</pre>")

    parts.append("<h2>Plots</h2>")
    for name in PLOT_NAMES:
        caption = PLOT_CAPTIONS[name].format(conf=conf)
        parts.append(
            f'<figure id="{escape(name)}"><h3>{escape(PLOT_TITLES[name])}</h3>'
            f'<img src="{images[name]}" alt="{escape(PLOT_TITLES[name])}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>"
        )

    if view:
        svg, caption = fabric_view(sweep, points)
        parts.append('<h2>Fabric</h2><figure id="fabric">')
        if svg:
            parts.append(svg[svg.index("<svg"):])
        parts.append(f"<figcaption>{escape(caption)}</figcaption></figure>")

    parts.append("<h2>Summary per point</h2>")
    parts.append(
        '<p class="note">Saturated: in how many seeds the engine reported saturation '
        "(accepted below offered by more than the tolerance, measured packets not drained, "
        "or deadlock). Shaded rows saturated in at least one seed. “deadlock”: every seed "
        "of the point deadlocked before measuring that statistic.</p>"
    )
    parts.append(_point_table(points, keys, _SUMMARY_COLUMNS, "point"))
    parts.append("<h2>Per service level</h2>")
    parts.append(
        '<p class="note">Share: the class’s fraction of the accepted traffic. Saturated: '
        "seeds in which the class’s accepted load fell more than the tolerance below its "
        "offered load (or the fabric deadlocked).</p>"
    )
    parts.append(_point_table(per_sl, keys, _PER_SL_COLUMNS, "sl"))
    parts.append("</body>")
    parts.append("</html>")
    return "\n".join(parts) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _current_version() -> str:
    from . import __version__

    return __version__


def write_report(
    out_dir: Union[str, Path, Any],
    dest: Optional[Union[str, Path]] = None,
    title: Optional[str] = None,
    figs: Optional[Mapping[str, Any]] = None,
    view: bool = True,
) -> Path:
    """Write the HTML report of the sweep in ``out_dir`` (a directory or a loaded sweep) to
    ``dest`` (default ``OUT/report.html``) and return its path. ``view=False`` leaves out the
    fabric view (which runs the most loaded point again)."""
    sweep = load(out_dir)
    path = Path(dest) if dest is not None else directory_of(out_dir) / "report.html"
    html = render_report(sweep, title=title, figs=figs, view=view)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
