"""Pictures of the fabric: ``flitsim view``.

A view is a :class:`Scene`: the topology laid out by its shape, every link drawn once per
direction (two parallel lines, each offset to the right of its direction of travel), and a
value on each directed line that picks its colour. The values come from

* a run's ``ports`` table (utilisation, or flits on one VL), and with ``run.port_timeseries``
  its per-bin flits (an HTML page with a slider);
* the routing tables of an engine: the flows per link of all-to-all traffic (the count the
  eBB computation uses, ``_core.link_loads_json``) or of every endpoint sending to one hot
  spot, a path between two endpoints, or the channel-dependency cycle of a routing that is
  not deadlock-free.

Layouts follow the shape: tori and meshes as their grid (wrap links as half-links leaving one
edge and entering the other; the third dimension of a 3-D torus as slices side by side, its
links as half-links), fat trees in levels (leaf switches at the bottom, each level ordered by
the mean position of the switches below it), everything else by a seeded force layout (the
same picture every time). Endpoints hang off their switch; on fabrics of more than
:data:`EACH_ENDPOINT_LIMIT` endpoints they are drawn as one marker per switch whose link
carries the largest value of its members.

:meth:`Scene.link_values` returns the values the lines carry, keyed as the ``ports`` table is
(switch name, output port), so tests can compare the picture with its data. SVG and HTML are
written here without any dependency; PNG needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._core import FlitsimError

# Above this many endpoints, endpoints are drawn as one marker per switch.
EACH_ENDPOINT_LIMIT = 128
# Above this many switches, switch names are not written.
LABEL_LIMIT = 64

# Colour scale of link values: pale (idle) through blue, green and yellow to red (full).
_ANCHORS: List[Tuple[float, Tuple[int, int, int]]] = [
    (0.0, (0xD6, 0xDC, 0xE4)),
    (0.2, (0x5B, 0x9B, 0xD5)),
    (0.45, (0x2C, 0xA2, 0x5F)),
    (0.7, (0xF2, 0xC1, 0x4E)),
    (0.85, (0xF0, 0x7C, 0x29)),
    (1.0, (0xC8, 0x1D, 0x25)),
]
NO_DATA = "#eeeeee"
# Colour scale of the flits a switch buffers: white (empty) to deep purple (the most).
_SWITCH_ANCHORS: List[Tuple[float, Tuple[int, int, int]]] = [
    (0.0, (0xFF, 0xFF, 0xFF)),
    (0.3, (0xD9, 0xC2, 0xE8)),
    (1.0, (0x4A, 0x14, 0x8C)),
]

# A directed line's key: ("port", switch, port) for a switch output port (towards a switch or
# an endpoint), ("inject", endpoint) for an endpoint's link towards its switch, ("eject", switch)
# and ("inject", switch) (with the switch's name) for the grouped endpoints of a switch.
Key = Tuple[Any, ...]


def colour(value: Optional[float], vmax: float, anchors: Sequence[Any] = _ANCHORS) -> str:
    """The colour of ``value`` on a scale from 0 to ``vmax`` (``NO_DATA`` for ``None``)."""
    if value is None or not math.isfinite(value):
        return NO_DATA
    x = 0.0 if vmax <= 0 else min(max(value / vmax, 0.0), 1.0)
    for (x0, c0), (x1, c1) in zip(anchors, anchors[1:]):
        if x <= x1:
            t = 0.0 if x1 == x0 else (x - x0) / (x1 - x0)
            rgb = [round(a + (b - a) * t) for a, b in zip(c0, c1)]
            return "#" + "".join(f"{c:02x}" for c in rgb)
    return "#" + "".join(f"{c:02x}" for c in anchors[-1][1])


def switch_colour(scene: "Scene", i: int, row: Optional[List[Optional[float]]] = None) -> str:
    """The fill of switch ``i``: red when marked, its buffered flits when measured, else white."""
    if scene.switch_marked[i]:
        return "#ffb3b3"
    values = row if row is not None else scene.switch_values
    if values is None or values[i] is None:
        return "#ffffff"
    return colour(values[i], scene.switch_vmax, _SWITCH_ANCHORS)


# ------------------------------------------------------------------------------------ topology


@dataclass
class Topology:
    """The parts of a flitsim topology JSON a drawing needs."""

    name: str
    shape: Dict[str, Any]
    switches: List[str]
    # Per endpoint: its switch index and the switch port that leads to it (-1: unattached).
    ep_switch: List[int]
    ep_port: List[int]
    # Switch-to-switch links: (switch a, port a, switch b, port b, width).
    links: List[Tuple[int, int, int, int, int]]
    # Width of every switch output port, by (switch index, port).
    widths: Dict[Tuple[int, int], int] = field(default_factory=dict)

    @property
    def index(self) -> Dict[str, int]:
        return {n: i for i, n in enumerate(self.switches)}

    @classmethod
    def from_json(cls, text: str) -> "Topology":
        d = json.loads(text)
        switches = [s["name"] for s in d["switches"]]
        n_ep = len(d["endpoints"])
        ep_switch, ep_port = [-1] * n_ep, [-1] * n_ep
        links = []
        widths: Dict[Tuple[int, int], int] = {}
        for link in d["links"]:
            a, b = link["a"], link["b"]
            width = int(link.get("width", 1))
            ends = []
            for end in (a, b):
                node = end["node"]
                if "switch" in node:
                    ends.append(("s", int(node["switch"]), int(end["port"])))
                else:
                    ends.append(("e", int(node["endpoint"]), int(end["port"])))
            (ka, ia, pa), (kb, ib, pb) = ends
            if ka == "s":
                widths[(ia, pa)] = width
            if kb == "s":
                widths[(ib, pb)] = width
            if ka == "s" and kb == "s":
                links.append((ia, pa, ib, pb, width))
            elif ka == "s" and kb == "e":
                ep_switch[ib], ep_port[ib] = ia, pa
            elif ka == "e" and kb == "s":
                ep_switch[ia], ep_port[ia] = ib, pb
        return cls(d.get("name", ""), d.get("shape") or {}, switches, ep_switch, ep_port, links,
                   widths)

    def neighbours(self) -> List[List[int]]:
        adj: List[List[int]] = [[] for _ in self.switches]
        for a, _, b, _, _ in self.links:
            if a != b:
                adj[a].append(b)
                adj[b].append(a)
        return adj


# -------------------------------------------------------------------------------------- layout


@dataclass
class Layout:
    """Switch positions (drawing units, y downwards) and how to draw their links."""

    kind: str
    pos: np.ndarray
    # Direction (unit vector) in which a switch's endpoints hang.
    ep_dir: np.ndarray
    # Typical distance between neighbouring switches.
    step: float = 1.0
    # Grid coordinates of every switch (grid layouts) and the sides of the grid.
    coords: Optional[np.ndarray] = None
    sides: Tuple[int, ...] = ()


def layout(topo: Topology, seed: int = 1) -> Layout:
    """The layout for the topology's shape (module docstring)."""
    kind = topo.shape.get("kind")
    sides = topo.shape.get("sides") or []
    if kind == "torus" and sides and int(np.prod(sides)) == len(topo.switches) and len(sides) <= 3:
        return _grid_layout(topo, [int(s) for s in sides])
    if kind in ("kary_n_tree", "xgft", "fat_tree"):
        return _level_layout(topo)
    return _force_layout(topo, seed)


