"""The fabric commands: `flitsim topo`, `flitsim route`, `flitsim ebb`, and simulating dumped
routing tables with `routing.tables`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from flitsim.cli import main
from helpers import TINY_CONFIG, assert_user_error, invoke, without_performance

ROUTE_KEYS = {
    "engine",
    "switches",
    "endpoints",
    "vls_used",
    "deadlock_free",
    "runtime_seconds",
    "max_hops",
    "mean_hops",
}
EBB_KEYS = {"ebb_mean", "ebb_min", "ebb_max", "patterns"}
DUMPS = ("opensm-lfts.dump", "guid2lid", "opensm-sl2vl.dump", "path-sl.txt")
RANDOM = "random:switches=12,ports=8,endpoints=2,links=20,seed=5"
LOGINOFF = (
    Path(__file__).resolve().parents[2] / ".." / "shared/testdata/fabrics/loginoff-8sw-145ca.topo"
).resolve()


def ok_json(runner: CliRunner, *args: str) -> dict:
    r = invoke(runner, *args)
    assert r.exit_code == 0, r.output + (r.stderr or "")
    return json.loads(r.stdout)


# ----------------------------------------------------------------------------------- route


def test_route_json_dor_on_a_torus(runner):
    r = ok_json(runner, "route", "torus:4x4", "--engine", "dor", "--max-vls", "2", "--json")
    assert ROUTE_KEYS <= r.keys()
    assert r["engine"] == "dor"
    assert (r["switches"], r["endpoints"]) == (16, 16)
    assert r["deadlock_free"] is True
    assert r["max_hops"] == 4
    assert 0 < r["mean_hops"] < 4
    assert r["vls_used"] == 2
    assert r["cycle"] is None
    assert all(v["acyclic"] for v in r["cdg"]["per_vl"])
    # With the default 8 VLs, DOR spreads paths over 4 lanes of 2 VLs.
    r = ok_json(runner, "route", "torus:4x4", "--engine", "dor", "--json")
    assert (r["vls_used"], r["routing_sls"], r["deadlock_free"]) == (8, 16, True)


def test_route_json_dfsssp_on_a_random_topology(runner):
    r = ok_json(runner, "route", RANDOM, "--engine", "dfsssp", "--json")
    assert ROUTE_KEYS <= r.keys()
    assert r["engine"] == "dfsssp"
    assert (r["switches"], r["endpoints"]) == (12, 24)
    assert r["deadlock_free"] is True
    assert r["runtime_seconds"] >= 0
    assert r["routing_sls"] >= 1


def test_route_nue_is_deadlock_free_within_any_vl_budget(runner):
    for vls in (1, 2, 8):
        r = ok_json(runner, "route", "torus:6x6", "--engine", "nue", "--max-vls", str(vls),
                    "--json")
        assert r["engine"] == "nue"
        assert r["deadlock_free"] is True
        assert (r["layers"], r["vls_used"]) == (vls, vls)
    a = ok_json(runner, "ebb", RANDOM, "--engine", "nue", "--max-vls", "1", "--json")
    assert EBB_KEYS <= a.keys() and a["ebb_mean"] > 0


def test_route_minhop_with_one_vl_has_a_cycle(runner):
    r = ok_json(runner, "route", "torus:6x6", "--engine", "minhop", "--max-vls", "1", "--json")
    assert r["deadlock_free"] is False
    assert len(r["cycle"]) >= 2
    assert {"switch", "port", "ib_port", "vl"} <= r["cycle"][0].keys()
    assert r["cdg"]["per_vl"][0]["acyclic"] is False
    # The human report names the cycle too.
    text = invoke(runner, "route", "torus:6x6", "--engine", "minhop", "--max-vls", "1").stdout
    assert "deadlock-free   NO" in text and "cycle" in text


def test_route_engine_options(runner):
    r = ok_json(
        runner, "route", RANDOM, "-e", "dfsssp", "--heuristic", "first", "--online",
        "--no-balance", "--json",
    )
    assert r["deadlock_free"] is True
    r = ok_json(runner, "route", RANDOM, "-e", "updn", "--root", "0x0002c90000000004", "--json")
    assert r["deadlock_free"] is True
    bad = invoke(runner, "route", RANDOM, "-e", "updn", "--root", "0x99")
    assert_user_error(bad, "not a switch")


def test_route_out_writes_the_four_dumps(runner, tmp_path):
    out = tmp_path / "tables"
    r = ok_json(runner, "route", "torus:4x4", "-e", "dor", "--out", out, "--json")
    assert sorted(Path(f).name for f in r["files"]) == sorted(DUMPS)
    assert sorted(p.name for p in out.iterdir()) == sorted(DUMPS)
    n_sw, n_ep = 16, 16
    # path-sl.txt: one decimal line per ordered endpoint pair.
    path_sl = (out / "path-sl.txt").read_text().splitlines()
    assert len(path_sl) == n_ep * n_ep
    assert all(re.fullmatch(r"\d+ \d+ \d+", line) for line in path_sl)
    # guid2lid: one entry per node, each followed by a blank line as in OpenSM's cache.
    lines = (out / "guid2lid").read_text().splitlines()
    assert lines[1::2] == [""] * (n_sw + n_ep)
    g2l = lines[0::2]
    assert len(g2l) == n_sw + n_ep
    assert all(re.fullmatch(r"0x[0-9a-f]{16} 0x[0-9a-f]{4} 0x[0-9a-f]{4}", line) for line in g2l)
    lfts = (out / "opensm-lfts.dump").read_text().splitlines()
    headers = [line for line in lfts if line.startswith("Unicast lids [0-32] of switch Lid ")]
    assert len(headers) == n_sw
    entries = [line for line in lfts if line.startswith("0x")]
    # Each switch: its own LID (port 0) and every endpoint.
    assert len(entries) == n_sw * (1 + n_ep)
    assert all(re.match(r"0x[0-9a-f]{4} \d{3} # (Switch|Channel Adapter) portguid 0x", e)
               for e in entries)
    sl2vl = (out / "opensm-sl2vl.dump").read_text()
    assert sl2vl.count("\nSwitch 0x") + sl2vl.startswith("Switch 0x") == n_sw
    assert sl2vl.count("Channel Adapter 0x") == n_ep
    rows = [line for line in sl2vl.splitlines() if re.match(r"\d", line)]
    assert all(len(line.split(":")[1].split()) == 16 for line in rows)
    # Human output lists the files.
    text = invoke(runner, "route", "torus:4x4", "-e", "dor", "--out", out).stdout
    assert "wrote" in text and "opensm-lfts.dump" in text


VOQSW_NET = "random:switches=8,ports=8,endpoints=4,links=16,seed=2"


def test_route_voqsw(runner, tmp_path):
    r = ok_json(runner, "route", VOQSW_NET, "-e", "updn", "--voqsw", "--sls", "4", "--vls", "8",
                "--json")
    v = r["voqsw"]
    assert {"tuples", "considered", "percent", "sls_used", "full"} <= set(v)
    assert 0 < v["considered"] <= v["tuples"] and v["sls_used"] <= 4 and not v["full"]
    assert "sls_for_full" not in v
    assert r["routing_sls"] == 4 and r["deadlock_free"]
    full = ok_json(runner, "route", VOQSW_NET, "-e", "updn", "--voqsw", "--sls", "full",
                   "--json")["voqsw"]
    assert full["full"] and full["percent"] == 100.0 and full["sls_for_full"] == full["sls_used"]
    out = tmp_path / "tables"
    r = ok_json(runner, "route", VOQSW_NET, "-e", "updn", "--voqsw", "--sls", "8", "--vls", "8",
                "--out", out, "--json")
    assert sorted(p.name for p in out.iterdir()) == sorted(DUMPS)
    path_sl = (out / "path-sl.txt").read_text().splitlines()
    assert len(path_sl) == 32 * 32
    assert {int(line.split()[2]) for line in path_sl} <= set(range(8))
    text = invoke(runner, "route", VOQSW_NET, "-e", "updn", "--voqsw").stdout
    assert "VOQsw" in text and "4-tuples" in text
    assert_user_error(invoke(runner, "route", VOQSW_NET, "-e", "updn", "--sls", "4"),
                      "go with --voqsw")
    assert_user_error(invoke(runner, "route", VOQSW_NET, "-e", "updn", "--voqsw", "--sls", "x"),
                      "or 'full'")
    assert_user_error(invoke(runner, "route", "torus:4x4", "-e", "dor", "--voqsw", "--vls", "1"),
                      "give at least 2 VLs")
    r = ok_json(runner, "route", "torus:4x4", "-e", "dor", "--voqsw", "--sls", "4", "--vls", "8",
                "--json")
    assert r["deadlock_free"] and r["routing_sls"] % 4 == 0


def test_route_out_writes_nothing_on_error(runner, tmp_path):
    out = tmp_path / "tables"
    # 9 classes x 2 routing SLs do not fit InfiniBand's 16 SLs.
    r = invoke(runner, "route", "torus:4x4", "-e", "dor", "--classes", "9", "--out", out)
    assert_user_error(r, "16")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_route_errors(runner, tmp_path):
    assert_user_error(
        invoke(runner, "route", "torus:4x4", "--engine", "nope"),
        "unknown routing engine 'nope'", "dfsssp",
    )
    bad = tmp_path / "bad.topo"
    bad.write_text('Switch 4 "S-0000000000000001"\n[1] "H-00000000000000a0"[1](zz)\n')
    assert_user_error(invoke(runner, "route", bad, "--engine", "minhop"), "line 2")
    assert_user_error(invoke(runner, "topo", "info", bad), "bad.topo", "line 2")
    assert_user_error(invoke(runner, "topo", "info", "torus:4y4"), "generator spec")
    assert_user_error(invoke(runner, "topo", "info", tmp_path / "missing.topo"), "no such file")
    assert_user_error(invoke(runner, "route", "torus:4x4", "-e", "dor", "--max-vls", "1"),
                      "dor needs at least 2 VLs")


IBSIM = (
    Path(__file__).resolve().parents[2] / "crates/flitsim-topology/tests/data/two-switches.ibsim"
)


def test_route_out_on_an_ibsim_file_assigns_lids(runner, tmp_path):
    out = tmp_path / "tables"
    r = ok_json(runner, "route", IBSIM, "--engine", "updn", "--out", out, "--json")
    assert r["lids_assigned"] == 6
    lids = sorted(int(line.split()[1], 16) for line in (out / "guid2lid").read_text().splitlines()
                  if line.strip())
    assert lids == [1, 2, 3, 4, 5, 6]
    # The human report says so, and ebb reads the tables back onto the LID-less file.
    text = invoke(runner, "route", IBSIM, "--engine", "updn", "--out", out).stdout
    assert "LIDs assigned   6" in text
    a = ok_json(runner, "ebb", IBSIM, "--engine", "updn", "--json", "--patterns", "20")
    b = ok_json(runner, "ebb", IBSIM, "--tables", out, "--json", "--patterns", "20")
    assert a["ebb_mean"] == b["ebb_mean"]


def test_route_guid2lid(runner, tmp_path):
    out = tmp_path / "tables"
    ok_json(runner, "route", "torus:3x3", "--engine", "dor", "--out", out, "--json")
    # Feeding the written cache back gives the same dumps; a clash names the file and line.
    again = tmp_path / "again"
    ok_json(runner, "route", "torus:3x3", "--engine", "dor", "--out", again,
            "--guid2lid", out / "guid2lid", "--json")
    for name in DUMPS:
        assert (out / name).read_text() == (again / name).read_text(), name
    bad = tmp_path / "bad-guid2lid"
    bad.write_text("0x0002c90000000000 0x0005 0x0005\n\n0x0002c90000000001 0x0005 0x0005\n")
    assert_user_error(
        invoke(runner, "route", "torus:3x3", "--engine", "dor", "--guid2lid", bad),
        str(bad), "line 3", "LID 0x0005 is given again",
    )


def test_dor_on_exported_torus_and_topo_info_shape(runner, tmp_path):
    f = tmp_path / "t.topo"
    invoke(runner, "topo", "generate", "torus:3x4x2,endpoints=2", "--out", f)
    info = ok_json(runner, "topo", "info", f, "--json")
    assert info["shape"]["kind"] == "torus" and info["shape"]["dims"] == [3, 4, 2]
    assert "torus 3x4x2 (recognised from the links)" in invoke(runner, "topo", "info", f).stdout
    a, b = tmp_path / "a", tmp_path / "b"
    ok_json(runner, "route", "torus:3x4x2,endpoints=2", "-e", "dor", "--out", a, "--json")
    ok_json(runner, "route", f, "-e", "dor", "--out", b, "--json")
    for name in DUMPS:
        assert (a / name).read_text() == (b / name).read_text(), name
    # The default 8 VLs fit a 3D torus's SLs.
    r = ok_json(runner, "route", "torus:4x4x4,endpoints=2", "-e", "dor", "--out", a, "--json")
    assert (r["wire_sls"], r["layers"]) == (16, 2)


# ------------------------------------------------------------------------------------- ebb


def test_ebb_json_is_deterministic(runner):
    args = ("ebb", "kary-ntree:k=4,n=2", "--engine", "dmodk", "--patterns", "30", "--json")
    a = ok_json(runner, *args, "--seed", "7")
    b = ok_json(runner, *args, "--seed", "7")
    assert EBB_KEYS <= a.keys()
    assert a["patterns"] == 30
    assert 0 < a["ebb_min"] <= a["ebb_mean"] <= a["ebb_max"] <= 1
    assert without_runtime(a) == without_runtime(b)
    text = invoke(runner, *args[:-1]).stdout
    assert text.startswith("effective bisection bandwidth")


def without_runtime(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "runtime_seconds"}


def test_ebb_of_dumped_tables_equals_ebb_of_the_engine(runner, tmp_path):
    out = tmp_path / "t"
    ok_json(runner, "route", RANDOM, "-e", "dfsssp", "--out", out, "--json")
    common = ("--patterns", "25", "--seed", "3", "--json")
    a = ok_json(runner, "ebb", RANDOM, "--engine", "dfsssp", *common)
    b = ok_json(runner, "ebb", RANDOM, "--tables", out, *common)
    assert b["engine"] == "file"
    for k in EBB_KEYS:
        assert a[k] == b[k], k


def test_ebb_needs_one_routing(runner, tmp_path):
    assert_user_error(invoke(runner, "ebb", "torus:4x4"), "exactly one")
    assert_user_error(
        invoke(runner, "ebb", "torus:4x4", "--engine", "dor", "--tables", tmp_path), "exactly one"
    )
    assert_user_error(invoke(runner, "ebb", "torus:4x4", "--tables", tmp_path),
                      "opensm-lfts.dump")


# ------------------------------------------------------------------------------------ topo


def test_topo_generate_info_convert_roundtrip(runner, tmp_path):
    spec = "xgft:h=2,m=4,4,w=1,2"
    as_json = tmp_path / "t.json"
    as_ib = tmp_path / "t.topo"
    r = invoke(runner, "topo", "generate", spec, "--out", as_json)
    assert r.exit_code == 0 and "wrote" in r.stdout
    r = invoke(runner, "topo", "generate", spec, "--out", as_ib)
    assert r.exit_code == 0
    assert as_ib.read_text().lstrip().startswith("#")
    assert "switchguid=0x2c90000000000" in as_ib.read_text()
    info_spec = ok_json(runner, "topo", "info", spec, "--json")
    info_json = ok_json(runner, "topo", "info", as_json, "--json")
    info_ib = ok_json(runner, "topo", "info", as_ib, "--json")
    for i in (info_json, info_ib):
        for k in ("switches", "endpoints", "inter_switch_links", "ports_min", "ports_max",
                  "connected", "diameter"):
            assert i[k] == info_spec[k], k
    assert info_spec["shape"]["kind"] == "fat_tree"
    assert (info_spec["shape"]["family"], info_spec["shape"]["levels"]) == ("xgft", 2)
    assert info_ib["shape"]["kind"] == "irregular"
    assert info_ib["shape"]["reason"]
    # JSON -> ibnetdiscover -> JSON keeps switches and endpoints (with GUIDs and LIDs).
    ib_text = invoke(runner, "topo", "convert", as_json, "--to", "ibnetdiscover").stdout
    assert ib_text == as_ib.read_text()
    back = tmp_path / "back.json"
    assert invoke(runner, "topo", "convert", as_ib, "--to", "json", "--out", back).exit_code == 0
    a, b = json.loads(as_json.read_text()), json.loads(back.read_text())
    assert a["switches"] == b["switches"] and a["endpoints"] == b["endpoints"]
    assert len(a["links"]) == len(b["links"])
    # Standard output without --out, and the human-readable info.
    printed = json.loads(invoke(runner, "topo", "generate", spec).stdout)
    assert printed["switches"] == a["switches"]
    text = invoke(runner, "topo", "info", spec).stdout
    assert "switches" in text and "diameter" in text and "XGFT" in text


def test_topo_info_of_a_torus(runner):
    i = ok_json(runner, "topo", "info", "torus:6x6", "--json")
    assert (i["switches"], i["endpoints"], i["inter_switch_links"]) == (36, 36, 72)
    assert (i["ports_min"], i["ports_max"], i["connected"], i["diameter"]) == (5, 5, True, 6)


# ---------------------------------------------------------------------- a real fabric dump


@pytest.fixture
def loginoff() -> Path:
    # The shared test data sits beside the repository (../shared/testdata); CI checks it out
    # there. Missing data is a failure, not a skip: a skip would hide the untested dump.
    assert LOGINOFF.is_file(), (
        f"test fabric {LOGINOFF} is missing: the shared test data must be checked out at "
        "../shared/testdata beside the repository"
    )
    return LOGINOFF


def test_real_fabric_dump(runner, loginoff, tmp_path):
    i = ok_json(runner, "topo", "info", loginoff, "--json")
    assert (i["switches"], i["endpoints"]) == (8, 145)
    assert i["connected"] is True
    out = tmp_path / "updn"
    r = ok_json(runner, "route", loginoff, "--engine", "updn", "--out", out, "--json")
    assert r["deadlock_free"] is True
    assert (r["switches"], r["endpoints"]) == (8, 145)
    # The dumps use the fabric's real GUIDs and LIDs (switch ib5 has LID 128).
    assert "switch Lid 128 guid 0xf4521403001165a0" in (out / "opensm-lfts.dump").read_text()
    assert len((out / "path-sl.txt").read_text().splitlines()) == 145 * 145
    a = ok_json(runner, "ebb", loginoff, "-e", "updn", "--patterns", "10", "--json")
    b = ok_json(runner, "ebb", loginoff, "--tables", out, "--patterns", "10", "--json")
    assert a["ebb_mean"] == b["ebb_mean"]


# -------------------------------------------------------------------- simulating the dumps


def test_run_with_routing_tables_from_route_out(runner, tmp_path):
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_CONFIG)
    tables = tmp_path / "dor-tables"
    # TINY_CONFIG: a 4x4 torus, one endpoint per switch, dor with 2 VLs, one class.
    ok_json(runner, "route", "torus:4x4", "-e", "dor", "--max-vls", "2", "--out", tables,
            "--json")
    engine = ok_json(runner, "run", config, "--json")
    loaded = ok_json(runner, "run", config, "--set", f"routing.tables={json.dumps(str(tables))}",
                     "--json")
    assert loaded["routing"] == "file"
    assert loaded["flits"]["delivered"] > 0

    def comparable(r: dict) -> dict:
        return {k: v for k, v in without_performance(r).items()
                if k not in ("routing", "config_hash")}

    assert comparable(loaded) == comparable(engine)
    # A relative directory is taken from the experiment file's directory.
    rel = ok_json(runner, "run", config, "--set", 'routing.tables="dor-tables"', "--json")
    assert comparable(rel) == comparable(engine)
    # A directory without dumps is a clear error.
    r = invoke(runner, "run", config, "--set", f"routing.tables={json.dumps(str(tmp_path))}")
    assert_user_error(r, "opensm-lfts.dump")


def test_ebb_all_to_all_link_loads():
    # A 4-ary 2-tree with d-mod-k: 16 endpoints, all-to-all = 16·15 flows (plus self pairs
    # never leave their leaf). Every leaf up-link carries the 4·12 flows of its leaf that go
    # to other leaves spread over 4 up-links: 12 each; every root down-link likewise 12.
    from click.testing import CliRunner

    result = CliRunner().invoke(
        main, ["ebb", "kary-ntree:k=4,n=2", "--engine", "dmodk", "--all-to-all", "--json"]
    )
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    switch_links = [link["flows"] for link in r["links"] if not link["to_endpoint"]]
    assert len(switch_links) == 32 and set(switch_links) == {12}
    assert r["switch_links_max_flows"] == 12


def test_route_lmc_out_lists_every_lid_and_reads_back(runner, tmp_path):
    out = tmp_path / "lmc"
    spec = "kary-ntree:k=4,n=2"
    r = ok_json(runner, "route", spec, "-e", "ftree", "--lmc", "2", "--out", out, "--json")
    assert r["lmc"] == 2 and r["deadlock_free"]
    div = r["path_diversity"]
    assert div["paths"] == 4
    # 16 endpoints on 4 leaves: every pair on different leaves has 4 link-disjoint paths.
    assert div["pairs"] == 16 * 12
    assert div["disjoint_share"] == 1.0 and div["distinct_share"] == 1.0
    # guid2lid: a CA port's line gives its base and top LID, base aligned to 4.
    g2l = [line.split() for line in (out / "guid2lid").read_text().splitlines() if line]
    cas = [(int(b, 16), int(t, 16)) for _, b, t in g2l if int(t, 16) != int(b, 16)]
    assert len(cas) == 16
    assert all(b % 4 == 0 and t == b + 3 for b, t in cas)
    # Every switch's table lists all 4 LIDs of every port.
    lfts = (out / "opensm-lfts.dump").read_text().splitlines()
    ca_entries = [line for line in lfts if "Channel Adapter" in line]
    assert len(ca_entries) == 8 * 16 * 4
    # path-sl.txt: a line per destination LID.
    assert len((out / "path-sl.txt").read_text().splitlines()) == 16 * 16 * 4
    # The tables read back: the same eBB as the engine's path-0 routing.
    common = ("--patterns", "5", "--seed", "2", "--json")
    a = ok_json(runner, "ebb", spec, "--engine", "ftree", *common)
    b = ok_json(runner, "ebb", spec, "--tables", out, *common)
    assert a["ebb_mean"] == b["ebb_mean"]
    # Human output names the path diversity; lash says it cannot.
    text = invoke(runner, "route", spec, "-e", "ftree", "--lmc", "1").stdout
    assert "paths           2 per destination (LMC 1): 100.0% of pairs link-disjoint" in text
    bad = invoke(runner, "route", spec, "-e", "lash", "--lmc", "1")
    assert bad.exit_code != 0
    assert "lash does not support LMC > 0" in (bad.output + (bad.stderr or ""))


# ------------------------------------------------------------------------------- bandwidth


def test_bandwidth_admits_refuses_and_shares_the_surplus(runner):
    r = ok_json(
        runner, "bandwidth", "kary-ntree:k=4,n=1",
        "--flow", "0:1:0.3", "--flow", "0:2:0.7", "--flow", "0:3:0.1",
        "--best-effort", "3:2", "--json",
    )
    assert r["b_max"] == 1.0 and r["engine"] == "dmodk"
    flows = r["flows"]
    assert [f["admitted"] for f in flows] == [True, True, False, True]
    for f in flows:
        assert {"src", "dst", "requested", "admitted", "idt", "refused_by"} <= set(f)
    assert flows[0]["idt"] == pytest.approx(16 / 0.3)
    assert flows[1]["idt"] == pytest.approx(16 / 0.7)
    refused = flows[2]["refused_by"]
    assert refused["criterion"] == "source_node" and refused["node"] == 0
    assert "endpoint 0" in refused["message"]
    # Node 2 receives 0.7: the best-effort flow into it gets the surplus 0.3.
    assert flows[3]["requested"] is None and flows[3]["granted"] == pytest.approx(0.3)
    assert flows[3]["idt"] == pytest.approx(16 / 0.3)
    text = invoke(runner, "bandwidth", "kary-ntree:k=4,n=1", "--flow", "0:1:0.5")
    assert text.exit_code == 0 and "IDT 32 cycles" in text.stdout, text.stdout


def test_bandwidth_switch_port_refusal_names_the_port(runner):
    # On a 2-ary 2-tree, 0 -> 2 and 1 -> 2 leave the first leaf by the same up port.
    r = ok_json(runner, "bandwidth", "kary-ntree:k=2,n=2", "--flow", "0:2:0.6",
                "--flow", "1:2:0.5", "--json")
    why = r["flows"][1]["refused_by"]
    assert why["criterion"] == "switch_port"
    assert why["switch"] and isinstance(why["port"], int)


def test_bandwidth_bad_input(runner):
    topo = "kary-ntree:k=4,n=1"
    assert_user_error(invoke(runner, "bandwidth", topo), "--flow")
    assert_user_error(invoke(runner, "bandwidth", topo, "--flow", "0:1"), "SRC:DST:RATE")
    assert_user_error(invoke(runner, "bandwidth", topo, "--flow", "1:1:0.2"), "itself")
    assert_user_error(invoke(runner, "bandwidth", topo, "--flow", "0:9:0.2"), "endpoint 9")
    assert_user_error(invoke(runner, "bandwidth", topo, "--flow", "0:1:1.5"), "peak")
    assert_user_error(invoke(runner, "bandwidth", topo, "--best-effort", "2:2"), "itself")


def test_bandwidth_takes_physical_rates_with_a_link_rate(runner):
    topo = "kary-ntree:k=4,n=1"
    # 40 MB/s and 80 MB/s of a 160 MB/s link: a quarter and a half of it.
    r = ok_json(runner, "bandwidth", topo, "--flow", "0:1:40MB/s", "--flow", "0:2:0.64Gb/s",
                "--best-effort", "0:3", "--link-rate", "1.28Gb/s", "--json")
    plain = ok_json(runner, "bandwidth", topo, "--flow", "0:1:0.25", "--flow", "0:2:0.5",
                    "--best-effort", "0:3", "--json")
    assert r == plain
    assert [f["requested"] for f in r["flows"][:2]] == [0.25, 0.5]
    assert_user_error(invoke(runner, "bandwidth", topo, "--flow", "0:1:40MB/s"), "--link-rate")
    assert_user_error(
        invoke(runner, "bandwidth", topo, "--flow", "0:1:40MB", "--link-rate", "1.28Gb/s"),
        "is a size",
    )
    assert_user_error(
        invoke(runner, "bandwidth", topo, "--flow", "0:1:0.2", "--link-rate", "5us"),
        "--link-rate 5us",
    )
    assert_user_error(
        invoke(runner, "bandwidth", topo, "--flow", "0:1:200MB/s", "--link-rate", "1.28Gb/s"),
        "peak",
    )


BANDWIDTH_EXPERIMENT = """
[topology]
kind = "kary_ntree"
k = 4
n = 1

