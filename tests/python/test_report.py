"""flitsim.report and the `flitsim plot`, `flitsim report` and `flitsim demo` commands."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import flitsim  # noqa: E402
from flitsim.demo import DEMO_LOADS, DEMO_SEEDS, run_demo  # noqa: E402
from flitsim.plot import ALL_PLOT_NAMES, PLOT_NAMES  # noqa: E402
from flitsim.report import render_report, write_report  # noqa: E402
from helpers import assert_user_error, invoke  # noqa: E402
from sweep_tables import TWO_CLASS_CONFIG, make_sweep, table_sweep  # noqa: E402

LOADS = [0.2, 0.5, 0.9]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("sweep") / "out",
                      vary={"traffic.load": LOADS}, seeds=2)


# -- the HTML report ----------------------------------------------------------------------


def test_report_is_one_self_contained_page(sweep_dir: Path):
    path = write_report(sweep_dir)
    assert path == sweep_dir / "report.html"
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    # The four plots, embedded as PNG data.
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == len(PLOT_NAMES) == 4
    for data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    # No external reference of any kind.
    for needle in ('src="http', "src='http", 'href="http', "<script", "<link", "url("):
        assert needle not in html
    sources = re.findall(r'(?:src|href)\s*=\s*["\']?([^"\'\s>]{0,22})', html)
    assert sources == ["data:image/png;base64,"] * 4
    # The spec: the config (escaped), the varied key and its values, seeds, version.
    assert 'kind = &quot;torus&quot;' in html
    assert 'name = &quot;hi&quot;' in html
    assert "traffic.load" in html and "0.2, 0.5, 0.9" in html
    assert "<dt>seeds</dt><dd>1, 2</dd>" in html
    assert flitsim.__version__ in html
    # One summary row per point, one per-SL row per (point, SL).
    point_rows = re.findall(r'<tr class="(?:sat )?point">\s*<td>([^<]*)</td>', html)
    assert point_rows == ["0.2", "0.5", "0.9"]
    sl_rows = re.findall(r'<tr class="(?:sat )?sl">', html)
    assert len(sl_rows) == len(LOADS) * 2
    assert html.count('<tr class="sat point">') >= 1  # load 0.9 saturates


def test_report_destination_and_loaded_sweep(sweep_dir: Path, tmp_path: Path):
    sweep = flitsim.load_sweep(sweep_dir)
    path = write_report(sweep, dest=tmp_path / "sub" / "r.html", title="My <sweep>")
    assert path == tmp_path / "sub" / "r.html"
    html = path.read_text(encoding="utf-8")
    assert "<title>My &lt;sweep&gt;</title>" in html


def test_report_escapes_everything():
    # Hand-made tables whose config and class name hold markup.
    config = '# <script>alert("x")</script> & co\nseed = 1\n'
    prefix = {"traffic.load": 0.1, "seed": 1, "config_hash": "h", "version": "v"}
    summary = [dict(prefix, offered_load=0.1, accepted_load=0.1, saturated=False,
                    drained=True, deadlock=False, latency_mean=20.0, latency_p99=40.0,
                    network_latency_mean=18.0)]
    per_sl = [dict(prefix, sl=0, name="<b>&amp;", offered_load=0.1, accepted_load=0.1,
                   share=1.0, latency_mean=20.0, latency_p50=19.0, latency_p99=40.0)]
    hist = [dict(prefix, sl=0, name="<b>&amp;", latency=20, count=5)]
    sweep = table_sweep(summary, per_sl, hist, {"traffic.load": [0.1]}, [1], config)
    html = render_report(sweep)
    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in html
    assert "<td>&lt;b&gt;&amp;amp;</td>" in html


# -- command line -------------------------------------------------------------------------


def test_cli_plot_prints_the_written_paths(runner, sweep_dir: Path, tmp_path: Path):
    result = invoke(runner, "plot", str(sweep_dir))
    assert result.exit_code == 0, result.stderr
    paths = [Path(line) for line in result.stdout.splitlines()]
    assert [p.name for p in paths] == [f"{n}.{f}" for n in ALL_PLOT_NAMES
                                       for f in ("png", "svg")]
    assert all(p.is_file() and p.parent == sweep_dir / "plots" for p in paths)

    result = invoke(runner, "plot", str(sweep_dir), "--format", "png",
                    "--dest", str(tmp_path / "png"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == [str(tmp_path / "png" / f"{n}.png")
                                     for n in ALL_PLOT_NAMES]


def test_cli_report_prints_the_path(runner, sweep_dir: Path, tmp_path: Path):
    dest = tmp_path / "report.html"
    result = invoke(runner, "report", str(sweep_dir), "--dest", str(dest))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(dest)
    assert "data:image/png;base64," in dest.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["plot", "report"])
def test_cli_errors_for_a_directory_that_is_not_a_sweep(runner, tmp_path: Path, command):
    assert_user_error(invoke(runner, command, str(tmp_path / "nope")), "not found")
    assert_user_error(invoke(runner, command, str(tmp_path)), "sweep")
    (tmp_path / "sweep.json").write_text('{"format": "something-else"}', encoding="utf-8")
    assert_user_error(invoke(runner, command, str(tmp_path)), "sweep.json")


def test_cli_demo_writes_dataset_plots_and_report(runner, tmp_path: Path):
    # Default output directory: ./flitsim-demo (here inside tmp_path).
    with runner.isolated_filesystem(temp_dir=tmp_path) as cwd:
        result = invoke(runner, "demo", "--jobs", "2")
        out = Path(cwd) / "flitsim-demo"
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    table = [line for line in lines if re.match(r"^0\.\d\d\s", line)]
    assert [float(line.split()[0]) for line in table] == list(DEMO_LOADS)
    header = next(line for line in lines if line.startswith("load"))
    assert header.split() == ["load", "accepted", "lat", "mean", "lat", "p99", "hi", "mean",
                              "lo", "mean", "saturated"]
    assert f"report:  {Path('flitsim-demo') / 'report.html'}" in lines

    sweep = flitsim.load_sweep(out)
    assert sweep.complete
    assert sweep.vary == {"traffic.load": list(DEMO_LOADS)}
    assert len(sweep.seeds) == DEMO_SEEDS
    assert sorted(p.name for p in (out / "plots").iterdir()) == sorted(
        f"{n}.{f}" for n in ALL_PLOT_NAMES for f in ("png", "svg")
    )
    assert "data:image/png;base64," in (out / "report.html").read_text(encoding="utf-8")

    # What the demo shows: at the lowest load everything is delivered; at the highest the
    # network saturates, while the strict-priority class keeps its whole offered load.
    rows = {(r["traffic.load"], r["seed"], r["name"]): r for r in sweep.per_sl.to_pylist()}
    low, high = DEMO_LOADS[0], DEMO_LOADS[-1]
    for seed in sweep.seeds:
        assert rows[(low, seed, "lo")]["accepted_load"] == pytest.approx(
            rows[(low, seed, "lo")]["offered_load"], rel=0.05)
        hi, lo = rows[(high, seed, "hi")], rows[(high, seed, "lo")]
        assert hi["accepted_load"] == pytest.approx(hi["offered_load"], rel=0.03)
        assert lo["accepted_load"] < 0.9 * lo["offered_load"]
        assert hi["latency_mean"] < lo["latency_mean"] / 5
    saturated = [r["saturated"] for r in sweep.summary.to_pylist()
                 if r["traffic.load"] == high]
    assert all(saturated)


def test_demo_without_matplotlib_writes_the_dataset_only(tmp_path: Path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "demo"
    run_demo(out, loads=(0.1,), seeds=1, jobs=1)
    # A second demo (here with other loads) replaces the first one's dataset.
    result = run_demo(out, loads=(0.2, 0.4), seeds=1, jobs=1)
    assert result.plots == [] and result.report is None
    assert "pip install 'flitsim[plot]'" in result.skipped
    assert [r["load"] for r in result.rows] == [0.2, 0.4]
    sweep = flitsim.load_sweep(out)
    assert sweep.complete and sweep.vary == {"traffic.load": [0.2, 0.4]}
    assert not (out / "report.html").exists()


def test_demo_refuses_a_directory_holding_another_sweep(runner, sweep_dir: Path):
    before = flitsim.load_sweep(sweep_dir).summary.num_rows
    result = invoke(runner, "demo", "--out", str(sweep_dir))
    assert result.exit_code == 2
    assert "error: " in result.stderr and "not the demo's" in result.stderr
    assert flitsim.load_sweep(sweep_dir).summary.num_rows == before


def test_two_class_helper_config_is_valid():
    r = flitsim.run(TWO_CLASS_CONFIG, traffic__load=0.2)
    assert [c["name"] for c in r["per_sl"]] == ["hi", "lo"]