def _grid_layout(topo: Topology, sides: List[int]) -> Layout:
    n = len(topo.switches)
    full = list(sides) + [1] * (3 - len(sides))
    i = np.arange(n)
    x = i % full[0]
    y = (i // full[0]) % full[1]
    z = i // (full[0] * full[1])
    coords = np.stack([x, y, z], axis=1)
    pos = np.stack([x + z * (full[0] + 1.5), y], axis=1).astype(float)
    ep_dir = np.tile(np.array([0.6, 0.8]), (n, 1))
    return Layout("grid", pos, ep_dir, 1.0, coords, tuple(full))


def _level_layout(topo: Topology) -> Layout:
    n = len(topo.switches)
    adj = topo.neighbours()
    level = [-1] * n
    frontier = sorted({s for s in topo.ep_switch if s >= 0})
    for s in frontier:
        level[s] = 0
    depth = 0
    while frontier:
        depth += 1
        nxt = []
        for s in frontier:
            for t in adj[s]:
                if level[t] < 0:
                    level[t] = depth
                    nxt.append(t)
        frontier = sorted(set(nxt))
    for s in range(n):  # switches that no endpoint reaches go on top
        if level[s] < 0:
            level[s] = depth
    top = max(level) if level else 0
    rows: List[List[int]] = [[] for _ in range(top + 1)]
    for s in range(n):
        rows[level[s]].append(s)
    width = max(len(r) for r in rows) if rows else 1
    x = np.zeros(n)
    for lv, row in enumerate(rows):
        if lv > 0:  # order by the mean position of the neighbours one level down
            def below(s: int, lv: int = lv) -> float:
                xs = [x[t] for t in adj[s] if level[t] == lv - 1]
                return float(np.mean(xs)) if xs else 0.0

            row.sort(key=lambda s: (below(s), s))
        for k, s in enumerate(row):
            x[s] = (k + 0.5) * width / len(row)
    gap = max(2.0, width / (2.0 * max(top, 1)))
    y = np.array([(top - level[s]) * gap for s in range(n)], dtype=float)
    pos = np.stack([x, y], axis=1)
    ep_dir = np.tile(np.array([0.0, 1.0]), (n, 1))
    return Layout("levels", pos, ep_dir, 1.0)


def _force_layout(topo: Topology, seed: int) -> Layout:
    """Fruchterman–Reingold from a seeded circle: deterministic for a topology and seed."""
    n = len(topo.switches)
    rng = np.random.default_rng(seed)
    angle = 2 * np.pi * np.arange(n) / max(n, 1)
    radius = math.sqrt(max(n, 1))
    pos = np.stack([np.cos(angle), np.sin(angle)], axis=1) * radius
    pos += rng.normal(scale=0.05 * radius, size=pos.shape)
    pairs = np.array([(a, b) for a, _, b, _, _ in topo.links if a != b], dtype=int)
    if n > 1:
        k = 1.0
        iterations = 300 if n <= 400 else 120
        temp = radius / 4
        for it in range(iterations):
            delta = pos[:, None, :] - pos[None, :, :]
            dist2 = (delta ** 2).sum(-1) + 1e-9
            disp = (delta * (k * k / dist2)[..., None]).sum(1)
            if len(pairs):
                d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
                dist = np.sqrt((d ** 2).sum(-1)) + 1e-9
                f = d * (dist / k)[:, None]
                np.add.at(disp, pairs[:, 0], -f)
                np.add.at(disp, pairs[:, 1], f)
            length = np.sqrt((disp ** 2).sum(-1)) + 1e-9
            t = temp * (1 - it / iterations) + 0.01
            pos += disp / length[:, None] * np.minimum(length, t)[:, None]
    # Scale so that linked switches are about one unit apart.
    if len(pairs):
        d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
        med = float(np.median(np.sqrt((d ** 2).sum(-1))))
        if med > 0:
            pos = pos / med * 1.6
    pos -= pos.min(axis=0) if n else 0
    centre = pos.mean(axis=0) if n else np.zeros(2)
    away = pos - centre
    norm = np.sqrt((away ** 2).sum(-1))[:, None]
    ep_dir = np.where(norm > 1e-6, away / np.maximum(norm, 1e-9), np.array([0.0, 1.0]))
    return Layout("force", pos, ep_dir, 1.0)


# --------------------------------------------------------------------------------------- scene


@dataclass
class Highlight:
    """A directed line drawn on top (a route hop, a cycle channel), with its label."""

    x0: float
    y0: float
    x1: float
    y1: float
    label: str


@dataclass
class Scene:
    """Everything one panel draws, in drawing units (y downwards)."""

    title: str
    legend: str
    vmax: float
    # One row per directed line: x0, y0, x1, y1.
    xy: np.ndarray
    keys: List[Key]
    values: List[Optional[float]]
    widths: np.ndarray
    switch_xy: np.ndarray
    switch_names: List[str]
    # Switches to mark (e.g. holding blocked buffers of a deadlock).
    switch_marked: List[bool]
    endpoint_xy: np.ndarray
    endpoint_labels: List[str]
    highlights: List[Highlight] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    # Per time bin, the value of every line (rows of ``values``), and the bins' labels.
    frames: Optional[List[List[Optional[float]]]] = None
    frame_labels: List[str] = field(default_factory=list)
    unit: float = 1.0
    # Per switch (rows of ``switch_names``): flits buffered, when the run measured them; its
    # scale, and per time bin the same.
    switch_values: Optional[List[Optional[float]]] = None
    switch_vmax: float = 1.0
    switch_frames: Optional[List[List[Optional[float]]]] = None

    def buffered_values(self) -> Dict[str, Optional[float]]:
        """The buffered flits drawn on every switch (empty when the run has none)."""
        if self.switch_values is None:
            return {}
        return dict(zip(self.switch_names, self.switch_values))

    def link_values(self) -> Dict[Tuple[str, int], Optional[float]]:
        """The value drawn on every switch output port: (switch name, port) → value."""
        return {(k[1], k[2]): v for k, v in zip(self.keys, self.values) if k[0] == "port"}

    def key_values(self) -> Dict[Key, Optional[float]]:
        """The value drawn on every directed line, by its key (module comment on ``Key``)."""
        return dict(zip(self.keys, self.values))

    def bounds(self) -> Tuple[float, float, float, float]:
        pts = [self.switch_xy]
        if len(self.xy):
            pts += [self.xy[:, 0:2], self.xy[:, 2:4]]
        if len(self.endpoint_xy):
            pts.append(self.endpoint_xy)
        allp = np.concatenate([p.reshape(-1, 2) for p in pts if len(p)]) if pts else np.zeros(
            (1, 2))
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        m = 0.6 * self.unit
        return float(lo[0] - m), float(lo[1] - m), float(hi[0] + m), float(hi[1] + m)


def build_scene(
    topo: Topology,
    values: Dict[Key, float],
    *,
    title: str,
    legend: str,
    vmax: Optional[float] = None,
    endpoints: str = "auto",
    lay: Optional[Layout] = None,
    marked: Sequence[str] = (),
    frames: Optional[List[Dict[Key, float]]] = None,
    frame_labels: Sequence[str] = (),
    no_data: Optional[float] = None,
    switch_values: Optional[Dict[str, float]] = None,
    switch_frames: Optional[List[Dict[str, float]]] = None,
) -> Scene:
    """Lay out ``topo`` and give every directed line its value from ``values``.

    ``values`` is keyed ``("port", switch name, port)`` for switch output ports and
    ``("inject", endpoint)`` for injection links; lines without a value get ``no_data``
    (``None``: drawn pale). ``endpoints`` is ``auto``, ``each``, ``grouped`` or ``hidden``.
    """
    lay = lay or layout(topo)
    pos = lay.pos
    n_ep = len(topo.ep_switch)
    if endpoints == "auto":
        endpoints = "each" if n_ep <= EACH_ENDPOINT_LIMIT else "grouped"
    off = 0.09 * lay.step  # offset of the two directions
    gap = 0.22 * lay.step  # room left around a switch
    rows: List[Tuple[float, float, float, float]] = []
    keys: List[Key] = []
    widths: List[float] = []

    def line(p: np.ndarray, q: np.ndarray, key: Key, w: float, trim0: float = gap,
             trim1: float = gap) -> None:
        d = q - p
        length = float(np.hypot(d[0], d[1]))
        if length < 1e-9:
            return
        u = d / length
        nrm = np.array([-u[1], u[0]]) * off
        a = p + u * min(trim0, length * 0.4) + nrm
        b = q - u * min(trim1, length * 0.4) + nrm
        rows.append((float(a[0]), float(a[1]), float(b[0]), float(b[1])))
        keys.append(key)
        widths.append(w)

    names = topo.switches
    for a, pa, b, pb, _ in topo.links:
        if a == b:
            continue
        stub = _stub_direction(lay, a, b)
        if stub is None:
            line(pos[a], pos[b], ("port", names[a], pa), 1.0)
            line(pos[b], pos[a], ("port", names[b], pb), 1.0)
        else:  # half-links: leave a in direction e, enter b from the opposite side
            e = stub * 0.5 * lay.step
            line(pos[a], pos[a] + e, ("port", names[a], pa), 1.0, gap, 0.0)
            line(pos[b] - e, pos[b], ("port", names[a], pa), 1.0, 0.0, gap)
            line(pos[b], pos[b] - e, ("port", names[b], pb), 1.0, gap, 0.0)
            line(pos[a] + e, pos[a], ("port", names[b], pb), 1.0, 0.0, gap)

    ep_xy: List[Tuple[float, float]] = []
    ep_labels: List[str] = []
    by_switch: Dict[int, List[int]] = {}
    for e, s in enumerate(topo.ep_switch):
        if s >= 0:
            by_switch.setdefault(s, []).append(e)
    group_values: Dict[Key, Optional[float]] = {}
    if endpoints == "each":
        for s, eps in by_switch.items():
            d = lay.ep_dir[s]
            perp = np.array([-d[1], d[0]])
            for j, e in enumerate(eps):
                spread = (j - (len(eps) - 1) / 2) * min(0.3, 0.9 / max(len(eps), 1))
                q = pos[s] + (d * 0.55 + perp * spread) * lay.step
                ep_xy.append((float(q[0]), float(q[1])))
                ep_labels.append(str(e))
                line(pos[s], q, ("port", names[s], topo.ep_port[e]), 0.6, gap, 0.06)
                line(q, pos[s], ("inject", e), 0.6, 0.06, gap)
    elif endpoints == "grouped":
        for s, eps in by_switch.items():
            q = pos[s] + lay.ep_dir[s] * 0.5 * lay.step
            ep_xy.append((float(q[0]), float(q[1])))
            ep_labels.append(str(len(eps)))
            line(pos[s], q, ("eject", names[s]), 0.8, gap, 0.08)
            line(q, pos[s], ("inject", names[s]), 0.8, 0.08, gap)

            def group(ks: List[Key]) -> Optional[float]:
                vs = [values[k] for k in ks if values.get(k) is not None]
                return max(vs) if vs else None

            group_values[("eject", names[s])] = group(
                [("port", names[s], topo.ep_port[e]) for e in eps])
            group_values[("inject", names[s])] = group([("inject", e) for e in eps])

    idx = topo.index

    def value_of(src: Dict[Key, Any], k: Key) -> Optional[float]:
        if k[0] in ("eject",) or (k[0] == "inject" and isinstance(k[1], str)):
            if src is values:
                return group_values.get(k)
            eps = by_switch.get(idx[k[1]], [])
            ks = ([("port", k[1], topo.ep_port[e]) for e in eps] if k[0] == "eject"
                  else [("inject", e) for e in eps])
            vs = [src[x] for x in ks if src.get(x) is not None]
            return max(vs) if vs else None
        v = src.get(k)
        return no_data if v is None else float(v)

    line_values = [value_of(values, k) for k in keys]
    top = max((v for v in line_values if v is not None), default=0.0)
    frame_rows = None
    if frames is not None:
        frame_rows = [[value_of(f, k) for k in keys] for f in frames]
    sw_values = sw_rows = None
    sw_top = 0.0
    if switch_values is not None:
        sw_values = [switch_values.get(n) for n in names]
        sw_top = max((v for v in sw_values if v is not None), default=0.0)
    if switch_frames:
        sw_rows = [[f.get(n) for n in names] for f in switch_frames]
        sw_top = max([sw_top] + [v for row in sw_rows for v in row if v is not None])
    return Scene(
        switch_values=sw_values,
        switch_vmax=sw_top if sw_top > 0 else 1.0,
        switch_frames=sw_rows,
        title=title,
        legend=legend,
        vmax=vmax if vmax is not None else (top if top > 0 else 1.0),
        xy=np.array(rows, dtype=float).reshape(-1, 4),
        keys=keys,
        values=line_values,
        widths=np.array(widths, dtype=float),
        switch_xy=pos.copy(),
        switch_names=list(names),
        switch_marked=[n in set(marked) for n in names],
        endpoint_xy=np.array(ep_xy, dtype=float).reshape(-1, 2),
        endpoint_labels=ep_labels,
        frames=frame_rows,
        frame_labels=list(frame_labels),
        unit=lay.step,
    )


def _stub_direction(lay: Layout, a: int, b: int) -> Optional[np.ndarray]:
    """For a link of a grid drawn as half-links (a wrap link, or one between the slices of a
    3-D torus), the unit direction it leaves ``a`` in; ``None`` for a straight line."""
    if lay.coords is None:
        return None
    ca, cb = lay.coords[a], lay.coords[b]
    diff = cb - ca
    if diff[2] != 0:
        sign = 1.0 if (diff[2] == 1 or diff[2] < -1) else -1.0
        return np.array([0.6, -0.8]) * sign
    for dim in (0, 1):
        side = lay.sides[dim]
        if abs(diff[dim]) > 1 and side > 2:
            sign = 1.0 if diff[dim] < 0 else -1.0  # wrapping from the high end goes forwards
            e = np.zeros(2)
            e[dim] = sign
            return e
    return None


def add_highlights(scene: Scene, topo: Topology, lay: Layout,
                   hops: Sequence[Tuple[str, int, str]]) -> None:
    """Draw the directed switch ports ``hops`` ``(switch, port, label)`` on top of
    ``scene`` (the lines of those ports, thick and labelled)."""
    where: Dict[Tuple[str, int], List[int]] = {}
    for i, k in enumerate(scene.keys):
        if k[0] == "port":
            where.setdefault((k[1], k[2]), []).append(i)
    for sw, port, label in hops:
        for i in where.get((sw, port), []):
            x0, y0, x1, y1 = scene.xy[i]
            scene.highlights.append(Highlight(x0, y0, x1, y1, label))
            label = ""  # a half-linked hop is labelled once


# -------------------------------------------------------------------------------------- output


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _svg_panel(scene: Scene, dx: float, scale: float, top: float) -> Tuple[List[str], float]:
    """SVG elements of one panel shifted by ``dx`` px; returns them and the panel's width."""
    x0, y0, x1, y1 = scene.bounds()
    w = (x1 - x0) * scale

    def X(x: float) -> float:
        return dx + (x - x0) * scale

    def Y(y: float) -> float:
        return top + (y - y0) * scale

    u = scene.unit * scale
    out = [f'<text x="{dx + w / 2:.1f}" y="{top - 14:.1f}" text-anchor="middle" '
           f'font-size="15" font-weight="bold">{html.escape(scene.title)}</text>']
    lw = max(0.5, 0.06 * u)
    out.append('<g class="links" stroke-linecap="round">')
    for i, (a, b, c, d) in enumerate(scene.xy):
        v = scene.values[i]
        out.append(
            f'<line class="l" x1="{X(a):.1f}" y1="{Y(b):.1f}" x2="{X(c):.1f}" y2="{Y(d):.1f}" '
            f'stroke="{colour(v, scene.vmax)}" stroke-width="{lw * scene.widths[i]:.2f}">'
            f"<title>{html.escape(_describe(scene.keys[i], v, scene.legend))}</title></line>"
        )
    out.append("</g>")
    r = max(1.2, 0.14 * u)
    out.append('<g class="switches" stroke="#37474f">')
    for i, (x, y) in enumerate(scene.switch_xy):
        fill = switch_colour(scene, i)
        sw = max(0.5, r * 0.22) * (2 if scene.switch_marked[i] else 1)
        what = html.escape(scene.switch_names[i])
        if scene.switch_values is not None and scene.switch_values[i] is not None:
            what += f": {_fmt(scene.switch_values[i])} flits buffered"
        out.append(f'<circle class="s" cx="{X(x):.1f}" cy="{Y(y):.1f}" r="{r:.1f}" '
                   f'fill="{fill}" stroke-width="{sw:.2f}"><title>{what}</title></circle>')
    out.append("</g>")
    if _labelled(scene):
        fs = max(5.0, min(11.0, 0.2 * u))
        out.append(f'<g font-size="{fs:.1f}" fill="#263238" text-anchor="middle">')
        for i, (x, y) in enumerate(scene.switch_xy):
            out.append(f'<text x="{X(x):.1f}" y="{Y(y) - r - 2:.1f}">'
                       f"{html.escape(scene.switch_names[i])}</text>")
        out.append("</g>")
    re_ = max(1.0, 0.065 * u)
    out.append('<g class="endpoints" fill="#90a4ae">')
    for (x, y), label in zip(scene.endpoint_xy, scene.endpoint_labels):
        out.append(f'<rect x="{X(x) - re_:.1f}" y="{Y(y) - re_:.1f}" width="{2 * re_:.1f}" '
                   f'height="{2 * re_:.1f}"><title>endpoint(s) {html.escape(label)}</title>'
                   "</rect>")
    out.append("</g>")
    if scene.highlights:
        hw = max(1.2, 0.035 * u)
        out.append('<g class="highlight" stroke="#111111" fill="#111111" '
                   'stroke-linecap="round">')
        for h in scene.highlights:
            out.append(f'<line x1="{X(h.x0):.1f}" y1="{Y(h.y0):.1f}" x2="{X(h.x1):.1f}" '
                       f'y2="{Y(h.y1):.1f}" stroke-width="{hw:.1f}"/>')
            out.append(_arrow_head(X(h.x0), Y(h.y0), X(h.x1), Y(h.y1), max(5.0, 4 * hw)))
        out.append("</g>")
        fs = max(6.0, min(12.0, 0.17 * u))
        out.append(f'<g font-size="{fs:.1f}" fill="#111111" font-weight="bold">')
        for h in scene.highlights:
            if h.label:
                mx, my = (X(h.x0) + X(h.x1)) / 2, (Y(h.y0) + Y(h.y1)) / 2
                out.append(f'<text x="{mx + 4:.1f}" y="{my - 4:.1f}" paint-order="stroke" '
                           f'stroke="#ffffff" stroke-width="3">{html.escape(h.label)}</text>')
        out.append("</g>")
    return out, w


def _describe(key: Key, v: Optional[float], legend: str) -> str:
    if key[0] == "port":
        where = f"{key[1]} port {key[2]}"
    elif key[0] == "inject" and isinstance(key[1], int):
        where = f"endpoint {key[1]} to its switch"
    elif key[0] == "inject":
        where = f"endpoints of {key[1]} to it (largest)"
    else:
        where = f"{key[1]} to its endpoints (largest)"
    return f"{where}: {'no data' if v is None else _fmt(v)} {legend}"


def _legend_svg(vmax: float, legend: str, x: float, y: float,
                anchors: Sequence[Any] = _ANCHORS, no_data: bool = True) -> List[str]:
    """The colour scale as a row of small rectangles (no gradient: no ``url()`` reference)."""
    n = 48
    out = []
    for i in range(n):
        v = (i + 0.5) / n * vmax
        out.append(f'<rect x="{x + i * 240 / n:.1f}" y="{y:.1f}" width="{240 / n + 0.3:.2f}" '
                   f'height="12" fill="{colour(v, vmax, anchors)}"/>')
    out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="240" height="12" fill="none" '
               'stroke="#607d8b" stroke-width="0.5"/>')
    out.append(f'<text x="{x:.1f}" y="{y + 26:.1f}" font-size="11">0</text>')
    out.append(f'<text x="{x + 240:.1f}" y="{y + 26:.1f}" font-size="11" text-anchor="end">'
               f"{_fmt(vmax)}</text>")
    out.append(f'<text x="{x + 250:.1f}" y="{y + 10:.1f}" font-size="12">'
               f"{html.escape(legend)}</text>")
    nx = x + 270 + 7 * len(legend)
    if not no_data:
        return out
    out.append(f'<rect x="{nx:.1f}" y="{y:.1f}" width="12" height="12" fill="{NO_DATA}" '
               'stroke="#607d8b" stroke-width="0.5"/>'
               f'<text x="{nx + 18:.1f}" y="{y + 10:.1f}" font-size="11">no data</text>')
    return out


