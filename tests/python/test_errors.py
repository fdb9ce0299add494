"""How mistakes reach the user: key paths, line numbers, did-you-mean hints, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import flitsim
from helpers import TINY_CONFIG, assert_user_error, invoke

LOAD_LINE = TINY_CONFIG.splitlines().index("load = 0.3") + 1  # 1-based, as in messages


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- unknown keys: the suggestion reaches the user ----------------------------------------


def test_unknown_key_in_set_suggests_the_right_one(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config), "--set", "traffic.lod=0.3")
    assert_user_error(result, "traffic.lod", "unknown field `lod`", "did you mean `load`?")


def test_unknown_key_in_file_suggests_and_gives_the_line(runner, tmp_path: Path):
    path = write(tmp_path, "typo.toml", TINY_CONFIG.replace("load = 0.3", "lod = 0.3"))
    result = invoke(runner, "run", str(path))
    assert_user_error(
        result, "typo.toml", "traffic.lod", f"line {LOAD_LINE}", "did you mean `load`?"
    )


def test_unknown_key_through_the_api(tiny_config: Path, tmp_path: Path):
    with pytest.raises(flitsim.FlitsimError, match=r"did you mean `load`\?"):
        flitsim.run(tiny_config, sets=["traffic.lod=0.3"])
    with pytest.raises(flitsim.FlitsimError, match=r"did you mean `load`\?"):
        flitsim.run(tiny_config, traffic__lod=0.3)
    path = write(tmp_path, "typo.toml", TINY_CONFIG.replace("load = 0.3", "lod = 0.3"))
    with pytest.raises(flitsim.FlitsimError, match=f"line {LOAD_LINE}"):
        flitsim.run(path)


def test_unknown_key_in_sweep_vary(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--vary", "traffic.lod=0.1,0.2",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, "traffic.lod", "did you mean `load`?")
    assert not (tmp_path / "o").exists()


def test_unknown_key_in_sweep_file(runner, tmp_path: Path):
    path = write(tmp_path, "typo.toml", TINY_CONFIG.replace("load = 0.3", "lod = 0.3"))
    result = invoke(runner, "sweep", str(path), "--vary", "run.measure=500,600",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, "typo.toml", f"line {LOAD_LINE}", "did you mean `load`?")


# -- wrong types: the key path and the line ----------------------------------------------


def test_wrong_type_in_file_names_key_and_line(runner, tmp_path: Path):
    path = write(tmp_path, "type.toml", TINY_CONFIG.replace("load = 0.3", 'load = "high"'))
    result = invoke(runner, "run", str(path))
    assert_user_error(result, "type.toml", "key `traffic.load`", f"line {LOAD_LINE}",
                      "invalid type")
    with pytest.raises(flitsim.FlitsimError, match=f"line {LOAD_LINE}.*key `traffic.load`"):
        flitsim.run(path)


def test_wrong_type_in_set_names_the_key(runner, tiny_config: Path):
    result = invoke(runner, "run", str(tiny_config), "--set", 'traffic.load="high"')
    assert_user_error(result, "key `traffic.load`", "invalid type")


def test_wrong_type_in_vary_names_the_point(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--vary", "traffic.load=0.1,high",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, 'sweep point traffic.load="high"', "key `traffic.load`",
                      "invalid type")


def test_out_of_range_value_in_vary(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--vary", "traffic.load=0.1,-1",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, "traffic.load", "non-negative")


# -- missing files ------------------------------------------------------------------------


def test_missing_file(runner, tmp_path: Path):
    missing = tmp_path / "absent.toml"
    assert_user_error(invoke(runner, "run", str(missing)), "not found", "absent.toml")
    result = invoke(runner, "sweep", str(missing), "--vary", "traffic.load=0.1",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, "not found", "absent.toml")
    assert not (tmp_path / "o").exists()
    with pytest.raises(FileNotFoundError, match="absent.toml"):
        flitsim.run(missing)
    with pytest.raises(FileNotFoundError, match="absent.toml"):
        flitsim.sweep(missing, vary={"traffic.load": [0.1]})


def test_load_sweep_of_a_directory_without_a_sweep(tmp_path: Path):
    with pytest.raises(flitsim.FlitsimError, match="sweep.json"):
        flitsim.load_sweep(tmp_path)
    (tmp_path / "sweep.json").write_text("{not json")
    with pytest.raises(flitsim.FlitsimError, match="cannot read"):
        flitsim.load_sweep(tmp_path)
    (tmp_path / "sweep.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(flitsim.FlitsimError, match="not a flitsim sweep"):
        flitsim.load_sweep(tmp_path)


def test_sweep_output_that_is_a_file(runner, tiny_config: Path, tmp_path: Path):
    target = write(tmp_path, "taken", "")
    result = invoke(runner, "sweep", str(tiny_config), "--out", str(target))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


# -- bad --vary syntax --------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("traffic.load", "no '='"),
        ("=0.1,0.2", "empty key"),
        ("traffic.load=", "no values"),
        ("traffic.load=0.1,,0.2", "empty value"),
        ("traffic.load=0.5:0.1:0.1", "greater than stop"),
        ("traffic.load=0.1:0.5:0", "step must be positive"),
        ("traffic.load=0.1:0.5:-0.1", "step must be positive"),
        ("traffic.load=low:high:0.1", "non-numeric"),
        ("traffic.load=0.1:0.5", "start:stop:step"),
        ('routing.engine="dor', "unclosed quote"),
        ("topology.sides=[4,4", "unclosed"),
    ],
)
def test_bad_vary_syntax(runner, tiny_config: Path, tmp_path: Path, spec: str, fragment: str):
    result = invoke(runner, "sweep", str(tiny_config), "--vary", spec,
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, f"error: --vary {spec}: ", fragment)
    assert not (tmp_path / "o").exists()


def test_same_key_varied_twice(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--vary", "traffic.load=0.1",
                    "--vary", "traffic.load=0.2", "--out", str(tmp_path / "o"))
    assert_user_error(result, "--vary traffic.load=0.2", "already varied")


def test_bad_set_in_sweep(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--set", "traffic.load",
                    "--out", str(tmp_path / "o"))
    assert_user_error(result, "key=value")


def test_scheduler_with_local_backend(runner, tiny_config: Path, tmp_path: Path):
    result = invoke(runner, "sweep", str(tiny_config), "--backend", "local",
                    "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o"))
    assert_user_error(result, "scheduler")


def test_api_errors_are_value_errors(tiny_config: Path):
    with pytest.raises(ValueError):
        flitsim.sweep(tiny_config, vary={"traffic.load": ["x"]})
