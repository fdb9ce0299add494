//! LIDs for topologies that lack them (issue 13, items 1 and 6): `flitsim route --out` assigns
//! them, `--guid2lid` takes them from OpenSM's LID cache, and `ebb --tables` reads the dumps
//! back onto the same file, or says why not.
use flitsim_app::report::{ebb_json, load_topology, route_json, route_json_with, RouteFiles};
use flitsim_manager::opensm;
use flitsim_topology::{generators, Topology};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const IBSIM: &str = include_str!("../../flitsim-topology/tests/data/two-switches.ibsim");

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("flitsim-lids-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap()
}

/// `guid2lid` entries as GUID → (base, top), read independently of flitsim's reader.
fn guid2lid_entries(text: &str) -> HashMap<u64, (u16, u16)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (hex(f[0]), (hex(f[1]) as u16, hex(f[2]) as u16))
        })
        .collect()
}

/// The same topology without any GUID or LID, written as an ibsim net file would have it
/// (plain names); read back through the ibsim reader.
fn without_ids(t: &Topology, dir: &TempDir) -> String {
    let text = t.to_ibnetdiscover();
    // Drop every GUID-carrying token and every LID: plain names, as ibsim files are.
    let mut out = String::new();
    for line in text.lines() {
        let l = line.split('#').next().unwrap();
        if l.starts_with("vendid")
            || l.starts_with("sysimgguid")
            || l.starts_with("switchguid")
            || l.starts_with("caguid")
        {
            continue;
        }
        let mut s = String::new();
        let mut skip = false;
        for c in l.chars() {
            match c {
                '(' => skip = true,
                ')' => skip = false,
                _ if !skip => s.push(c),
                _ => {}
            }
        }
        out.push_str(&s.replace("\"S-", "\"Sw").replace("\"H-", "\"Ca"));
        out.push('\n');
    }
    let p = dir.file("fabric.net", &out);
    let back = load_topology(&p).unwrap();
    assert!(back
        .switches()
        .iter()
        .all(|s| s.guid.is_none() && s.lid.is_none()));
    assert!(back
        .endpoints()
        .iter()
        .all(|e| e.guid.is_none() && e.lid.is_none()));
    p
}

#[test]
fn route_out_assigns_lids_to_an_ibsim_file_and_ebb_reads_the_tables_back() {
    let dir = TempDir::new("ibsim");
    let ibsim = dir.file("two.net", IBSIM);
    let out = dir.0.join("tables");
    for engine in ["minhop", "updn", "sssp", "dfsssp", "lash"] {
        let r = json(
            &route_json(&ibsim, engine, 8, 1, Some(&out), None)
                .unwrap_or_else(|e| panic!("{engine}: {e}")),
        );
        assert_eq!(r["lids_assigned"], 2 + 4, "{engine}");
        assert_eq!(r["files"].as_array().unwrap().len(), 4);
        // Switches first (file order), then CA ports: 1, 2 | 3..=6.
        let g = guid2lid_entries(&std::fs::read_to_string(out.join("guid2lid")).unwrap());
        let lids: HashSet<u16> = g.values().map(|v| v.0).collect();
        assert_eq!(lids, (1..=6).collect());
        // ebb --tables on the same LID-less file: the same deterministic LIDs, the same eBB.
        let a = json(&ebb_json(&ibsim, Some(engine), None, 10, 1, 8).unwrap());
        let b = json(&ebb_json(&ibsim, None, Some(&out), 10, 1, 8).unwrap());
        assert_eq!(a["ebb_mean"], b["ebb_mean"], "{engine}");
    }
}

#[test]
fn generated_topology_without_ids_gets_the_generators_lids() {
    let dir = TempDir::new("gen");
    let g = generators::kary_ntree(4, 2, 1).unwrap();
    let net = without_ids(&g, &dir);
    let out_a = dir.0.join("a");
    let out_b = dir.0.join("b");
    route_json(&net, "minhop", 1, 1, Some(&out_a), None).unwrap();
    route_json("kary-ntree:k=4,n=2", "minhop", 1, 1, Some(&out_b), None).unwrap();
    // Same LIDs, GUIDs and LFTs as the generated topology (the description strings differ).
    let a = guid2lid_entries(&std::fs::read_to_string(out_a.join("guid2lid")).unwrap());
    let b = guid2lid_entries(&std::fs::read_to_string(out_b.join("guid2lid")).unwrap());
    assert_eq!(a, b);
    let ports = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p.join("opensm-lfts.dump"))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("0x"))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(ports(&out_a), ports(&out_b));
}

