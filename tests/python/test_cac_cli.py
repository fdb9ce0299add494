"""`flitsim cac`: connection admission control of QoS flows from a flow file, and the
folded perfect-shuffle MIN it was built for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import assert_user_error, invoke

FLOWS = """
[[flow]]
name = "video-0"
src = 0
dst = 3
rate = 0.3

[[flow]]
src = 1
dst = 3
rate = 0.3

[[flow]]
name = "video-2"
src = 2
dst = 3
rate = 0.3

[[flow]]
name = "control"
src = 2
dst = 3
rate = 1.0
qos = false
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def ok_json(runner: CliRunner, *args: str) -> dict:
    r = invoke(runner, *args)
    assert r.exit_code == 0, r.output + (r.stderr or "")
    return json.loads(r.stdout)


def test_cac_json_admits_rejects_and_reports_link_loads(runner, tmp_path):
    flows = write(tmp_path, "flows.toml", FLOWS)
    r = ok_json(runner, "cac", "kary-ntree:k=4,n=1", "--flows", str(flows), "--limit", "0.7",
                "--json")
    assert {"admitted", "rejected", "unregulated", "links", "limit", "paths", "engine"} <= set(r)
    assert r["limit"] == 0.7 and r["paths"] == 1
    assert [a["flow"] for a in r["admitted"]] == [0, 1]
    assert r["admitted"][0]["name"] == "video-0"
    assert {"flow", "src", "dst", "rate", "path", "max_load"} <= set(r["admitted"][0])
    (x,) = r["rejected"]
    assert (x["flow"], x["name"], x["limit"]) == (2, "video-2", 0.7)
    assert x["load"] == pytest.approx(0.6)
    link = x["link"]
    assert link["name"] == 'switch "sw_l0_0" port 3 → endpoint 3 ("ep3")'
    assert link["from"] == {"switch": "sw_l0_0", "port": 3}
    assert link["to"] == {"endpoint": 3, "name": "ep3"}
    assert [u["name"] for u in r["unregulated"]] == ["control"]
    loads = {entry["name"]: (entry["load"], entry["flows"]) for entry in r["links"]}
    assert loads[link["name"]] == (pytest.approx(0.6), 2)
    assert all(entry["load"] > 0 for entry in r["links"])
    # The same again: deterministic output.
    again = invoke(runner, "cac", "kary-ntree:k=4,n=1", "--flows", str(flows), "--json")
    assert json.loads(again.stdout) == r


def test_cac_balances_over_lmc_paths_of_the_papers_min(runner, tmp_path):
    flows = {"flow": [{"src": s, "dst": 8 + s, "rate": 0.6} for s in range(8)]}
    path = write(tmp_path, "flows.json", json.dumps(flows))
    r = ok_json(runner, "cac", "min:endpoints=128,radix=16", "--flows", str(path),
                "--lmc", "3", "--json")
    assert (r["endpoints"], r["paths"], r["engine"]) == (128, 8, "minhop")
    assert len(r["admitted"]) == 8 and not r["rejected"]
    assert len(r["links"]) == 32
    assert all(entry["load"] == pytest.approx(0.6) for entry in r["links"])


def test_cac_human_table(runner, tmp_path):
    flows = write(tmp_path, "flows.toml", FLOWS)
    r = invoke(runner, "cac", "kary-ntree:k=4,n=1", "--flows", str(flows))
    assert r.exit_code == 0, r.stderr
    assert "admitted 2, rejected 1, unregulated 1" in r.stdout
    assert "rejected: switch \"sw_l0_0\" port 3" in r.stdout
    assert "most loaded links:" in r.stdout


def test_cac_bad_flow_files_are_user_errors(runner, tmp_path):
    topo = "kary-ntree:k=4,n=1"

    def run(text: str, name: str = "flows.toml"):
        return invoke(runner, "cac", topo, "--flows", str(write(tmp_path, name, text)))

    two = "[[flow]]\nsrc = 0\ndst = 1\nrate = 0.1\n[[flow]]\nsrc = 0\ndst = 1\n"
    assert_user_error(run(two + 'rate = "fast"\n'), "flows.toml: flow[1].rate: invalid type")
    assert_user_error(run(two + "rate = -1\n"), "flows.toml: flow[1].rate: -1: must be a positive")
    assert_user_error(run(two + "rate = 0.1\nsize = 3\n"), "flow[1].size: unknown field `size`")
    assert_user_error(run("[[flow]]\nsrc = 0\ndst = 7\nrate = 0.1\n"),
                      "flow[0].dst: endpoint 7 does not exist")
    assert_user_error(run("[[flow]]\nsrc = 2\ndst = 2\nrate = 0.1\n"), "flow[0].dst", "itself")
    assert_user_error(run('{"flow": [{"src": 0}]}', "flows.json"), "flows.json: flow[0]",
                      "missing field `dst`")
    assert_user_error(run("flow = []\n"), "no flows")
    assert_user_error(run("[[flow\n"), "not valid TOML")
    missing = invoke(runner, "cac", topo, "--flows", str(tmp_path / "absent.toml"))
    assert_user_error(missing, "cannot read flow file")
    flows = write(tmp_path, "ok.toml", "[[flow]]\nsrc = 0\ndst = 1\nrate = 0.1\n")
    assert_user_error(invoke(runner, "cac", topo, "--flows", str(flows), "--limit", "1.5"),
                      "--limit 1.5")
    assert_user_error(invoke(runner, "cac", "min:endpoints=100,radix=16", "--flows", str(flows)),
                      "try 96 or 104")
