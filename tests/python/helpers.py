"""Helpers shared by the tests: the tiny config and the summary contract."""

from __future__ import annotations

TINY_CONFIG = """\
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
load = 0.3
pattern = "uniform"

[[traffic.class]]
name = "BE"
share = 1.0
message_flits = 16
mtu_flits = 16

[run]
warmup = 300
measure = 1000
"""

# The keys every summary has (the `flitsim run --json` contract).
SUMMARY_KEYS = {
    "seed",
    "config_hash",
    "cycles",
    "endpoints",
    "offered_load",
    "accepted_load",
    "saturated",
    "latency",
    "network_latency",
    "hops_mean",
    "flits",
    "per_sl",
    "performance",
}
LATENCY_KEYS = {"mean", "p50", "p99", "max"}
PER_SL_KEYS = {"sl", "name", "offered_load", "accepted_load", "share", "latency"}
PERFORMANCE_KEYS = {"wall_seconds", "cycles_per_second", "flit_hops", "flit_hops_per_second"}


def without_performance(summary: dict) -> dict:
    """The summary less its wall-clock block, which is the only part allowed to vary."""
    return {k: v for k, v in summary.items() if k != "performance"}


def check_summary(summary: dict) -> None:
    """Assert that a summary follows the contract and is internally consistent."""
    assert SUMMARY_KEYS <= summary.keys(), SUMMARY_KEYS - summary.keys()
    assert set(summary["cycles"]) >= {"warmup", "measure", "total"}
    assert set(summary["flits"]) >= {"generated", "delivered", "remaining"}
    assert LATENCY_KEYS <= summary["latency"].keys()
    assert LATENCY_KEYS <= summary["network_latency"].keys()
    assert PERFORMANCE_KEYS <= summary["performance"].keys()
    assert isinstance(summary["saturated"], bool)
    assert summary["endpoints"] == 16
    assert summary["per_sl"], "per_sl lists at least the one configured class"
    for row in summary["per_sl"]:
        assert PER_SL_KEYS <= row.keys()
        assert LATENCY_KEYS <= row["latency"].keys()
    lat = summary["latency"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
    flits = summary["flits"]
    # Flit conservation: nothing is dropped in a lossless fabric.
    assert flits["delivered"] + flits["remaining"] == flits["generated"]
    assert 0 < summary["accepted_load"]
