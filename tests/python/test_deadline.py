"""Deadline-based QoS from the CLI and the Python API: the paper's scenario runs under every
architecture, results carry the `deadline` object of the contract, and bad keys are user
errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import flitsim
from helpers import assert_user_error, invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ARCHS = ["traditional_2vc", "traditional_4vc", "simple_2vc", "advanced_2vc", "ideal"]
SHORT = ["--set", 'run.warmup="100us"', "--set", 'run.measure="300us"']


@pytest.mark.parametrize("arch", ARCHS)
def test_every_architecture_runs_and_reports_deadline_keys(arch):
    r = invoke(CliRunner(), "run", EXAMPLES / f"deadline-qos-{arch}.toml", *SHORT, "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)["deadline"]
    assert d["architecture"] == arch
    assert [c["class"] for c in d["discarded"]] == [
        "control", "video", "besteffort", "background"]
    assert d["order_errors"] == sum(d["order_errors_by_vl"])
    edf = arch not in ("traditional_2vc", "traditional_4vc")
    assert (d["max_ttd_ns"] is not None) == edf
    if arch in ("ideal",) or not edf:
        assert d["order_errors"] == 0


def test_text_summary_names_the_architecture_and_admission_is_reported():
    r = invoke(CliRunner(), "run", EXAMPLES / "deadline-qos-advanced_2vc.toml", *SHORT)
    assert r.exit_code == 0, r.stderr
    assert "advanced_2vc; order errors" in r.stdout
    result = flitsim.run(EXAMPLES / "deadline-qos-simple_2vc.toml",
                         sets=['run.warmup="100us"', 'run.measure="300us"'])
    a = result["admission"]
    assert a["limit"] == 0.7 and len(a["admitted"]) == 128 * 83 and a["rejected"] == []


def test_bad_architecture_is_a_user_error():
    r = invoke(CliRunner(), "run", EXAMPLES / "deadline-qos-ideal.toml",
               "--set", 'qos.architecture="edf"')
    assert_user_error(r, "qos.architecture")
