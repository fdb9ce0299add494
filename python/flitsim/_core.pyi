"""Type stubs of the private extension module ``flitsim._core`` (PyO3 bindings)."""

from typing import Dict, List, Optional, Tuple

__all__ = [
    "FlitsimError",
    "run_json",
    "resolve_json",
    "experiment_topology_json",
    "schema_json",
    "result_schema_json",
    "engine_names",
    "engine_aliases",
    "cycle_heuristics",
    "topology_formats",
    "dtable_json",
    "link_loads_json",
    "paths_json",
    "version",
    "topo_json",
    "topo_info_json",
    "topo_convert",
    "route_json",
    "ebb_json",
    "bandwidth_json",
    "rate_per_link",
    "cac_json",
    "cancel_request",
    "cancel_clear",
    "set_thread_cap",
]

class FlitsimError(ValueError):
    """A flitsim experiment could not be run: invalid configuration, override or input."""

def run_json(
    text: str,
    origin: str = "<string>",
    sets: List[str] = ...,
    seed: Optional[int] = None,
) -> str:
    """Run one experiment given as TOML text and return its summary as a JSON string.

    ``origin`` names the source in error messages, ``sets`` are ``key=value`` overrides and
    ``seed`` replaces the configuration's seed. The run goes on a worker thread with the GIL
    released; Ctrl-C stops it and raises ``KeyboardInterrupt`` (as in every function here
    that can take long: the topology, routing and bandwidth reports too).
    """

def resolve_json(
    text: str,
    origin: str = "<string>",
    sets: List[str] = ...,
    seed: Optional[int] = None,
) -> str:
    """Validate an experiment without running it; return JSON with ``config_hash``, ``seed``
    and the resolved ``config``. Raises :class:`FlitsimError` like :func:`run_json`."""

def experiment_topology_json(
    text: str,
    origin: str = "<string>",
    sets: List[str] = ...,
) -> str:
    """The topology the experiment (TOML text, ``key=value`` overrides ``sets``) builds, as
    flitsim topology JSON (the format of :func:`topo_json`); nothing is routed or run.
    Raises :class:`FlitsimError` like :func:`run_json`."""

def schema_json() -> str:
    """The JSON Schema of experiment files."""

def result_schema_json() -> str:
    """The JSON Schema of the summary :func:`run_json` returns (the Rust ``RunResult``).

    :mod:`flitsim.results` takes its table columns' types from it; ``cdg`` is any JSON value.
    """

def engine_names() -> List[str]:
    """The routing engine names ``routing.engine`` and :func:`route_json` accept, aliases
    included (``ENGINE_NAMES`` of the manager)."""

def engine_aliases() -> Dict[str, str]:
    """Engine names that select another engine: alias → engine (``updown-dmodk`` → ``dmodk``)."""

def cycle_heuristics() -> List[str]:
    """dfsssp's cycle-breaking heuristics (``heuristic`` in :func:`route_json`'s options),
    the default first."""

def topology_formats() -> List[str]:
    """The formats :func:`topo_convert` writes (``json``, ``ibnetdiscover``)."""

def dtable_json(
    entries: int,
    gmtu: int,
    w: int,
    k: int,
    unit_bytes: int,
    sls: List[Tuple[str, int, int, float]],
) -> str:
    """Build a DTable arbitration table; ``sls`` holds ``(name, max_distance, mtu, share)``.
    Returns JSON with ``pool``, ``total_weight``, ``sls`` and ``table``."""

def link_loads_json(
    spec_or_path: str,
    engine: Optional[str] = None,
    tables_dir: Optional[str] = None,
    max_vls: int = 8,
) -> str:
    """Flows per switch output port under all-to-all traffic (JSON with ``links``,
    ``switch_links_max_flows``, ``switch_links_mean_flows``)."""

def rate_per_link(rate: str, link_rate: str) -> float:
    """``rate`` as a fraction of ``link_rate``, both rates with units (``"40MB/s"``,
    ``"1.28Gb/s"``): the flits/cycle it stands for. ``ValueError`` when either is not a rate."""

def paths_json(
    spec_or_path: str,
    pairs: List[Tuple[int, int]],
    engine: Optional[str] = None,
    tables_dir: Optional[str] = None,
    max_vls: int = 8,
) -> str:
    """The LFT paths of the endpoint ``pairs`` ``(src, dst)`` as JSON (``engine``,
    ``topology``, ``endpoints``, ``paths``: one ``{src, dst, hops}`` per pair, every hop a
    switch with ``switch``, ``in_port``, ``out_port`` and the ``vl`` of the outgoing link);
    routing from ``engine`` or ``tables_dir`` (exactly one)."""

def version() -> str:
    """The version of the compiled flitsim core."""

