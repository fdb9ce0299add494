"""DUMPI traces inside experiments: ``[traffic.trace]`` with ``format = "dumpi"``.

The engine reads VEF only. Before an experiment runs (:func:`flitsim.run`, ``flitsim run``,
sweeps), :func:`experiment_sets` looks at the experiment's ``traffic.trace`` (after the
overrides); when its format is ``dumpi`` it converts the DUMPI trace at ``path`` (a directory of
per-rank files, or one of them, as ``flitsim trace convert`` takes) to VEF once, keeps the VEF
in a cache keyed by the content of the rank files, and hands the engine that file through the
override ``traffic.trace.converted``. The configuration hash covers the converted trace's text.

The cache directory is ``$FLITSIM_CACHE_DIR/traces`` when that variable is set, else
``$XDG_CACHE_HOME/flitsim/traces``, else ``~/.cache/flitsim/traces``. A cached file is
``<sha256 of the rank files, 24 hex digits>.vef``; deleting the directory is always safe.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._core import FlitsimError

# Bumped when the conversion changes, so that old cached files are not reused.
CONVERTER_VERSION = "1"

_lock = threading.Lock()
# (rank files with their size and mtime) -> content key, so that a sweep hashes a trace once.
_keys: Dict[Tuple[Tuple[str, int, int], ...], str] = {}


def cache_dir() -> Path:
    """Where converted traces are kept (module docstring)."""
    env = os.environ.get("FLITSIM_CACHE_DIR")
    if env:
        return Path(env) / "traces"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "flitsim" / "traces"


def _content_key(files: Sequence[Path]) -> str:
    stamp = tuple((str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    key = _keys.get(stamp)
    if key is None:
        h = hashlib.sha256(f"flitsim-dumpi-{CONVERTER_VERSION}\0{len(files)}\0".encode())
        for f in files:
            h.update(f"{f.stat().st_size}\0".encode())
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        key = h.hexdigest()[:24]
        _keys[stamp] = key
    return key


def rank_files_key(source: Path) -> str:
    """The content key of the DUMPI trace at ``source``: the name of its cached conversion."""
    from .dumpi import rank_files

    return _content_key(rank_files(source))


def converted_vef(source: Path) -> Path:
    """The cached VEF conversion of the DUMPI trace at ``source``, made when missing.

    Raises :class:`FlitsimError` for a bad trace and :class:`ImportError` without pydumpi.
    """
    from .dumpi import rank_files, read_dumpi
    from .vef import write_vef_file

    files = rank_files(source)
    target = cache_dir() / f"{_content_key(files)}.vef"
    with _lock:
        if target.is_file():
            return target
        converted = read_dumpi(source)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_vef_file(converted, target)
        except OSError as e:
            raise FlitsimError(f"cannot write the converted trace to {target}: {e}") from None
    if converted.unsupported:
        n = sum(converted.unsupported.values())
        names = ", ".join(f"{k} {v}" for k, v in sorted(converted.unsupported.items()))
        print(f"warning: {source}: {n} MPI calls could not be modelled and are not replayed: "
              f"{names}", file=sys.stderr)
    return target


def _effective_trace(text: str, sets: Sequence[str]) -> Optional[Dict[str, Any]]:
    """``traffic.trace`` of the TOML ``text`` with the overrides applied, or None."""
    from ..values import parse_set, toml_loads

    try:
        doc: Any = toml_loads(text)
    except Exception:  # the engine reports a bad file with its line
        return None
    for item in sets:
        try:
            key, value = parse_set(item)
        except FlitsimError:
            return None  # reported by the engine
        parts = key.split(".")
        node = doc
        for p in parts[:-1]:
            nxt = node.get(p) if isinstance(node, dict) else None
            if not isinstance(nxt, dict):
                nxt = {}
                if isinstance(node, dict):
                    node[p] = nxt
            node = nxt
        if isinstance(node, dict):
            node[parts[-1]] = value
    traffic = doc.get("traffic")
    trace = traffic.get("trace") if isinstance(traffic, dict) else None
    return trace if isinstance(trace, dict) else None


def experiment_sets(text: str, origin: str, sets: Sequence[str]) -> List[str]:
    """``sets`` plus, for a ``dumpi`` trace, the override naming its cached VEF conversion.

    Errors name the experiment and the key: ``<origin>: key `traffic.trace.path`: …``.
    """
    trace = _effective_trace(text, sets)
    if trace is None or trace.get("format") != "dumpi" or "converted" in trace:
        return list(sets)
    path = trace.get("path")
    if not isinstance(path, str):
        return list(sets)  # the engine reports the missing or mistyped key
    base = Path(origin).parent
    source = base / path if origin not in ("<string>", "<dict>") and base.exists() else Path(path)
    try:
        vef = converted_vef(source)
    except ImportError as e:
        raise FlitsimError(f"{origin}: key `traffic.trace.format`: \"dumpi\": {e}") from None
    except FlitsimError as e:
        raise FlitsimError(f"{origin}: key `traffic.trace.path`: {e}") from None
    return [*sets, f"traffic.trace.converted={_quote(str(vef))}"]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