#[test]
fn guid2lid_file_gives_lids_and_round_trips() {
    let dir = TempDir::new("g2l");
    let g = generators::torus(&[3, 3], 1, 1, 1).unwrap();
    let topo_file = dir.file("t.json", &g.to_json());
    // A permutation of the generated LIDs: node i gets LID 100 + (n - 1 - i).
    let mut nodes: Vec<u64> = g.switches().iter().map(|s| s.guid.unwrap()).collect();
    nodes.extend(g.endpoints().iter().map(|e| e.guid.unwrap()));
    let n = nodes.len();
    let mut text = String::from("# a comment\n");
    for (i, guid) in nodes.iter().enumerate() {
        let l = 100 + (n - 1 - i);
        text.push_str(&format!("0x{guid:016x} 0x{l:04x} 0x{l:04x}\n\n"));
    }
    let g2l = dir.file("cache", &text);
    let out = dir.0.join("tables");
    let r = json(
        &route_json_with(
            &topo_file,
            "dor",
            2,
            1,
            &RouteFiles {
                out_dir: Some(&out),
                guid2lid: Some(Path::new(&g2l)),
            },
            None,
        )
        .unwrap(),
    );
    assert_eq!(r["lids_assigned"], 0);
    // The written guid2lid is the file's mapping: a round trip.
    let written = guid2lid_entries(&std::fs::read_to_string(out.join("guid2lid")).unwrap());
    assert_eq!(written, guid2lid_entries(&text));
    // The LFT dump names the file's LIDs.
    let lfts = std::fs::read_to_string(out.join("opensm-lfts.dump")).unwrap();
    let first_ep = 100 + n - 1 - 9;
    assert!(lfts.contains(&format!("0x{first_ep:04x} ")), "{lfts}");
    // Reading the written guid2lid back onto a topology gives the same LIDs.
    let mut t = g.clone();
    opensm::apply_guid2lid(
        &mut t,
        &std::fs::read_to_string(out.join("guid2lid")).unwrap(),
        "x",
    )
    .unwrap();
    for (i, s) in t.switches().iter().enumerate() {
        assert_eq!(s.lid, Some((100 + n - 1 - i) as u16));
    }
}

#[test]
fn guid2lid_errors_name_the_file_and_line() {
    let dir = TempDir::new("g2lerr");
    let g = generators::torus(&[2, 2], 1, 1, 1).unwrap();
    let topo = dir.file("t.json", &g.to_json());
    let sw0 = g.switches()[0].guid.unwrap();
    let sw1 = g.switches()[1].guid.unwrap();
    let cases = [
        (
            format!("0x{sw0:016x} 0x0001 0x0001\n0x00000000deadbeef 0x0002 0x0002\n"),
            "line 2",
            "not a switch or CA port GUID",
        ),
        (
            format!("0x{sw0:016x} 0x0007 0x0007\n\n0x{sw1:016x} 0x0007 0x0007\n"),
            "line 3",
            "LID 0x0007 is given again (first on line 1)",
        ),
        (
            format!("0x{sw0:016x} 0xc000 0xc000\n"),
            "line 1",
            "outside the unicast range",
        ),
        (
            format!("0x{sw0:016x} 0x0000 0x0000\n"),
            "line 1",
            "outside the unicast range",
        ),
        (format!("0x{sw0:016x} 12\n"), "line 1", "expected '0x<guid>"),
        (
            // LID 2 is switch 1's own (generated) LID and switch 1 is not listed.
            format!("0x{sw0:016x} 0x0002 0x0002\n"),
            "line 1",
            "the topology gives switch",
        ),
        (
            format!("0x{sw0:016x} 0x0009 0x0009\n0x{sw0:016x} 0x000a 0x000a\n"),
            "line 2",
            "listed again",
        ),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let f = dir.file(&format!("g2l-{i}"), text);
        let e = route_json_with(
            &topo,
            "dor",
            2,
            1,
            &RouteFiles {
                out_dir: None,
                guid2lid: Some(Path::new(&f)),
            },
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&f) && e.contains(line) && e.contains(what),
            "case {i}: {e}"
        );
    }
    let e = route_json_with(
        &topo,
        "dor",
        2,
        1,
        &RouteFiles {
            out_dir: None,
            guid2lid: Some(&dir.0.join("missing")),
        },
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cannot read guid2lid file") && e.contains("missing"),
        "{e}"
    );
}