def _arrow_head(x0: float, y0: float, x1: float, y1: float, size: float) -> str:
    """A filled triangle at (x1, y1) pointing from (x0, y0)."""
    d = math.hypot(x1 - x0, y1 - y0) or 1.0
    ux, uy = (x1 - x0) / d, (y1 - y0) / d
    bx, by = x1 - ux * size, y1 - uy * size
    px, py = -uy * size * 0.5, ux * size * 0.5
    return (f'<polygon points="{x1:.1f},{y1:.1f} {bx + px:.1f},{by + py:.1f} '
            f'{bx - px:.1f},{by - py:.1f}"/>')


def to_svg(scenes: Sequence[Scene], notes: Sequence[str] = (), width_px: float = 1100.0) -> str:
    """One SVG document with the panels side by side on a shared colour scale."""
    vmax = max(s.vmax for s in scenes)
    for s in scenes:
        s.vmax = vmax
    spans = [(b[2] - b[0], b[3] - b[1]) for b in (s.bounds() for s in scenes)]
    total_w = sum(w for w, _ in spans)
    scale = width_px / max(total_w, 1e-9) / (1.0 + 0.04 * (len(scenes) - 1))
    # Large fabrics: keep a switch at least a few pixels apart.
    scale = max(scale, 6.0)
    pad, top = 20.0, 50.0
    parts: List[str] = []
    x = pad
    heights = []
    for s, (_, h) in zip(scenes, spans):
        els, pw = _svg_panel(s, x, scale, top)
        parts += els
        x += pw + 0.04 * width_px
        heights.append(h * scale)
    width = x - 0.04 * width_px + pad
    y_legend = top + max(heights) + 16
    lines = _wrap(list(notes) + [n for s in scenes for n in s.notes])
    has_values = any(v is not None for s in scenes for v in s.values)
    buffered = scenes[0].switch_values is not None
    if not has_values:
        y_legend -= 30
    y_notes = y_legend + (40 if buffered else 0)
    height = y_notes + 40 + 15 * len(lines)
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="DejaVu Sans, Arial, '
            'sans-serif">',
            f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>']
    if has_values:
        head += _legend_svg(vmax, scenes[0].legend, pad, y_legend)
    if buffered:
        head += _legend_svg(scenes[0].switch_vmax, "flits buffered per switch (circles)", pad,
                            y_notes, _SWITCH_ANCHORS, no_data=False)
    y_legend = y_notes
    for i, note in enumerate(lines):
        head.append(f'<text x="{pad:.1f}" y="{y_legend + 48 + 15 * i:.1f}" font-size="11" '
                    f'fill="#455a64">{html.escape(note)}</text>')
    return "\n".join(head + parts + ["</svg>"]) + "\n"


