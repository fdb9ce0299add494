"""Type stubs of the private extension module ``flitsim._core`` (PyO3 bindings)."""

from typing import List, Optional

class FlitsimError(ValueError):
    """A flitsim experiment could not be run: invalid configuration, override or input."""

def run_json(
    text: str,
    origin: str = "<string>",
    sets: List[str] = [],
    seed: Optional[int] = None,
) -> str:
    """Run one experiment given as TOML text and return its summary as a JSON string.

    ``origin`` names the source in error messages, ``sets`` are ``key=value`` overrides and
    ``seed`` replaces the configuration's seed. The GIL is released during the run.
    """

def version() -> str:
    """The version of the compiled flitsim core."""