#[test]
fn too_many_nodes_for_the_lid_space_fail_at_out_time() {
    // 16384 switches + 32768 endpoints = 49152 > 49151 unicast LIDs.
    let dir = TempDir::new("big");
    let spec = "torus:128x128,endpoints=2";
    let e = route_json(spec, "dor", 2, 1, Some(&dir.0.join("t")), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot write the tables to")
            && e.contains("needs 49152 unicast LIDs")
            && e.contains("49151"),
        "{e}"
    );
}

#[test]
fn ebb_tables_name_the_real_cause() {
    let dir = TempDir::new("ebbmsg");
    // Tables written for a generated 3x3 torus.
    let g = generators::torus(&[3, 3], 1, 1, 1).unwrap();
    let out = dir.0.join("tables");
    route_json("torus:3x3", "dor", 2, 1, Some(&out), None).unwrap();
    // Remove the guid2lid: a LID-less ibsim copy then gets its LIDs assigned: the same ones.
    let net = without_ids(&g, &dir);
    std::fs::remove_file(out.join("guid2lid")).unwrap();
    assert!(ebb_json(&net, None, Some(&out), 5, 1, 2).is_ok());
    // A topology whose endpoint LIDs differ from the dump's: the message names the LID
    // (before, this said "switch … has no route to endpoint 0").
    let mut shifted = g.clone();
    let sl: Vec<Option<u16>> = g.switches().iter().map(|s| s.lid).collect();
    let el: Vec<Option<u16>> = g
        .endpoints()
        .iter()
        .map(|e| e.lid.map(|l| l + 1000))
        .collect();
    shifted.set_lids(&sl, &el).unwrap();
    let f = dir.file("shifted.json", &shifted.to_json());
    let e = ebb_json(&f, None, Some(&out), 5, 1, 2)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no switch has an entry for LID 1010")
            && e.contains("nor for 8 other endpoints")
            && e.contains("opensm-lfts.dump"),
        "{e}"
    );
    // A tables directory without the LFT dump names the missing file.
    std::fs::remove_file(out.join("opensm-lfts.dump")).unwrap();
    let e = ebb_json(&net, None, Some(&out), 5, 1, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no opensm-lfts.dump there"), "{e}");
}

#[test]
fn dor_on_a_3d_torus_fits_the_default_budget_and_says_what_fits_otherwise() {
    let dir = TempDir::new("dor3d");
    let out = dir.0.join("t");
    // Issue 13 item 4: with the default 8 VLs this used to need 32 SLs and fail.
    let r = json(&route_json("torus:4x4x4,endpoints=2", "dor", 8, 1, Some(&out), None).unwrap());
    assert_eq!(r["layers"], 2);
    assert_eq!(r["deadlock_free"], true);
    // 2^3 crossing patterns per lane, 2 lanes: 16 SLs, all of InfiniBand's.
    assert_eq!(
        (r["routing_sls"].as_u64(), r["wire_sls"].as_u64()),
        (Some(16), Some(16))
    );
    assert_eq!(r["vls_used"], 4);
    // Two classes: one lane each, 2 x 8 = 16 SLs.
    let r = json(&route_json("torus:4x4x4", "dor", 8, 2, Some(&out), None).unwrap());
    assert_eq!(
        (r["routing_sls"].as_u64(), r["wire_sls"].as_u64()),
        (Some(8), Some(16))
    );
    // Three classes cannot fit 16 SLs with 8 per class: the message says what would.
    let e = route_json("torus:4x4x4", "dor", 8, 3, Some(&out), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("24 service levels") && e.contains("at most 2 classes fit"),
        "{e}"
    );
    // Too few VLs: says how many are needed.
    let e = route_json("torus:4x4x4", "dor", 1, 1, None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("dor needs at least 2 VLs"), "{e}");
}