_SLIDER_JS = """
(function () {
  var data = JSON.parse(document.getElementById('frames').textContent);
  var lines = document.querySelectorAll('svg line.l');
  var anchors = data.anchors, vmax = data.vmax;
  function hex(c) { return ('0' + Math.round(c).toString(16)).slice(-2); }
  function colour(v) {
    if (v === null) { return data.nodata; }
    var x = vmax > 0 ? Math.min(Math.max(v / vmax, 0), 1) : 0;
    for (var i = 1; i < anchors.length; i++) {
      var a = anchors[i - 1], b = anchors[i];
      if (x <= b[0]) {
        var t = b[0] === a[0] ? 0 : (x - a[0]) / (b[0] - a[0]);
        return '#' + [0, 1, 2].map(function (j) {
          return hex(a[1][j] + (b[1][j] - a[1][j]) * t); }).join('');
      }
    }
    var last = anchors[anchors.length - 1][1];
    return '#' + hex(last[0]) + hex(last[1]) + hex(last[2]);
  }
  var circles = document.querySelectorAll('svg circle.s');
  function swcolour(v) {
    if (v === null) { return '#ffffff'; }
    var a = data.swanchors, m = data.swvmax, x = m > 0 ? Math.min(Math.max(v / m, 0), 1) : 0;
    for (var i = 1; i < a.length; i++) {
      if (x <= a[i][0]) {
        var t = a[i][0] === a[i - 1][0] ? 0 : (x - a[i - 1][0]) / (a[i][0] - a[i - 1][0]);
        return '#' + [0, 1, 2].map(function (j) {
          return hex(a[i - 1][1][j] + (a[i][1][j] - a[i - 1][1][j]) * t); }).join('');
      }
    }
    return '#' + a[a.length - 1][1].map(hex).join('');
  }
  var slider = document.getElementById('bin'), label = document.getElementById('binlabel');
  var timer = null;
  function show(k) {
    var row = data.frames[k];
    for (var i = 0; i < lines.length && i < row.length; i++) {
      lines[i].setAttribute('stroke', colour(row[i]));
    }
    if (data.switches) {
      var srow = data.switches[k];
      for (var j = 0; j < circles.length && j < srow.length; j++) {
        if (!data.marked[j]) { circles[j].setAttribute('fill', swcolour(srow[j])); }
      }
    }
    label.textContent = data.labels[k];
  }
  slider.addEventListener('input', function () { show(+slider.value); });
  document.getElementById('play').addEventListener('click', function () {
    if (timer) { clearInterval(timer); timer = null; return; }
    timer = setInterval(function () {
      slider.value = (+slider.value + 1) % data.frames.length; show(+slider.value);
    }, 250);
  });
  show(+slider.value);
})();
"""


