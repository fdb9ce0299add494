"""The Python API: flitsim.run and friends."""

from __future__ import annotations

import importlib.metadata
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import flitsim
from flitsim import _core, format_value
from helpers import check_summary, without_performance


def test_version_matches_package_metadata():
    assert flitsim.__version__ == importlib.metadata.version("flitsim")
    assert flitsim.__version__ == _core.version()


def test_flitsim_error_is_a_value_error():
    assert flitsim.FlitsimError is _core.FlitsimError
    assert issubclass(flitsim.FlitsimError, ValueError)


def test_run_file_returns_contract_summary(tiny_config: Path):
    summary = flitsim.run(tiny_config)
    check_summary(summary)
    assert summary["seed"] == 1
    assert summary["cycles"]["warmup"] == 300
    assert summary["cycles"]["measure"] == 1000


def test_path_str_and_text_give_the_same_result(tiny_config: Path, tiny_text: str):
    from_path = flitsim.run(tiny_config)
    from_str = flitsim.run(str(tiny_config))
    from_text = flitsim.run(tiny_text)
    assert without_performance(from_path) == without_performance(from_str)
    assert without_performance(from_path) == without_performance(from_text)


def test_same_seed_gives_identical_results(tiny_config: Path):
    first = flitsim.run(tiny_config, seed=42)
    second = flitsim.run(tiny_config, seed=42)
    assert first["seed"] == 42
    assert without_performance(first) == without_performance(second)


def test_different_seeds_differ(tiny_config: Path):
    a = flitsim.run(tiny_config, seed=1)
    b = flitsim.run(tiny_config, seed=2)
    assert (a["seed"], b["seed"]) == (1, 2)
    assert without_performance(a) != without_performance(b)


def test_keyword_overrides_equal_sets(tiny_config: Path):
    by_keyword = flitsim.run(tiny_config, traffic__load=0.1, run__measure=800)
    by_sets = flitsim.run(tiny_config, sets=["traffic.load=0.1", "run.measure=800"])
    assert without_performance(by_keyword) == without_performance(by_sets)
    assert by_keyword["cycles"]["measure"] == 800


def test_override_changes_offered_load(tiny_config: Path):
    low = flitsim.run(tiny_config, traffic__load=0.05)
    high = flitsim.run(tiny_config, traffic__load=0.3)
    assert low["offered_load"] < high["offered_load"]
    assert low["flits"]["generated"] < high["flits"]["generated"]


def test_keyword_override_wins_over_sets(tiny_config: Path):
    both = flitsim.run(tiny_config, sets=["run.measure=700"], run__measure=900)
    assert both["cycles"]["measure"] == 900


def test_runs_in_threads_match_serial_runs(tiny_config: Path):
    seeds = [3, 4, 5, 6]
    serial = [without_performance(flitsim.run(tiny_config, seed=s)) for s in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = list(pool.map(lambda s: flitsim.run(tiny_config, seed=s), seeds))
    assert [without_performance(r) for r in threaded] == serial


def test_run_threads_give_the_same_results(tiny_config: Path):
    one = flitsim.run(tiny_config, sets=["run.threads=1"])
    two = flitsim.run(tiny_config, sets=["run.threads=2"])
    assert one["performance"]["threads"] == 1
    assert two["performance"]["threads"] == 2
    assert without_performance(two) == without_performance(one)
    assert two["config_hash"] == one["config_hash"]
    with pytest.raises(flitsim.FlitsimError, match="run.threads"):
        flitsim.run(tiny_config, sets=["run.threads=0"])


def test_sweep_caps_threads_per_run_and_restores_the_cap(tiny_config: Path):
    before = _core.set_thread_cap(7)
    try:
        flitsim.sweep(tiny_config, vary={"traffic.load": [0.1, 0.2]}, jobs=2, progress=None)
        assert _core.set_thread_cap(7) == 7
    finally:
        _core.set_thread_cap(before)


def test_core_returns_json_text(tiny_text: str):
    text = _core.run_json(tiny_text, "tiny.toml", ["run.measure=500"], 9)
    summary = json.loads(text)
    assert summary["seed"] == 9
    assert summary["cycles"]["measure"] == 500


def test_missing_file_raises_file_not_found(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        flitsim.run(tmp_path / "nope.toml")
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        flitsim.run(str(tmp_path / "nope.toml"))


@pytest.mark.parametrize("bad", ["traffic.load", "=0.3", "  =1"])
def test_override_without_key_value_is_rejected(tiny_config: Path, bad: str):
    with pytest.raises(flitsim.FlitsimError, match="key=value"):
        flitsim.run(tiny_config, sets=[bad])


def test_sets_must_be_a_list(tiny_config: Path):
    with pytest.raises(TypeError):
        flitsim.run(tiny_config, sets="traffic.load=0.3")


def test_unknown_key_is_reported_by_name(tiny_config: Path):
    with pytest.raises(flitsim.FlitsimError, match="no_such_key"):
        flitsim.run(tiny_config, sets=["traffic.no_such_key=1"])


def test_invalid_toml_names_its_origin(tmp_path: Path):
    path = tmp_path / "broken.toml"
    path.write_text("seed = 1\n[topology\nkind = 'torus'\n", encoding="utf-8")
    with pytest.raises(flitsim.FlitsimError, match="broken.toml"):
        flitsim.run(path)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_bad_seed_is_rejected(tiny_config: Path, seed):
    with pytest.raises(flitsim.FlitsimError, match="seed"):
        flitsim.run(tiny_config, seed=seed)


@pytest.mark.parametrize(
    "value, text",
    [
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.25, "0.25"),
        ("uniform", '"uniform"'),
        ('a"b', '"a\\"b"'),
        ([4, 4], "[4, 4]"),
        ((1, "x"), '[1, "x"]'),
        ({"k": 2}, "{ k = 2 }"),
    ],
)
def test_format_value_writes_toml(value, text):
    assert format_value(value) == text


def test_format_value_rejects_what_toml_cannot_hold():
    with pytest.raises(flitsim.FlitsimError):
        format_value(float("nan"))
    with pytest.raises(flitsim.FlitsimError):
        format_value(object())


def test_non_utf8_file_is_a_flitsim_error(tmp_path: Path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"seed = 1 # \xe9\n")
    with pytest.raises(flitsim.FlitsimError, match="latin1.toml"):
        flitsim.run(path)


def test_config_of_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        flitsim.run(42)
