"""Helpers shared by the tests: the tiny config, the summary contract and the command line."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from flitsim.cli import main

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


# -- two-class configs shared by the sweep, plot and report tests ------------------------------

# The start of both: a 4x4 torus with dimension-order routing (the VL count follows).
TORUS_4X4_DOR = """\
seed = 1

[topology]
kind = "torus"
sides = [4, 4]

[routing]
engine = "dor"
"""

# Two classes on a 4x4 torus, short runs: saturates between loads 0.6 and 0.9.
TWO_CLASS_CONFIG = TORUS_4X4_DOR + """\
vls = 4

[switch]
vl_buffer_flits = 32
scheduler = { kind = "strict_priority", order = [0, 1, 2, 3] }

[nic]
scheduler = { kind = "strict_priority", order = [0, 1, 2, 3] }

[traffic]
load = 0.1

[[traffic.class]]
name = "hi"
share = 1.0
message_flits = 8

[[traffic.class]]
name = "lo"
share = 3.0
message_flits = 16

[run]
warmup = 500
measure = 2000
"""

# Two classes (1/4 small messages, 3/4 big ones) on a 4x4 torus with output-buffered switches,
# short runs: every scheduler saturates at load 0.9.
QOS_CONFIG = TORUS_4X4_DOR + """\
vls = 2

[switch]
vl_buffer_flits = 32
output_buffer_flits = 32
speedup = 2

[qos]
scheduler = "rr"

[qos.dtable]
entries = 32
w = 8
k = 2
max_distance = [4, 4]

[traffic]
load = 0.3
pattern = "uniform"

[[traffic.class]]
name = "small"
share = 0.25
message_flits = 2

[[traffic.class]]
name = "big"
share = 0.75
message_flits = 16

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


# -- the command line ------------------------------------------------------------------------


def cli_runner() -> CliRunner:
    """A runner that keeps stderr apart from stdout (click >= 8.2 always does; older clicks
    need the flag)."""
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def invoke(runner: CliRunner, *args):
    """Run `flitsim ARGS…` in-process; arguments may be paths or numbers."""
    return runner.invoke(main, [str(a) for a in args], prog_name="flitsim", catch_exceptions=False)


def assert_user_error(result, *fragments: str) -> None:
    """The command failed as bad input should: exit status 2, `error: …` on stderr naming every
    fragment, no traceback, nothing on stdout."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)
    assert result.stdout == ""


def console_script() -> str:
    """The installed `flitsim` command (beside this Python first, then on PATH)."""
    beside_python = Path(sys.executable).parent / "flitsim"
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("flitsim")
    assert found, "the `flitsim` console script is not installed (pip install .)"
    return found