def to_html(scenes: Sequence[Scene], notes: Sequence[str] = (), title: str = "flitsim view") -> str:
    """One self-contained HTML page: the SVG inline and, when the first panel has frames, a
    slider over its time bins (no server, no network)."""
    # Inline SVG in HTML needs no namespace declaration.
    svg = to_svg(scenes, notes).replace(' xmlns="http://www.w3.org/2000/svg"', "", 1)
    s = scenes[0]
    body = [f"<h1>{html.escape(title)}</h1>", svg]
    script = ""
    if s.frames:
        frames = [[None if v is None else round(v, 4) for v in row] for row in s.frames]
        data = {
            "frames": frames,
            "labels": s.frame_labels,
            "vmax": s.vmax,
            "anchors": [[p, list(c)] for p, c in _ANCHORS],
            "nodata": NO_DATA,
            "switches": None if not s.switch_frames else [
                [None if v is None else round(v, 2) for v in row] for row in s.switch_frames],
            "swvmax": s.switch_vmax,
            "swanchors": [[p, list(c)] for p, c in _SWITCH_ANCHORS],
            "marked": s.switch_marked,
        }
        body.insert(1, (
            '<p><button id="play" type="button">play / pause</button> '
            f'<input id="bin" type="range" min="0" max="{len(frames) - 1}" value="0" '
            'style="width:60%"> <span id="binlabel"></span></p>'))
        payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        script = (f'<script type="application/json" id="frames">{payload}</script>\n'
                  f"<script>{_SLIDER_JS}</script>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:DejaVu Sans,Arial,sans-serif;margin:16px;color:#263238}"
        "h1{font-size:18px}svg{max-width:100%;height:auto}</style></head><body>\n"
        + "\n".join(body) + "\n" + script + "\n</body></html>\n"
    )


