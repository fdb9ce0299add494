"""The one value grammar of --set and --vary (flitsim.values), and the TOML writer."""

from __future__ import annotations

import datetime as dt
import math

import pytest

import flitsim
from flitsim.values import (
    check_set,
    format_value,
    parse_set,
    parse_value,
    parse_vary,
    to_toml,
    toml_loads,
)


@pytest.mark.parametrize(
    "text, value",
    [
        # integers
        ("8", 8),
        ("-3", -3),
        ("+7", 7),
        ("1_000", 1000),
        ("0x10", 16),
        ("0o17", 15),
        ("0b101", 5),
        # floats
        ("0.4", 0.4),
        ("1e-3", 0.001),
        ("-2.5E2", -250.0),
        ("inf", math.inf),
        ("+inf", math.inf),
        ("-inf", -math.inf),
        # booleans
        ("true", True),
        ("false", False),
        # strings: quoted (basic and literal) and bare words
        ('"dor"', "dor"),
        ("'C:\\dir'", "C:\\dir"),
        ('"a,b"', "a,b"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("dor", "dor"),
        ("strict_priority", "strict_priority"),
        ("out/tables", "out/tables"),
        ("4x4", "4x4"),
        ("True", "True"),  # TOML booleans are lower case: this is a word
        # arrays and inline tables
        ("[4, 4]", [4, 4]),
        ("[]", []),
        ('[1, "x", [2]]', [1, "x", [2]]),
        ('{ kind = "strict_priority", order = [0, 1] }',
         {"kind": "strict_priority", "order": [0, 1]}),
        # surrounding blanks and a trailing comment, as in TOML
        ("  0.3  ", 0.3),
        ("0.3 # offered", 0.3),
        # dates
        ("2024-05-01", dt.date(2024, 5, 1)),
    ],
)
def test_parse_value(text, value):
    got = parse_value(text)
    assert got == value and type(got) is type(value)


def test_nan_is_a_float_in_set_and_vary_alike():
    assert math.isnan(parse_value("nan"))
    assert math.isnan(parse_set("traffic.load=nan")[1])
    key, values = parse_vary("traffic.load=nan,0.5")
    assert key == "traffic.load" and math.isnan(values[0]) and values[1] == 0.5


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty value"),
        ("   ", "empty value"),
        (".5", "not a TOML number"),
        ("01", "not a TOML number"),
        ("1.", "not a TOML number"),
        ("1__0", "not a TOML number"),
        ('"unclosed', "cannot read value"),
        ("[1, 2", "cannot read value"),
        ("{a = }", "cannot read value"),
        ("it's", "cannot read value"),
        ("1\nx = 2", "span lines"),
    ],
)
def test_parse_value_errors(text, fragment):
    with pytest.raises(flitsim.FlitsimError, match=fragment):
        parse_value(text)


def test_parse_set_and_check_set():
    assert parse_set("traffic.load=0.4") == ("traffic.load", 0.4)
    assert parse_set(" routing.engine = dfsssp ") == ("routing.engine", "dfsssp")
    assert parse_set('routing.tables="/tmp/a b"') == ("routing.tables", "/tmp/a b")
    # The value may hold '=': only the first one separates key and value.
    assert parse_set("traffic.class.name=a=b") == ("traffic.class.name", "a=b")
    # check_set returns the text unchanged (the engine reads the same grammar).
    assert check_set("traffic.load = 0.4") == "traffic.load = 0.4"
    for bad in ("traffic.load", "=0.3", "traffic.load=", "traffic.load=[1"):
        with pytest.raises(flitsim.FlitsimError):
            check_set(bad)
    with pytest.raises(flitsim.FlitsimError, match="override 'traffic.load=.5'"):
        parse_set("traffic.load=.5")


def test_set_values_read_as_the_engine_reads_them(tiny_config):
    """Every value the grammar accepts means the same to the engine: run with --set text
    and with the Python value written back by format_value give the same config hash."""
    for item in ("traffic.load=0.25", "traffic.load = 2.5e-1", "routing.engine=minhop",
                 'routing.engine="minhop"', "routing.vls=0x2", "routing.vls=2",
                 "run.per_port_stats=false", "topology.sides=[4, 4]",
                 'switch.scheduler={ kind = "round_robin" }'):
        key, value = parse_set(item)
        a = flitsim._core.resolve_json(tiny_config.read_text(), "x", [item], None)
        b = flitsim._core.resolve_json(
            tiny_config.read_text(), "x", [f"{key}={format_value(value)}"], None
        )
        assert a == b, item