def cac_json(
    spec_or_path: str,
    flows_path: str,
    engine: Optional[str] = None,
    lmc: int = 0,
    limit: float = 0.7,
    max_vls: int = 8,
) -> str:
    """Connection admission control as JSON (``topology``, ``engine``, ``endpoints``, ``lmc``,
    ``limit``, ``paths``, ``admitted``, ``rejected`` with the ``link`` that refused,
    ``unregulated``, ``links``: reserved load per link) of the ``[[flow]]`` entries of the TOML
    or JSON file ``flows_path``, over the routing of ``engine`` (default: the topology's) with
    ``2^lmc`` paths per destination, every link's QoS load kept within ``limit``."""

def cancel_request() -> None:
    """Ask every flitsim computation running in this process to stop; they fail with
    ``FlitsimError("interrupted")``. Call :func:`cancel_clear` once they have returned."""

def cancel_clear() -> None:
    """Withdraw :func:`cancel_request`, so that new computations run again."""

def set_thread_cap(n: int) -> int:
    """Limit the threads one run takes when its ``run.threads`` is not set, for this process
    (0: no limit). Returns the previous limit."""

def topo_json(spec_or_path: str) -> str:
    """The topology named by ``spec_or_path`` as flitsim topology JSON.

    ``spec_or_path`` is an existing ``.json`` file (flitsim's format), another existing file
    (an ibnetdiscover dump or ibsim net file) or a generator spec such as ``torus:6x6``.
    """

def topo_info_json(spec_or_path: str) -> str:
    """Facts about a topology as JSON: ``name``, ``switches``, ``endpoints``,
    ``inter_switch_links``, ``ports_min``, ``ports_max``, ``connected``, ``diameter`` (in
    switch-to-switch links, ``null`` when disconnected) and ``shape``."""

def topo_convert(spec_or_path: str, to: str) -> str:
    """The topology as ``"json"`` or ``"ibnetdiscover"`` text."""

def route_json(
    spec_or_path: str,
    engine: str,
    max_vls: int = 8,
    classes: int = 1,
    out_dir: Optional[str] = None,
    options_json: Optional[str] = None,
    guid2lid: Optional[str] = None,
) -> str:
    """Route a topology, verify its channel dependency graph and return the report as JSON
    (``engine``, ``switches``, ``endpoints``, ``vls_used``, ``deadlock_free``,
    ``runtime_seconds``, ``max_hops``, ``mean_hops``, ``routing_sls``, ``layers`` (VLs per class
    needed for deadlock freedom, ``None`` when unknown), ``memory_bytes``,
    ``cdg`` with per-VL verdicts, ``cycle``, ``files``, ``lids_assigned``, ``lmc``,
    ``path_diversity`` (with ``lmc`` > 0: ``paths``, ``pairs``, ``disjoint_share``,
    ``distinct_share``, ``mean_distinct_paths``, ``minimal_share``), …). ``guid2lid``
    names an OpenSM LID cache to take LIDs from; with ``out_dir`` nodes without a LID get one.

    With ``out_dir`` the OpenSM dumps (``opensm-lfts.dump``, ``guid2lid``,
    ``opensm-sl2vl.dump``, ``path-sl.txt``) are written there, all four or none.
    ``options_json`` is a JSON object of engine options: ``heuristic`` (``weakest``,
    ``strongest``, ``first``), ``online``, ``restarts`` (first-fit restarts after the
    paper's layering, default 8, 0 for the paper's algorithm alone), ``balance``,
    ``max_layers``, ``roots`` (switch GUIDs as strings) and ``lmc`` (0..7: every CA port gets
    2^lmc LIDs and every destination 2^lmc paths). The GIL is released while routing.
    """

def ebb_json(
    spec_or_path: str,
    engine: Optional[str] = None,
    tables_dir: Optional[str] = None,
    patterns: int = 100,
    seed: int = 1,
    max_vls: int = 8,
) -> str:
    """Effective bisection bandwidth as JSON (``ebb_mean``, ``ebb_min``, ``ebb_max``,
    ``patterns``, ``seed``, ``engine``, ``topology``, ``endpoints``, ``runtime_seconds``) of
    the routing by ``engine`` or of the OpenSM dumps in ``tables_dir`` (exactly one)."""

def bandwidth_json(
    spec_or_path: str,
    flows: List[Tuple[int, int, float]],
    best_effort: List[Tuple[int, int]] = ...,
    engine: Optional[str] = None,
    dispatch_time: float = 16.0,
    mtu: float = 16.0,
    node_capacity: Optional[float] = None,
    max_vls: int = 8,
) -> str:
    """Bandwidth manager verdicts as JSON (``topology``, ``engine``, ``endpoints``,
    ``dispatch_time``, ``mtu``, ``b_max``, ``flows``: ``src``, ``dst``, ``best_effort``,
    ``requested``, ``admitted``, ``granted``, ``idt``, ``refused_by``) for the premium
    ``flows`` ``(src, dst, flits/cycle)`` in order, then the ``best_effort`` ``(src, dst)``."""