def _wrap(notes: Sequence[str], width: int = 150) -> List[str]:
    """Notes without repeats, broken into lines of at most ``width`` characters."""
    import textwrap

    seen: List[str] = []
    for n in notes:
        if n not in seen:
            seen.append(n)
    return [line for n in seen for line in textwrap.wrap(n, width)]


def to_png(scenes: Sequence[Scene], path: Path, notes: Sequence[str] = ()) -> None:
    """Draw the panels with matplotlib (the ``plot`` extra) into ``path``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.colors import LinearSegmentedColormap
    except ImportError:
        raise ImportError(
            "PNG output needs matplotlib: pip install 'flitsim[plot]' (or write .svg/.html)"
        ) from None
    vmax = max(s.vmax for s in scenes)
    has_values = any(v is not None for s in scenes for v in s.values)
    bounds = [s.bounds() for s in scenes]
    spans = [(b[2] - b[0], b[3] - b[1]) for b in bounds]
    total_w = sum(w for w, _ in spans)
    gap_in = 0.3
    fig_w = min(max(7.0, 6.0 * len(scenes)), 20.0)
    inch = (fig_w - 0.3 - gap_in * (len(scenes) - 1)) / max(total_w, 1e-9)  # inches per unit
    plot_h = max(h for _, h in spans) * inch
    if plot_h > 13.0:
        inch *= 13.0 / plot_h
        plot_h = 13.0
    all_notes = _wrap(list(notes) + [n for s in scenes for n in s.notes], int(fig_w * 17))
    bottom = (0.8 if has_values else 0.25) + 0.17 * len(all_notes)
    title_h = 0.45
    fig_h = title_h + plot_h + bottom
    fig = plt.figure(figsize=(fig_w, fig_h))
    cmap = LinearSegmentedColormap.from_list(
        "flitsim", [(p, tuple(c / 255 for c in rgb)) for p, rgb in _ANCHORS])
    used_w = sum(w for w, _ in spans) * inch + gap_in * (len(scenes) - 1)
    left = (fig_w - used_w) / 2
    pt = inch * 72  # points per unit
    for (x0, y0, x1, y1), (w, h), s in zip(bounds, spans, scenes):
        ax = fig.add_axes((left / fig_w, (bottom + plot_h - h * inch) / fig_h,
                           w * inch / fig_w, h * inch / fig_h))
        left += w * inch + gap_in
        ax.set_xlim(x0, x1)
        ax.set_ylim(y1, y0)
        ax.axis("off")
        fig.text((ax.get_position().x0 + ax.get_position().x1) / 2,
                 (fig_h - title_h * 0.6) / fig_h, s.title, ha="center", fontsize=10)
        u = pt * s.unit
        segs = s.xy.reshape(-1, 2, 2)
        cols = [colour(v, vmax) for v in s.values]
        ax.add_collection(LineCollection(segs, colors=cols, linewidths=max(0.25, 0.06 * u)
                                         * s.widths, capstyle="round", zorder=1))
        face = [switch_colour(s, i) for i in range(len(s.switch_names))]
        ax.scatter(s.switch_xy[:, 0], s.switch_xy[:, 1], s=(max(1.5, 0.28 * u)) ** 2, c=face,
                   edgecolors="#37474f", linewidths=max(0.2, 0.025 * u), zorder=2)
        if len(s.endpoint_xy):
            ax.scatter(s.endpoint_xy[:, 0], s.endpoint_xy[:, 1], s=(max(1.0, 0.13 * u)) ** 2,
                       marker="s", c="#90a4ae", linewidths=0, zorder=2)
        if _labelled(s):
            for (x, y), name in zip(s.switch_xy, s.switch_names):
                ax.annotate(name, (x, y), xytext=(0, 0.16 * u + 1), textcoords="offset points",
                            ha="center", fontsize=max(3.5, min(7.0, 0.16 * u)),
                            color="#263238", zorder=3)
        for hl in s.highlights:
            ax.annotate("", xy=(hl.x1, hl.y1), xytext=(hl.x0, hl.y0),
                        arrowprops={"arrowstyle": "-|>", "color": "#111111",
                                    "lw": max(0.8, 0.035 * u), "shrinkA": 0, "shrinkB": 0,
                                    "mutation_scale": max(5.0, 0.18 * u)},
                        zorder=4)
            if hl.label:
                ax.annotate(hl.label, ((hl.x0 + hl.x1) / 2, (hl.y0 + hl.y1) / 2),
                            xytext=(2, 2), textcoords="offset points",
                            fontsize=max(4.5, min(8.0, 0.17 * u)), fontweight="bold", zorder=5,
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                                  "alpha": 0.85})
    if has_values:
        sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, vmax))
        cax = fig.add_axes((0.2, (bottom - 0.3) / fig_h, 0.5, 0.14 / fig_h))
        cb = fig.colorbar(sm, cax=cax, orientation="horizontal")
        cb.set_label(scenes[0].legend, fontsize=8, labelpad=1)
        cb.ax.tick_params(labelsize=7, pad=1)
    if scenes[0].switch_values is not None:
        sw_cmap = LinearSegmentedColormap.from_list(
            "buffered", [(p, tuple(c / 255 for c in rgb)) for p, rgb in _SWITCH_ANCHORS])
        sm = plt.cm.ScalarMappable(cmap=sw_cmap, norm=plt.Normalize(0, scenes[0].switch_vmax))
        cax = fig.add_axes((0.74, (bottom - 0.3) / fig_h, 0.22, 0.14 / fig_h))
        cb = fig.colorbar(sm, cax=cax, orientation="horizontal")
        cb.set_label("flits buffered per switch", fontsize=8, labelpad=1)
        cb.ax.tick_params(labelsize=7, pad=1)
    for i, note in enumerate(all_notes):
        fig.text(0.02, (0.1 + 0.17 * (len(all_notes) - 1 - i)) / fig_h, note, fontsize=7,
                 color="#455a64")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def _labelled(s: Scene) -> bool:
    """Whether switch names fit: few switches, none closer than a unit to another."""
    n = len(s.switch_names)
    if n > LABEL_LIMIT or n == 0:
        return False
    d = s.switch_xy[:, None, :] - s.switch_xy[None, :, :]
    dist = np.sqrt((d ** 2).sum(-1)) + np.eye(n) * 1e9
    return bool(dist.min() >= 0.9 * s.unit) if n > 1 else True


def write(scenes: Sequence[Scene], out: Path, notes: Sequence[str] = (),
          title: str = "flitsim view") -> None:
    """Write the panels to ``out``: ``.svg``, ``.html`` or ``.png`` by its extension."""
    ext = out.suffix.lower()
    if ext == ".png":
        to_png(scenes, out, notes)
        return
    if ext == ".svg":
        text = to_svg(scenes, notes)
    elif ext in (".html", ".htm"):
        text = to_html(scenes, notes, title)
    else:
        raise FlitsimError(f"--out {out}: give a file ending in .svg, .png or .html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------- data sources


def result_values(result: Dict[str, Any], metric: str = "utilisation",
                  vl: Optional[int] = None) -> Dict[Key, float]:
    """The value of every switch output port of a run's ``ports`` table: its utilisation, or
    (``metric="flits"``) the flits it sent in the window, on VL ``vl`` or all VLs."""
    values: Dict[Key, float] = {}
    for row in result.get("ports") or []:
        key = ("port", row["switch"], int(row["port"]))
        if metric == "utilisation":
            values[key] = float(row["utilisation"])
        elif vl is None:
            values[key] = float(sum(row["vl_flits"]))
        else:
            flits = row["vl_flits"]
            values[key] = float(flits[vl]) if vl < len(flits) else 0.0
    return values


def result_frames(result: Dict[str, Any], topo: Topology) -> Tuple[List[Dict[Key, float]],
                                                                   List[str]]:
    """Per bin of ``timeseries.ports``: the utilisation of every port in that bin (flits sent
    / (bin cycles · link width)), and the bins' labels."""
    ts = result.get("timeseries") or {}
    rows = ts.get("ports") or []
    if not rows:
        return [], []
    b = int(ts["bin"])
    idx = topo.index
    bins = max(len(r["flits"]) for r in rows)
    frames: List[Dict[Key, float]] = [{} for _ in range(bins)]
    for r in rows:
        s = idx.get(r["switch"])
        width = topo.widths.get((s, int(r["port"])), 1) if s is not None else 1
        for k, f in enumerate(r["flits"]):
            frames[k][("port", r["switch"], int(r["port"]))] = f / (b * max(width, 1))
    total = int((result.get("cycles") or {}).get("total") or bins * b)
    labels = [f"cycles {k * b}-{min((k + 1) * b, total)}" for k in range(bins)]
    return frames, labels


