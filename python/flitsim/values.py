"""Configuration values on the command line and in Python: one grammar, one TOML writer.

``flitsim run --set KEY=VALUE``, ``flitsim sweep --set KEY=VALUE`` and every item of
``flitsim sweep --vary KEY=V1,V2,...`` read their values with :func:`parse_value`:

1. The text (surrounding blanks removed) is read as a **TOML inline value** if it is one:
   integers (``8``, ``-3``, ``1_000``, ``0x10``), floats (``0.4``, ``1e-3``, ``nan``,
   ``inf``, ``-inf``), booleans (``true``, ``false``), strings (``"dor"``, ``'C:\\dir'``),
   arrays (``[4, 4]``), inline tables (``{ kind = "strict_priority" }``) and dates.
2. Otherwise it is a **bare word**, taken as a string: ``dor`` is ``"dor"``. A bare word
   that looks like a malformed number (``.5``, ``01``, ``1.``) or holds a quote, bracket or
   brace (a malformed string, array or table) is an error rather than a string, and so is an
   empty value or one that spans lines.

This is exactly how the engine reads a ``--set`` value (a TOML value, else a string), so the
``--set`` text is passed to the engine unchanged once :func:`parse_set` accepted it. On top
of the value grammar ``--vary`` has two forms of its own (:func:`parse_vary`): a
comma-separated list of values (commas inside brackets, braces and quotes do not separate)
and an inclusive numeric range ``start:stop:step``.

:func:`format_value` writes a Python value back as one line of TOML (for ``key=value``
overrides), :func:`to_toml` writes a dict as a TOML document; both render literals with
``tomli_w``. :func:`toml_loads` reads TOML with :mod:`tomllib` (Python 3.11+) or ``tomli``.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import sys
from typing import Any, List, Mapping, Tuple, Union

import tomli_w

from ._core import FlitsimError

if sys.version_info >= (3, 11):
    import tomllib as _tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as _tomllib

__all__ = [
    "check_set",
    "format_value",
    "parse_set",
    "parse_value",
    "parse_vary",
    "to_toml",
    "toml_loads",
]

TOMLDecodeError = _tomllib.TOMLDecodeError

# Bare words that look like numbers but are not TOML numbers (".5", "01", "1.", "1e").
_NUMBERISH = re.compile(r"[+-]?(\.?[0-9][0-9_.eE+-]*)")
# Characters that make a bare word a malformed literal rather than a string.
_LITERAL_CHARS = set("\"'[]{}")


def toml_loads(text: str) -> dict:
    """Parse a TOML document (:func:`tomllib.loads`, or ``tomli`` before Python 3.11)."""
    return _tomllib.loads(text)


def parse_value(text: str) -> Any:
    """Read one value of ``--set`` or ``--vary`` (see the grammar in :mod:`flitsim.values`).

    Raises :class:`flitsim.FlitsimError` saying what is wrong.

    >>> parse_value("8"), parse_value("0.25"), parse_value("true"), parse_value("dor")
    (8, 0.25, True, 'dor')
    >>> parse_value('"minhop"'), parse_value("[4, 4]"), parse_value("{ kind = 'rr' }")
    ('minhop', [4, 4], {'kind': 'rr'})
    >>> parse_value("nan"), parse_value("-inf"), parse_value("0x10"), parse_value("1_000")
    (nan, -inf, 16, 1000)
    """
    if not isinstance(text, str):
        raise FlitsimError(f"a value must be text, got {text!r}")
    text = text.strip()
    if not text:
        raise FlitsimError("empty value")
    if "\n" in text or "\r" in text:
        raise FlitsimError(f"a value cannot span lines: {text!r}")
    try:
        doc = _tomllib.loads(f"v = {text}")
    except _tomllib.TOMLDecodeError:
        doc = None
    if doc is not None and list(doc) == ["v"]:
        return doc["v"]
    if _NUMBERISH.fullmatch(text) and any(c.isdigit() for c in text):
        raise FlitsimError(f"{text!r} is not a TOML number (write e.g. 0.5, 1.0 or 1e-3)")
    bad = sorted(_LITERAL_CHARS.intersection(text))
    if bad:
        raise FlitsimError(
            f"cannot read value {text!r}: not a TOML value, and a bare word may not hold "
            f"{' '.join(bad)} (quote strings, close arrays and tables)"
        )
    return text  # a bare word: a string


def parse_set(item: str) -> Tuple[str, Any]:
    """Split and read one ``key=value`` override: ``(key, value)``.

    >>> parse_set("traffic.load=0.4")
    ('traffic.load', 0.4)
    >>> parse_set("routing.engine = dfsssp")
    ('routing.engine', 'dfsssp')
    """
    if not isinstance(item, str):
        raise FlitsimError(f"override must be a 'key=value' string, got {item!r}")
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise FlitsimError(
            f"invalid override {item!r}: expected key=value (for example traffic.load=0.4)"
        )
    try:
        return key.strip(), parse_value(value)
    except FlitsimError as e:
        raise FlitsimError(f"override {item!r}: {e}") from None


def check_set(item: str) -> str:
    """Check one ``key=value`` override with :func:`parse_set` and return it unchanged.

    Raises :class:`FlitsimError` when there is no ``=``, the key is empty or the value does
    not follow the grammar.
    """
    parse_set(item)
    return item


def parse_vary(spec: str) -> Tuple[str, List[Any]]:
    """Parse a command-line ``--vary`` value: ``key=v1,v2,...`` or ``key=start:stop:step``.

    Each list item is read with :func:`parse_value`. A range includes ``stop`` (within
    ``step/1e6``); it stays integer when start, stop and step are integers, and floats are
    rounded to 12 significant digits. Raises :class:`flitsim.FlitsimError` saying what is
    wrong.

    >>> parse_vary("traffic.load=0.1:0.3:0.1")
    ('traffic.load', [0.1, 0.2, 0.3])
    >>> parse_vary('routing.engine=dor,"minhop"')
    ('routing.engine', ['dor', 'minhop'])
    >>> parse_vary("topology.sides=[4,4],[8,8]")
    ('topology.sides', [[4, 4], [8, 8]])
    """
    key, sep, value = spec.partition("=")
    key, value = key.strip(), value.strip()
    if not sep:
        raise FlitsimError("expected key=v1,v2,... or key=start:stop:step (no '=')")
    if not key:
        raise FlitsimError("empty key before '='")
    if not value:
        raise FlitsimError(f"no values after '{key}='")
    if ":" in value and value[0] not in "\"'[{" and "," not in value:
        return key, _parse_range(value)
    items = _split_top_level(value)
    if any(not item.strip() for item in items):
        raise FlitsimError("empty value in the comma-separated list")
    return key, [parse_value(item) for item in items]


def _parse_range(text: str) -> List[Any]:
    parts = [p.strip() for p in text.split(":")]
    if len(parts) != 3 or not all(parts):
        raise FlitsimError(f"a range is start:stop:step, got {text!r}")
    numbers: List[Union[int, float]] = []
    for part in parts:
        try:
            value = parse_value(part)
        except FlitsimError as e:
            raise FlitsimError(f"range bound {part!r}: {e}") from None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise FlitsimError(f"non-numeric range bound {part!r} (ranges need finite numbers)")
        numbers.append(value)
    start, stop, step = numbers
    if step <= 0:
        raise FlitsimError(f"range step must be positive, got {parts[2]}")
    if start > stop:
        raise FlitsimError(f"range start {parts[0]} is greater than stop {parts[1]}")
    if all(isinstance(n, int) for n in numbers):
        return list(range(int(start), int(stop) + 1, int(step)))
    count = int(math.floor((stop - start) / step + 1e-6)) + 1
    if count > 1_000_000:
        raise FlitsimError(f"range {text!r} has {count} values; that is too many")
    return [float(f"{start + i * step:.12g}") for i in range(count)]


def _split_top_level(text: str) -> List[str]:
    """Split on commas outside brackets, braces and quotes."""
    items, depth, quote, start = [], 0, "", 0
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:
                raise FlitsimError(f"unbalanced '{c}' in {text!r}")
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise FlitsimError(f"unclosed quote in {text!r}")
    if depth:
        raise FlitsimError(f"unclosed bracket or brace in {text!r}")
    items.append(text[start:])
    return items


# ---------------------------------------------------------------------------------------
# Writing TOML


def _literal(value: Any) -> str:
    """One scalar (bool, int, float, str, date/time) as TOML, rendered by ``tomli_w``."""
    return tomli_w.dumps({"v": value})[len("v = "):-1]


def format_value(value: Any) -> str:
    """Write a Python value as a one-line TOML value, for a ``key=value`` override.

    Arrays and inline tables stay on one line (``[4, 4]``, ``{ kind = "rr" }``); strings,
    numbers, booleans and dates are rendered by ``tomli_w``. Raises :class:`FlitsimError`
    for what TOML cannot hold (``None``, other objects) and for ``nan`` and infinities,
    which no configuration key accepts.

    >>> format_value(0.3), format_value([4, 4]), format_value({"kind": "rr"})
    ('0.3', '[4, 4]', '{ kind = "rr" }')
    >>> print(format_value('say "hi"'))
    "say \\"hi\\""
    """
    if isinstance(value, float) and not isinstance(value, bool) and not math.isfinite(value):
        raise FlitsimError(f"override value must be finite, got {value!r}")
    if isinstance(value, (bool, int, float, str, _dt.date, _dt.time)):
        try:
            return _literal(value)
        except (TypeError, ValueError) as e:
            raise FlitsimError(f"cannot write {value!r} as TOML: {e}") from None
    if isinstance(value, os.PathLike):
        return _literal(os.fspath(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(k)} = {format_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise FlitsimError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def _toml_key(key: Any) -> str:
    """A key as TOML: bare when it can be, else quoted (by ``tomli_w``)."""
    return tomli_w.dumps({str(key): 0})[: -len(" = 0\n")]


def to_toml(data: Mapping[str, Any]) -> str:
    """Write a dict as TOML text.

    Nested dicts become ``[tables]``, lists of dicts ``[[arrays.of.tables]]``; strings,
    numbers, booleans and lists are written as by :func:`format_value`. Keys whose value is
    ``None`` are left out (TOML has no null; the engine then uses its default).

    >>> print(to_toml({"seed": 1, "topology": {"kind": "torus", "sides": [4, 4]},
    ...                "traffic": {"load": 0.3, "class": [{"name": "BE"}, {"name": "RT"}]}}))
    seed = 1
    <BLANKLINE>
    [topology]
    kind = "torus"
    sides = [4, 4]
    <BLANKLINE>
    [traffic]
    load = 0.3
    <BLANKLINE>
    [[traffic.class]]
    name = "BE"
    <BLANKLINE>
    [[traffic.class]]
    name = "RT"
    <BLANKLINE>
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"to_toml needs a dict, not {type(data).__name__}")
    lines: List[str] = []
    _write_table(lines, data, ())
    return "\n".join(lines).lstrip("\n") + "\n"


def _write_table(lines: List[str], table: Mapping[str, Any], path: Tuple[str, ...]) -> None:
    # Plain values first: in TOML they belong to the most recent header.
    nested = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, Mapping) or _is_table_array(value):
            nested.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {format_value(value)}")
    for key, value in nested:
        sub = path + (_toml_key(key),)
        if isinstance(value, Mapping):
            lines += ["", f"[{'.'.join(sub)}]"]
            _write_table(lines, value, sub)
        else:
            for item in value:
                lines += ["", f"[[{'.'.join(sub)}]]"]
                _write_table(lines, item, sub)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )
