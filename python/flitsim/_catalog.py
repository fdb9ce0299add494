"""Names the core accepts that the Python layer shows in help texts and choices.

Every list here is read from the compiled core (``flitsim._core``), which exports its own
sources of truth; nothing is copied by hand:

* :data:`ENGINE_NAMES` and :data:`ENGINE_ALIASES`: ``ENGINE_NAMES`` and ``ENGINE_ALIASES`` in
  crates/flitsim-manager/src/routing/mod.rs (``_core.engine_names()``,
  ``_core.engine_aliases()``);
* :data:`CYCLE_HEURISTICS`: ``CycleHeuristic::ALL`` in the manager's dfsssp layering
  (``_core.cycle_heuristics()``), the default first;
* :data:`TOPOLOGY_FORMATS`: ``TOPOLOGY_FORMATS`` in crates/flitsim-app/src/report.rs
  (``_core.topology_formats()``).
"""

from __future__ import annotations

from typing import Dict, Tuple

from . import _core

# Routing engines of `flitsim route/ebb --engine` and `routing.engine`, aliases included.
ENGINE_NAMES: Tuple[str, ...] = tuple(_core.engine_names())
# Alias → engine ("updown-dmodk" → "dmodk"); aliases are left out of help texts.
ENGINE_ALIASES: Dict[str, str] = dict(_core.engine_aliases())
# dfsssp: which edge of a dependency cycle to cut (`flitsim route --heuristic`).
CYCLE_HEURISTICS: Tuple[str, ...] = tuple(_core.cycle_heuristics())
# Formats of `flitsim topo generate/convert` (`_core.topo_convert`).
TOPOLOGY_FORMATS: Tuple[str, ...] = tuple(_core.topology_formats())


def engines_for_help() -> str:
    """``"dor, dmodk, minhop, … or dfsssp"`` (aliases left out)."""
    names = [n for n in ENGINE_NAMES if n not in ENGINE_ALIASES]
    return ", ".join(names[:-1]) + " or " + names[-1]
