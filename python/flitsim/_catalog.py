"""Names the core accepts that the Python layer shows in help texts and choices.

THE ONE COPY IN PYTHON. The compiled core (``flitsim._core``) does not export these lists: its
JSON Schema has ``routing.engine`` as a free string, and the routing engines and dfsssp's
cycle heuristics are only named in its error messages. Until the core exports them (a
``_core`` function such as ``engine_names()``; a Rust change), they are kept here and
nowhere else, and ``tests/python/test_catalog.py`` checks them against the names the core's
own error messages list, so that a change in the core fails the tests instead of leaving
these stale.

Source in the core: ``ENGINE_NAMES`` in crates/flitsim-manager/src/routing/mod.rs and
``CycleHeuristic`` in crates/flitsim-manager/src/routing/layered.rs.
"""

from __future__ import annotations

# Routing engines of `flitsim route/ebb --engine` and `routing.engine` ("updown-dmodk" is
# an alias of "dmodk", left out of help texts).
ENGINE_NAMES = ("dor", "dmodk", "updown-dmodk", "minhop", "ftree", "updn", "sssp", "lash",
                "dfsssp")
ENGINE_ALIASES = {"updown-dmodk": "dmodk"}
# dfsssp: which edge of a dependency cycle to cut (`flitsim route --heuristic`).
CYCLE_HEURISTICS = ("weakest", "strongest", "first")


def engines_for_help() -> str:
    """``"dor, dmodk, minhop, … or dfsssp"`` (aliases left out)."""
    names = [n for n in ENGINE_NAMES if n not in ENGINE_ALIASES]
    return ", ".join(names[:-1]) + " or " + names[-1]
