"""flitsim._catalog (engine names, dfsssp heuristics) agrees with the compiled core, which
names them only in its error messages."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import flitsim
from flitsim import _catalog
from flitsim.cli import main


def _core_error(*args) -> str:
    with pytest.raises(flitsim.FlitsimError) as info:
        flitsim._core.route_json(*args)
    return str(info.value)


def test_engine_names_match_the_core():
    message = _core_error("torus:2x2", "no-such-engine", 8, 1, None, None)
    listed = re.search(r"valid names are: (.*)$", message)
    assert listed, message
    assert tuple(listed.group(1).split(", ")) == _catalog.ENGINE_NAMES


def test_every_engine_routes_something():
    for name in _catalog.ENGINE_NAMES:
        spec = "torus:4x4" if name == "dor" else "kary-ntree:k=2,n=2"
        report = json.loads(flitsim._core.route_json(spec, name, 8, 1, None, None))
        assert report["engine"] in (name, _catalog.ENGINE_ALIASES.get(name))


def test_cycle_heuristics_match_the_core():
    message = _core_error("torus:2x2", "dfsssp", 8, 1, None, '{"heuristic": "bogus"}')
    listed = re.search(r"expected one of (.*?) at line", message)
    assert listed, message
    assert tuple(re.findall(r"`(\w+)`", listed.group(1))) == _catalog.CYCLE_HEURISTICS


def test_help_lists_the_catalog():
    text = CliRunner().invoke(main, ["route", "--help"], terminal_width=200).output
    for name in _catalog.ENGINE_NAMES:
        if name not in _catalog.ENGINE_ALIASES:
            assert name in text
    assert "[weakest|strongest|first]" in text
