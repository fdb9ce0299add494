"""flitsim._catalog (engine names, dfsssp heuristics, topology formats) is what the compiled
core exports, and the core's exports agree with the names its own parsers accept and its
error messages list."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import flitsim
from flitsim import _catalog, _core
from flitsim.cli import main


def _core_error(*args) -> str:
    with pytest.raises(flitsim.FlitsimError) as info:
        _core.route_json(*args)
    return str(info.value)


def test_the_catalog_is_read_from_the_core():
    assert _catalog.ENGINE_NAMES == tuple(_core.engine_names())
    assert _catalog.ENGINE_ALIASES == _core.engine_aliases()
    assert _catalog.CYCLE_HEURISTICS == tuple(_core.cycle_heuristics())
    assert _catalog.TOPOLOGY_FORMATS == tuple(_core.topology_formats())
    assert set(_catalog.ENGINE_ALIASES) <= set(_catalog.ENGINE_NAMES)
    assert set(_catalog.ENGINE_ALIASES.values()) <= set(_catalog.ENGINE_NAMES)


def test_engine_names_match_the_core_error_message():
    message = _core_error("torus:2x2", "no-such-engine", 8, 1, None, None)
    listed = re.search(r"valid names are: (.*)$", message)
    assert listed, message
    assert tuple(listed.group(1).split(", ")) == _catalog.ENGINE_NAMES


def test_every_engine_routes_something():
    for name in _catalog.ENGINE_NAMES:
        spec = "torus:4x4" if name == "dor" else "kary-ntree:k=2,n=2"
        report = json.loads(_core.route_json(spec, name, 8, 1, None, None))
        assert report["engine"] == _catalog.ENGINE_ALIASES.get(name, name)


def test_cycle_heuristics_match_the_core_parser():
    message = _core_error("torus:2x2", "dfsssp", 8, 1, None, '{"heuristic": "bogus"}')
    listed = re.search(r"expected one of (.*?) at line", message)
    assert listed, message
    assert tuple(re.findall(r"`(\w+)`", listed.group(1))) == _catalog.CYCLE_HEURISTICS
    for h in _catalog.CYCLE_HEURISTICS:
        options = json.dumps({"heuristic": h})
        report = json.loads(_core.route_json("torus:3x3", "dfsssp", 8, 1, None, options))
        assert report["deadlock_free"]


def test_every_topology_format_converts():
    for fmt in _catalog.TOPOLOGY_FORMATS:
        assert _core.topo_convert("torus:2x2", fmt)
    with pytest.raises(flitsim.FlitsimError):
        _core.topo_convert("torus:2x2", "dot")


def test_help_lists_the_catalog():
    text = CliRunner().invoke(main, ["route", "--help"], terminal_width=200).output
    for name in _catalog.ENGINE_NAMES:
        if name not in _catalog.ENGINE_ALIASES:
            assert name in text
    assert "[" + "|".join(_catalog.CYCLE_HEURISTICS) + "]" in text
    text = CliRunner().invoke(main, ["topo", "convert", "--help"], terminal_width=200).output
    assert "[" + "|".join(_catalog.TOPOLOGY_FORMATS) + "]" in text