def result_buffered(result: Dict[str, Any]) -> Tuple[Optional[Dict[str, float]],
                                                     List[Dict[str, float]]]:
    """From ``timeseries.switches`` (``run.port_timeseries``): the mean flits every switch
    buffered over the window's bins, and per bin the same; the internal nodes of a
    hierarchical switch (``sw/m0``, …) count towards the switch. ``(None, [])`` without it."""
    ts = result.get("timeseries") or {}
    rows = ts.get("switches") or []
    if not rows:
        return None, []
    b = int(ts["bin"])
    bins = max(len(r["flits"]) for r in rows)
    frames: List[Dict[str, float]] = [{} for _ in range(bins)]
    for r in rows:
        name = str(r["switch"]).split("/")[0]
        for k, f in enumerate(r["flits"]):
            frames[k][name] = frames[k].get(name, 0.0) + float(f)
    cycles = result.get("cycles") or {}
    w, m = int(cycles.get("warmup") or 0), int(cycles.get("measure") or 0)
    window = [k for k in range(bins) if w <= k * b < w + m] or list(range(bins))
    names = frames[0].keys() if frames else []
    mean = {n: sum(frames[k].get(n, 0.0) for k in window) / len(window) for n in names}
    return mean, frames


def load_values(topo_spec: str, engine: Optional[str], tables: Optional[str], max_vls: int,
                load: str, hotspot: int, n_endpoints: int) -> Dict[Key, float]:
    """Flows per directed link the routing implies: ``uniform`` is all-to-all traffic (every
    endpoint one flow to every other; the link loads of ``flitsim ebb --all-to-all``),
    ``hotspot`` every other endpoint sending one flow to endpoint ``hotspot``."""
    values: Dict[Key, float] = {}
    if load == "uniform":
        r = json.loads(_core.link_loads_json(topo_spec, engine, tables, max_vls))
        for link in r["links"]:
            values[("port", link["switch"], int(link["port"]))] = float(link["flows"])
        for e in range(n_endpoints):
            values[("inject", e)] = float(n_endpoints - 1)
        return values
    pairs = [(s, hotspot) for s in range(n_endpoints) if s != hotspot]
    r = json.loads(_core.paths_json(topo_spec, pairs, engine, tables, max_vls))
    for p in r["paths"]:
        values[("inject", int(p["src"]))] = 1.0
        for h in p["hops"]:
            k = ("port", h["switch"], int(h["out_port"]))
            values[k] = values.get(k, 0.0) + 1.0
    return values


def route_hops(topo_spec: str, engine: Optional[str], tables: Optional[str], max_vls: int,
               pairs: Sequence[Tuple[int, int]]) -> List[Dict[str, Any]]:
    """The LFT paths of ``pairs`` (``_core.paths_json``)."""
    r = json.loads(_core.paths_json(topo_spec, list(pairs), engine, tables, max_vls))
    return list(r["paths"])
