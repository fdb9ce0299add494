"""flitsim: a flit-level simulator of lossless, credit-based HPC interconnects.

The simulation engine is written in Rust (the private extension module ``flitsim._core``);
this package is its Python front end. One experiment is described by a TOML file (see the
``examples/`` directory of the repository), TOML text or a dict; :func:`run` runs it and
returns a :class:`Result`, which reads like the summary dict and offers Arrow tables::

    >>> import flitsim
    >>> config = {"seed": 1,
    ...           "topology": {"kind": "torus", "sides": [4, 4]},
    ...           "traffic": {"load": 0.2, "class": [{"name": "BE", "message_flits": 16}]},
    ...           "run": {"warmup": 200, "measure": 1000}}
    >>> r = flitsim.run(config, seed=3, traffic__load=0.3)
    >>> r["seed"], r["saturated"], r.per_sl["name"].to_pylist()
    (3, False, ['BE'])
    >>> round(r["accepted_load"], 1), r["latency"]["p99"] > 0
    (0.3, True)

:func:`sweep` runs a grid of experiments (cartesian product of varied keys × seeds) on
threads or a Dask cluster, and can store it as a resumable Parquet dataset that
:func:`load_sweep` reads back.

Invalid configurations raise :class:`FlitsimError` (a :class:`ValueError`) whose message
names the file, the key and, where known, the line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._core import FlitsimError
from .results import Result
from .values import check_set, format_value, to_toml

__all__ = [
    "FlitsimError",
    "Result",
    "SweepInterrupted",
    "SweepResult",
    "__version__",
    "load_sweep",
    "run",
    "sweep",
    "to_toml",
]

__version__: str = _core.version()

# Show the error as part of the public package in tracebacks, not of the private module.
try:
    FlitsimError.__module__ = "flitsim"
except (AttributeError, TypeError):
    pass

ConfigSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def run(
    config: ConfigSource,
    *,
    seed: Optional[int] = None,
    sets: Optional[Iterable[str]] = None,
    **overrides: Any,
) -> Result:
    """Run one experiment and return its :class:`Result`.

    ``config`` is the path of an experiment file (``str`` or :class:`pathlib.Path`), the
    TOML text itself, or a dict (nested dicts are tables, a list of dicts is an array of
    tables such as ``traffic.class``; see :func:`to_toml`). A ``str`` naming an existing
    file is read as a file; a ``str`` holding a newline or ``=`` is TOML text; any other
    ``str`` is taken as a missing path.

    Overrides change single keys of the configuration before it is validated:

    * keyword arguments, with ``__`` standing for the dot of a key path
      (``traffic__load=0.3`` sets ``traffic.load``); Python values are written as TOML
      (``True`` → ``true``, ``"uniform"`` → ``"uniform"``, ``[4, 4]`` → ``[4, 4]``);
    * ``sets``, a list of ``"key=value"`` strings exactly as given to ``flitsim run --set``.

    Keyword overrides are applied after ``sets``. ``seed`` replaces the configuration's seed.

    The :class:`Result` reads like the engine's JSON summary as a dict (keys ``seed``,
    ``config_hash``, ``cycles``, ``offered_load``, ``accepted_load``, ``saturated``,
    ``latency``, ``network_latency``, ``hops_mean``, ``flits``, ``per_sl``,
    ``latency_histogram``, ``ports``, ``deadlock``, ``cdg``, ``performance``); its
    ``.summary`` is that dict and ``.per_sl``, ``.ports`` and ``.latency_histogram`` are
    :class:`pyarrow.Table` views. Apart from ``performance`` (wall-clock timings) it is
    identical for the same config and seed.

    Example::

        >>> import flitsim
        >>> cfg = '''
        ... seed = 1
        ... [topology]
        ... kind = "torus"
        ... sides = [4, 4]
        ... [traffic]
        ... load = 0.2
        ... [run]
        ... warmup = 500
        ... measure = 1000
        ... '''
        >>> r = flitsim.run(cfg, seed=7, sets=["routing.vls=2"], traffic__load=0.4)
        >>> r["seed"], r["cycles"]["measure"], r.per_sl.num_rows
        (7, 1000, 1)

    The GIL is released while the engine runs, so several experiments can run at once from
    a :class:`concurrent.futures.ThreadPoolExecutor` (which is what :func:`sweep` does).
    """
    text, origin = _read_config(config)
    all_sets = _collect_sets(sets, overrides)
    return Result.from_json(_run_text(text, origin, all_sets, seed))


def _run_text(text: str, origin: str, sets: Sequence[str], seed: Optional[int]) -> str:
    """Run the engine on TOML text and return its JSON summary unparsed."""
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise FlitsimError(f"seed must be an integer, got {seed!r}")
        if not 0 <= seed < 2**64:
            raise FlitsimError(f"seed must be in 0..2^64-1, got {seed}")
    from .traces.cache import experiment_sets

    return _core.run_json(text, origin, experiment_sets(text, origin, sets), seed)


def _read_config(config: ConfigSource) -> Tuple[str, str]:
    """Return ``(toml_text, origin)`` for a path, a TOML string or a dict."""
    if isinstance(config, os.PathLike):
        return _read_file(Path(config))
    if isinstance(config, Mapping):
        return to_toml(config), "<dict>"
    if not isinstance(config, str):
        raise TypeError(
            f"config must be a path, TOML text or a dict, not {type(config).__name__}"
        )
    if "\n" in config or "=" in config:
        if "\n" not in config and _is_file(config):
            return _read_file(Path(config))
        return config, "<string>"
    return _read_file(Path(config))


def _is_file(name: str) -> bool:
    try:
        return Path(name).is_file()
    except (OSError, ValueError):  # e.g. a name too long for the file system
        return False


def _read_file(path: Path) -> Tuple[str, str]:
    if not path.exists():
        raise FileNotFoundError(f"experiment file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"experiment file is a directory: {path}")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except UnicodeDecodeError as e:
        raise FlitsimError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _collect_sets(sets: Optional[Iterable[str]], overrides: Mapping[str, Any]) -> list:
    if isinstance(sets, str):
        raise TypeError("sets must be a list of 'key=value' strings, not a single string")
    result = [check_set(s) for s in (sets or ())]
    for name, value in overrides.items():
        key = name.replace("__", ".")
        result.append(f"{key}={format_value(value)}")
    return result


# The sweep machinery needs the helpers above, so it is imported last.
from .sweep import SweepInterrupted, SweepResult, load_sweep, sweep  # noqa: E402
