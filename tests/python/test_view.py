"""`flitsim view` (python/flitsim/view.py, cli_view.py): the values the picture draws are the
data's (the `ports` table of a run, the link loads of `flitsim ebb --all-to-all`, the LFT
paths), errors name their argument, and the HTML page runs in a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Dict, Tuple

import pytest

from flitsim import _core
from flitsim.cli_view import result_scene, topo_scene
from flitsim.view import Topology, layout, result_frames, to_html, to_svg
from helpers import assert_user_error, invoke


def _run_json(runner, config: Path, tmp_path: Path, *sets: str) -> Tuple[Path, dict]:
    args = ["run", config, "--json"]
    for s in sets:
        args += ["--set", s]
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.stderr
    path = tmp_path / "run.json"
    path.write_text(result.stdout, encoding="utf-8")
    return path, json.loads(result.stdout)


def _ports(result: dict) -> Dict[Tuple[str, int], dict]:
    """The `ports` table read straight from the JSON: (switch, port) → row."""
    return {(r["switch"], r["port"]): r for r in result["ports"]}


def _topology(spec: str) -> Topology:
    return Topology.from_json(_core.topo_json(spec))


# -- a run's ports table -------------------------------------------------------------------


def test_drawn_utilisation_is_the_ports_table(runner, tiny_config: Path, tmp_path: Path):
    path, result = _run_json(runner, tiny_config, tmp_path)
    topo = _topology("torus:4x4")
    scene = result_scene(result, topo, "utilisation", None, "each", False)
    drawn = scene.link_values()
    table = _ports(result)
    assert set(drawn) == set(table)  # every port drawn, nothing else
    for key, row in table.items():
        assert drawn[key] == row["utilisation"], key
    assert any(v > 0 for v in drawn.values())
    # Every switch-to-switch direction is one line of its own (a 4x4 torus: 64 directions).
    to_switch = [k for k in scene.keys if k[0] == "port" and not table[(k[1], k[2])]
                 ["to_endpoint"]]
    assert len(set(to_switch)) == 64
    # The command writes the picture (the topology found from the result's name).
    out = tmp_path / "run.svg"
    cli = invoke(runner, "view", path, "--out", out)
    assert cli.exit_code == 0, cli.stderr
    svg = out.read_text(encoding="utf-8")
    assert svg.count('class="l"') == len(scene.keys)


def test_drawn_flits_per_vl_are_the_ports_table(runner, tiny_config: Path, tmp_path: Path):
    _, result = _run_json(runner, tiny_config, tmp_path)
    topo = _topology("torus:4x4")
    table = _ports(result)
    for vl in (0, 1):
        drawn = result_scene(result, topo, "flits", vl, "each", False).link_values()
        assert drawn == {k: float(r["vl_flits"][vl]) for k, r in table.items()}
    total = result_scene(result, topo, "flits", None, "each", False).link_values()
    assert total == {k: float(sum(r["vl_flits"])) for k, r in table.items()}


def test_grouped_endpoints_carry_the_largest_ejection_value(runner, tiny_config, tmp_path):
    _, result = _run_json(runner, tiny_config, tmp_path)
    topo = _topology("torus:4x4")
    scene = result_scene(result, topo, "utilisation", None, "grouped", False)
    values = scene.key_values()
    for row in result["ports"]:
        if row["to_endpoint"]:  # one endpoint per switch: the group is that endpoint
            assert values[("eject", row["switch"])] == row["utilisation"]


def test_an_experiment_is_run_first(runner, tiny_config: Path, tmp_path: Path):
    out = tmp_path / "exp.svg"
    cli = invoke(runner, "view", tiny_config, "--out", out)
    assert cli.exit_code == 0, cli.stderr
    assert out.read_text(encoding="utf-8").startswith("<svg")


# -- routing tables ------------------------------------------------------------------------


def test_uniform_load_is_the_all_to_all_link_count(runner):
    spec = "kary-ntree:k=2,n=3"
    cli = invoke(runner, "ebb", spec, "--engine", "minhop", "--all-to-all", "--json")
    assert cli.exit_code == 0, cli.stderr
    counts = {(r["switch"], r["port"]): float(r["flows"]) for r in json.loads(cli.stdout)["links"]}
    topo = _topology(spec)
    scene = topo_scene(spec, topo, "minhop", None, 8, "uniform", 0, [], False, "each")
    assert scene.link_values() == counts


def test_hotspot_load_conserves_flows(runner):
    """Every endpoint but the hot spot sends one flow to it: its ejection port carries n - 1,
    and at every switch the flows out equal the flows in plus the flows its endpoints start."""
    spec = "torus:4x4"
    topo = _topology(spec)
    n, hot = len(topo.ep_switch), 5
    scene = topo_scene(spec, topo, "dor", None, 8, "hotspot", hot, [], False, "each")
    drawn = scene.link_values()
    names = topo.switches
    assert drawn[(names[topo.ep_switch[hot]], topo.ep_port[hot])] == n - 1
    inflow = {s: 0.0 for s in names}
    for a, pa, b, pb, _ in topo.links:
        inflow[names[b]] += drawn.get((names[a], pa), 0.0)
        inflow[names[a]] += drawn.get((names[b], pb), 0.0)
    for i, s in enumerate(names):
        local = sum(1 for e, sw in enumerate(topo.ep_switch) if sw == i and e != hot)
        out = sum(v for (sw, _), v in drawn.items() if sw == s)
        assert out == inflow[s] + local, s


def test_route_highlights_the_lft_path(runner, tmp_path: Path):
    spec = "torus:4x4"
    out = tmp_path / "route.svg"
    cli = invoke(runner, "view", spec, "--engine", "dor", "--route", "0:10", "--out", out)
    assert cli.exit_code == 0, cli.stderr
    hops = json.loads(_core.paths_json(spec, [(0, 10)], "dor"))["paths"][0]["hops"]
    assert hops and f"route 0 -> 10: {hops[0]['switch']}" in cli.stdout
    topo = _topology(spec)
    scene = topo_scene(spec, topo, "dor", None, 8, None, 0, [(0, 10)], False, "each")
    # The path is connected: each hop's output port leads to the next hop's switch.
    peer = {}
    for a, pa, b, pb, _ in topo.links:
        peer[(topo.switches[a], pa)] = topo.switches[b]
        peer[(topo.switches[b], pb)] = topo.switches[a]
    for h, nxt in zip(hops, hops[1:]):
        assert peer[(h["switch"], h["out_port"])] == nxt["switch"]
    assert len(scene.highlights) >= len(hops)
    assert "0→10" in out.read_text(encoding="utf-8")


def test_minhop_cycle_on_a_6x6_torus_is_drawn_with_channels_and_vls(runner, tmp_path):
    spec = "torus:6x6"
    report = json.loads(_core.route_json(spec, "minhop"))
    assert not report["deadlock_free"]
    ring = report["cycle"]
    out = tmp_path / "cycle.svg"
    cli = invoke(runner, "view", spec, "--engine", "minhop", "--cycle", "--out", out)
    assert cli.exit_code == 0, cli.stderr
    assert f"cycle ({len(ring)} channels)" in cli.stdout
    svg = out.read_text(encoding="utf-8")
    for i, c in enumerate(ring):
        assert f"c{i + 1} vl{c['vl']}" in svg
        assert f"c{i + 1} = {c['switch']} port {c['port']} VL {c['vl']}" in svg


def test_engines_side_by_side_share_one_scale(runner, tmp_path: Path):
    out = tmp_path / "two.svg"
    cli = invoke(runner, "view", "kary-ntree:k=2,n=3", "--engine", "ftree", "--engine", "minhop",
                 "--load", "uniform", "--out", out)
    assert cli.exit_code == 0, cli.stderr
    svg = out.read_text(encoding="utf-8")
    assert "ftree on" in svg and "minhop on" in svg


# -- over time -----------------------------------------------------------------------------


def test_html_frames_are_the_port_time_series(runner, tiny_config: Path, tmp_path: Path):
    _, result = _run_json(runner, tiny_config, tmp_path, "run.timeseries_bin=100",
                          "run.port_timeseries=true")
    topo = _topology("torus:4x4")
    frames, labels = result_frames(result, topo)
    series = result["timeseries"]["ports"]
    assert len(frames) == len(labels) == len(series[0]["flits"])
    for row in series:
        for k, flits in enumerate(row["flits"]):
            assert frames[k][("port", row["switch"], row["port"])] == flits / 100
    scene = result_scene(result, topo, "utilisation", None, "each", True)
    assert scene.frames is not None and len(scene.frames) == len(frames)
    page = to_html([scene])
    assert 'id="frames"' in page and 'type="range"' in page
    for needle in ("http://", "https://", "<link", "src="):
        assert needle not in page


def test_switches_show_the_buffered_flits_of_the_window(runner, tiny_config, tmp_path):
    _, result = _run_json(runner, tiny_config, tmp_path, "run.timeseries_bin=100",
                          "run.port_timeseries=true")
    topo = _topology("torus:4x4")
    scene = result_scene(result, topo, "utilisation", None, "each", True)
    drawn = scene.buffered_values()
    # warm-up 300 and window 1000 cycles: bins 3..12 are the window's.
    rows = result["timeseries"]["switches"]
    assert {r["switch"] for r in rows} == set(drawn)
    for r in rows:
        assert drawn[r["switch"]] == pytest.approx(sum(r["flits"][3:13]) / 10)
    assert any(v > 0 for v in drawn.values())
    assert scene.switch_frames is not None
    for k, row in enumerate(scene.switch_frames):
        by_name = dict(zip(scene.switch_names, row))
        for r in rows:
            assert by_name[r["switch"]] == r["flits"][k]


def test_html_of_an_experiment_has_a_slider(runner, tiny_config: Path, tmp_path: Path):
    out = tmp_path / "exp.html"
    cli = invoke(runner, "view", tiny_config, "--out", out)
    assert cli.exit_code == 0, cli.stderr
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="frames">(.*?)</script>', page, re.S).group(1))
    assert len(data["frames"]) > 10
    assert len(data["frames"][0]) == page.count('class="l"')


# -- the sweep report ----------------------------------------------------------------------


def test_the_report_draws_its_most_loaded_point(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from flitsim.report import render_report
    from sweep_tables import make_sweep

    out = make_sweep(tmp_path / "out", vary={"traffic.load": [0.2, 0.6]}, seeds=1)
    html = render_report(out)
    figure = re.search(r'<figure id="fabric">(.*?)</figure>', html, re.S).group(1)
    assert "<svg" in figure and 'class="l"' in figure
    assert "most loaded point (traffic.load = 0.6, seed 1)" in figure
    assert 'id="fabric"' not in render_report(out, view=False)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["no-such-run.json"], "no-such-run.json"),
        (["no-such-experiment.toml"], "no-such-experiment.toml"),
        (["torus:4x4", "--engine", "nosuch", "--load", "uniform"], "--engine nosuch"),
        (["torus:4x4", "--engine", "dor", "--route", "1-2"], "--route 1-2"),
        (["torus:4x4", "--engine", "dor", "--route", "0:99"], "--route 0:99"),
        (["torus:4x4", "--engine", "dor", "--load", "hotspot", "--hotspot", "16"], "--hotspot"),
        (["torus:4x4", "--out", "x.gif"], "--out x.gif"),
        (["torus:4x4", "--load", "uniform"], "--engine"),
        (["torus:0x3"], "TOPO torus:0x3"),
    ],
)
def test_errors_name_the_argument(runner, tmp_path: Path, args, fragment):
    result = invoke(runner, "view", *args)
    assert_user_error(result, fragment)


def test_a_result_without_ports_is_an_error(runner, tiny_config: Path, tmp_path: Path):
    path, _ = _run_json(runner, tiny_config, tmp_path, "run.per_port_stats=false")
    assert_user_error(invoke(runner, "view", path, "--out", tmp_path / "x.svg"),
                      "run.per_port_stats")


def test_a_result_of_an_unnamed_topology_asks_for_its_experiment(runner, tmp_path: Path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"config_hash": "x", "topology": "kautz-2-2-2eps",
                                "ports": [{"switch": "k0", "port": 0}]}), encoding="utf-8")
    assert_user_error(invoke(runner, "view", path), "--experiment")


# -- speed and a real browser --------------------------------------------------------------


@pytest.mark.slow
def test_a_4096_endpoint_fabric_draws_in_under_10_seconds(runner, tmp_path: Path):
    out = tmp_path / "big.svg"
    t0 = time.perf_counter()
    cli = invoke(runner, "view", "torus:64x64", "--engine", "dor", "--load", "uniform",
                 "--out", out)
    seconds = time.perf_counter() - t0
    assert cli.exit_code == 0, cli.stderr
    assert seconds < 10, seconds


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")


@pytest.mark.slow
def test_html_view_opens_in_headless_chromium(runner, tiny_config: Path, tmp_path: Path):
    browser = _chromium()
    page = tmp_path / "view.html"
    cli = invoke(runner, "view", tiny_config, "--out", page)
    assert cli.exit_code == 0, cli.stderr
    shot = tmp_path / "shot.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
              "--virtual-time-budget=3000"]
    run = subprocess.run(common + [f"--screenshot={shot}", "--window-size=1200,1400",
                                   page.as_uri()], capture_output=True, text=True, timeout=120)
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    assert shot.exists(), run.stderr[-2000:]
    # The script ran: it wrote the first bin's label.
    dom = subprocess.run(common + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert [line for line in dom.stderr.splitlines() if ":CONSOLE" in line] == []
    assert re.search(r'<span id="binlabel">cycles \d+-\d+</span>', dom.stdout), dom.stdout[-500:]
    # Not blank: a good part of the screenshot is neither white nor one colour.
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))[..., :3]
    not_white = (pixels < 0.95).any(axis=-1).mean()
    assert not_white > 0.02, not_white
    assert len({tuple(p) for p in pixels.reshape(-1, 3)[::97].round(2).tolist()}) > 10


def test_svg_and_layouts_are_deterministic():
    for spec in ("kautz:b=2,n=2,endpoints=1", "torus:3x3x2", "kary-ntree:k=2,n=2"):
        topo = _topology(spec)
        a, b = layout(topo), layout(topo)
        assert (a.pos == b.pos).all()
        scene = result_scene({"ports": [{"switch": topo.switches[0], "port": 0,
                                         "vl_flits": [1], "utilisation": 0.5}]},
                             topo, "utilisation", None, "auto", False)
        assert to_svg([scene]) == to_svg([scene])