[nic]
rate_control = true
dispatch_time = 16

[[traffic.class]]
name = "BE"
message_flits = 16

[run]
warmup = 500
measure = 4000
"""


def _flow(src: int, dst: int, extra: str) -> str:
    return f'\n[[traffic.flow]]\nsrc = {src}\ndst = {dst}\nrate = 0.95\nprocess = "cbr"\n{extra}\n'


def test_run_reports_the_bandwidth_managers_verdicts(runner, tmp_path):
    exp = tmp_path / "bw.toml"
    exp.write_text(
        BANDWIDTH_EXPERIMENT
        + _flow(0, 1, "reserve = 0.6")
        + _flow(1, 2, "reserve = 0.5")
        + _flow(0, 3, "best_effort = true")
    )
    r = ok_json(runner, "run", exp, "--json")
    b = r["bandwidth"]
    assert [x["admitted"] for x in b] == [True, False, True]
    assert b[1]["refused_by"]["criterion"] == "source_node" and b[1]["idt"] is None
    assert b[2]["granted"] == pytest.approx(0.4)
    assert b[0]["accepted_rate"] == pytest.approx(0.6, rel=0.03)
    text = invoke(runner, "run", exp)
    assert text.exit_code == 0
    assert "2 of 3 managed flows admitted; flow 1 refused" in text.stdout, text.stdout
