"""How flitsim prints values: numbers in tables, labels of varied values, table rows.

One module for the command line (``run``, ``bench``, ``demo``, ``sweep``, ``qos``), the HTML
report and the plots, so that the same value reads the same everywhere.

>>> fixed(0.12345, 3), fixed(None, 1), fixed(True, 0), fixed(float("nan"), 1, nonfinite="–")
('0.123', '-', 'yes', '–')
>>> value_label(0.1), value_label([4, 4]), value_label(True), short_label({"a": [1, 2]})
('0.1', '4x4', 'true', '{"a":[1,2]}')
>>> row(("name", "1.0", "2"), (6, 4, 3))
'name    1.0   2'
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional, Sequence

from ._core import FlitsimError

# What the HTML report prints for a missing or non-finite number.
DASH = "–"


def fixed(
    value: Any, digits: int, *, missing: str = "-", nonfinite: Optional[str] = None
) -> str:
    """A number with ``digits`` decimals; ``missing`` for ``None``; ``yes``/``no`` for a
    bool; ``nonfinite`` (when given) for NaN and infinities; anything else as ``str``."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return yes_no(value)
    if isinstance(value, (int, float)):
        if nonfinite is not None and not math.isfinite(value):
            return nonfinite
        return f"{value:.{digits}f}"
    return str(value)


def with_ci(estimate: Any, digits: int) -> str:
    """An :class:`flitsim.stats.Estimate` as ``mean ± half`` (the mean alone with one seed
    or no interval); missing numbers print as :data:`DASH`."""
    text = fixed(estimate.mean, digits, missing=DASH, nonfinite=DASH)
    if estimate.n > 1 and math.isfinite(estimate.half):
        text += f" ± {fixed(estimate.half, digits, missing=DASH, nonfinite=DASH)}"
    return text


def scale(value: Any, factor: float) -> Any:
    """``value * factor`` for a number, anything else unchanged."""
    return value * factor if isinstance(value, (int, float)) else value


def yes_no(value: Any) -> str:
    if value is None:
        return "-"
    return "yes" if value else "no"


def value_label(value: Any) -> str:
    """A configuration value as short TOML-ish text: ``0.3``, ``8``, ``true``, ``dor``,
    ``4x4`` (a list), a table as its TOML inline table. Sweep directory names and columns
    of list values are built from it, so it must not change."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format(value, ".12g")
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "x".join(value_label(v) for v in value)
    from .values import format_value

    try:
        return format_value(value)
    except FlitsimError:
        return str(value)


def short_label(value: Any, limit: int = 60) -> str:
    """A value for a plot title or a report cell: floats as ``%g``, lists and tables as
    compact JSON, cut to ``limit`` characters."""
    if isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, separators=(",", ":"))
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def row(cells: Sequence[str], widths: Sequence[int], left: int = 1, sep: str = " ") -> str:
    """One table row: the first ``left`` cells left-aligned, the others right-aligned,
    joined by ``sep``; trailing blanks removed."""
    out = []
    for i, (cell, width) in enumerate(zip(cells, widths)):
        out.append(f"{cell:<{width}}" if i < left else f"{cell:>{width}}")
    return sep.join(out).rstrip()