@pytest.mark.parametrize(
    "spec, key, values",
    [
        ("traffic.load=0.1,0.2", "traffic.load", [0.1, 0.2]),
        ("traffic.load=0.1:0.3:0.1", "traffic.load", [0.1, 0.2, 0.3]),
        ("routing.vls=2:8:2", "routing.vls", [2, 4, 6, 8]),
        ("routing.vls=0x2:0x4:1", "routing.vls", [2, 3, 4]),
        ("traffic.load=1e-1:3e-1:1e-1", "traffic.load", [0.1, 0.2, 0.3]),
        ("routing.engine=dor,\"minhop\",'lash'", "routing.engine", ["dor", "minhop", "lash"]),
        ("topology.sides=[4,4],[8,8]", "topology.sides", [[4, 4], [8, 8]]),
        ("x={ a = 1, b = 2 },{ a = 3 }", "x", [{"a": 1, "b": 2}, {"a": 3}]),
        ('x="a,b",c', "x", ["a,b", "c"]),
        ("run.per_port_stats=true,false", "run.per_port_stats", [True, False]),
        ("traffic.load=inf", "traffic.load", [math.inf]),
        (" traffic.load = 0.5 ", "traffic.load", [0.5]),
    ],
)
def test_parse_vary(spec, key, values):
    got_key, got = parse_vary(spec)
    assert got_key == key
    assert got == values and [type(v) for v in got] == [type(v) for v in values]


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("traffic.load", "no '='"),
        ("=1,2", "empty key"),
        ("traffic.load=", "no values"),
        ("traffic.load=0.1,,0.2", "empty value"),
        ("traffic.load=0.1:0.5", "start:stop:step"),
        ("traffic.load=0.5:0.1:0.1", "greater than stop"),
        ("traffic.load=0.1:0.5:0", "must be positive"),
        ("traffic.load=a:b:c", "non-numeric range bound"),
        ("traffic.load=nan:1:0.1", "non-numeric range bound"),
        ("traffic.load=.1:.5:.1", "not a TOML number"),
        ("x=[1,2", "unclosed"),
        ("x=1]", "unbalanced"),
        ('x="a', "unclosed quote"),
    ],
)
def test_parse_vary_errors(spec, fragment):
    with pytest.raises(flitsim.FlitsimError, match=fragment):
        parse_vary(spec)


def test_format_value_round_trips_through_the_grammar():
    for value in (0, -3, 0.1, 1e20, True, "dor", 'a"b\\c', "é", [4, 4], [], {"k": [1, "x"]},
                  dt.date(2024, 5, 1)):
        assert parse_value(format_value(value)) == value


def test_format_value_escapes_control_characters():
    # DEL and other control characters must be escaped in TOML basic strings.
    text = format_value("a\x7fb\x01\n")
    assert "\x7f" not in text and "\x01" not in text
    assert toml_loads(f"v = {text}")["v"] == "a\x7fb\x01\n"


def test_to_toml_layout_is_unchanged():
    """The text of a dict config is stored in sweep.json: its layout must not change."""
    data = {
        "seed": 1,
        "name": "a b",
        "topology": {"kind": "torus", "sides": [4, 4]},
        "switch": {"scheduler": {"kind": "strict_priority", "order": [0, 1]}},
        "traffic": {"load": 0.3, "class": [{"name": "BE", "share": None}, {"name": "RT"}]},
        "odd key": {"x y": 2},
    }
    assert to_toml(data) == (
        'seed = 1\nname = "a b"\n\n[topology]\nkind = "torus"\nsides = [4, 4]\n\n'
        '[switch]\n\n[switch.scheduler]\nkind = "strict_priority"\norder = [0, 1]\n\n'
        '[traffic]\nload = 0.3\n\n[[traffic.class]]\nname = "BE"\n\n[[traffic.class]]\n'
        'name = "RT"\n\n["odd key"]\n"x y" = 2\n'
    )
    assert toml_loads(to_toml(data))["traffic"]["class"] == [{"name": "BE"}, {"name": "RT"}]
