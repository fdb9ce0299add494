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

def resolve_json(
    text: str,
    origin: str = "<string>",
    sets: List[str] = [],
    seed: Optional[int] = None,
) -> str:
    """Validate an experiment without running it; return JSON with ``config_hash``, ``seed``
    and the resolved ``config``. Raises :class:`FlitsimError` like :func:`run_json`."""

def schema_json() -> str:
    """The JSON Schema of experiment files."""

def version() -> str:
    """The version of the compiled flitsim core."""
