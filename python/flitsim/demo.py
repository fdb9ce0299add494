"""A self-contained demonstration: a load sweep on a small torus.

``flitsim demo`` runs :data:`DEMO_CONFIG` (a 4x4 torus, one endpoint per switch, uniform
random traffic, dimension-order routing) at offered loads 0.1 … 0.6 flits/cycle/endpoint and
shows how accepted load and latency behave as the network approaches saturation.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Union

from . import __version__, _collect_sets, _run_text

DEMO_CONFIG = """\
# flitsim demo: 4x4 torus, one endpoint per switch, uniform random traffic.
seed = 1

[topology]
kind = "torus"
sides = [4, 4]
endpoints_per_switch = 1
link_latency = 1

[routing]
engine = "dor"
vls = 2

[switch]
vl_buffer_flits = 16
routing_delay = 1

[traffic]
load = 0.1
pattern = "uniform"

[[traffic.class]]
name = "BE"
share = 1.0
message_flits = 16
mtu_flits = 16

[run]
warmup = 2000
measure = 5000
"""

DEMO_LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)

CSV_FIELDS = (
    "load",
    "offered_load",
    "accepted_load",
    "latency_mean",
    "latency_p50",
    "latency_p99",
    "saturated",
    "seed",
    "config_hash",
    "flitsim_version",
)


def run_demo(
    loads: Iterable[float] = DEMO_LOADS, seed: Optional[int] = None
) -> List[Dict[str, object]]:
    """Run the demo configuration at each load; return one row per load."""
    rows = []
    for load in loads:
        sets = _collect_sets(None, {"traffic__load": float(load)})
        r = json.loads(_run_text(DEMO_CONFIG, "<demo>", sets, seed))
        lat = r.get("latency") or {}
        rows.append(
            {
                "load": float(load),
                "offered_load": r.get("offered_load"),
                "accepted_load": r.get("accepted_load"),
                "latency_mean": lat.get("mean"),
                "latency_p50": lat.get("p50"),
                "latency_p99": lat.get("p99"),
                "saturated": r.get("saturated"),
                "seed": r.get("seed"),
                "config_hash": r.get("config_hash"),
                "flitsim_version": __version__,
            }
        )
    return rows


def write_csv(rows: List[Dict[str, object]], path: Union[str, Path]) -> Path:
    """Write demo rows as CSV, creating the parent directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for row in rows:
            w.writerow({k: row.get(k) for k in CSV_FIELDS})
    return path
