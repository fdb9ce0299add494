//! Tests of the OpenSM dump writers and readers.
use super::sl2vl::{SL2VL_HEADER, SL2VL_SEPARATOR};
use super::*;
use crate::routing::{route, route_with, EngineOptions, RoutingRequest};
use flitsim_topology::generators;
use flitsim_topology::{PortNum, SwitchId};

/// Compares everything the simulator uses: LFTs, path SLs, NIC SL2VL and the SL2VL entries
/// of connected output ports (the dump, like OpenSM's, leaves unconnected ports out).
fn assert_same_tables(topo: &Topology, a: &FabricConfig, b: &FabricConfig) {
    assert_eq!(a.lft, b.lft);
    assert_eq!(a.path_sl, b.path_sl);
    assert_eq!((a.classes, a.routing_sls), (b.classes, b.routing_sls));
    assert_eq!(a.nic_sl2vl, b.nic_sl2vl);
    let w = a.wire_sls();
    for s in 0..topo.num_switches() {
        let p = topo.num_ports(SwitchId(s as u32)) as usize;
        for i in 0..p {
            for o in 0..p {
                if topo.switch_peer(SwitchId(s as u32), o as PortNum).is_none() {
                    continue;
                }
                let r = (i * p + o) * w..(i * p + o + 1) * w;
                assert_eq!(a.sl2vl[s][r.clone()], b.sl2vl[s][r], "switch {s} {i}->{o}");
            }
        }
    }
}

/// A generated topology with its LMC 0 LIDs replaced by LIDs for LMC `lmc`.
fn with_lmc_lids(mut t: Topology, lmc: u8) -> Topology {
    let (ns, ne) = (t.num_switches(), t.num_endpoints());
    t.set_lids(&vec![None; ns], &vec![None; ne]).unwrap();
    t.assign_missing_ids(lmc).unwrap();
    t
}

#[test]
fn lmc_tables_list_every_lid_and_read_back_every_path() {
    let opts = |lmc| EngineOptions {
        lmc,
        ..EngineOptions::default()
    };
    let req = RoutingRequest { vls: 8, classes: 2 };
    // dfsssp on a random network: per-path SLs; updn on a fat tree: four distinct paths.
    for (spec, engine) in [
        (
            "random:switches=16,ports=8,endpoints=2,links=28,seed=3",
            "dfsssp",
        ),
        ("kary-ntree:k=4,n=2", "updn"),
    ] {
        let gen = generators::from_spec(spec).unwrap();
        let t = with_lmc_lids(gen.clone(), 2);
        let f = route_with(&t, engine, &req, &opts(2)).unwrap();
        assert_eq!(f.num_paths(), 4);
        let back = roundtrip(&t, &f);
        assert_eq!(back.alt_paths, f.alt_paths, "{engine}");
        // Every LID of every port is in every switch's table, with LID base + k for path k.
        let lfts = write_lfts(&t, &f).unwrap();
        let ep = &t.endpoints()[0];
        let base = ep.lid.unwrap();
        assert_eq!(base % 4, 0);
        for k in 0..4u16 {
            let entries = lfts
                .lines()
                .filter(|l| l.starts_with(&format!("0x{:04x} ", base + k)))
                .count();
            assert_eq!(entries, t.num_switches(), "LID {}", base + k);
        }
        // guid2lid gives the base and the top LID of each port's block.
        let g2l = write_guid2lid_lmc(&t, 2).unwrap();
        let line = format!(
            "0x{:016x} 0x{base:04x} 0x{:04x}",
            ep.guid.unwrap(),
            base + 3
        );
        assert!(g2l.lines().any(|l| l == line), "{line}\n{g2l}");
        // path-sl.txt: a line per destination LID.
        let psl = write_path_sl(&t, &f).unwrap();
        let n = t.num_endpoints();
        assert_eq!(psl.lines().count(), n * n * 4);
        // The directory reads back onto the generator's topology (LMC 0 LIDs): its guid2lid
        // with LID ranges decides.
        let dir = std::env::temp_dir().join(format!("flitsim-lmc-{}-{engine}", std::process::id()));
        write_dir(&t, &f, &dir).unwrap();
        let again = read_dir(&gen, &dir).unwrap();
        assert_same_tables(&t, &f, &again);
        assert_eq!(again.alt_paths, f.alt_paths, "{engine}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn lmc_tables_need_aligned_lid_blocks() {
    let t = generators::kary_ntree(2, 2, 1).unwrap();
    let f = route_with(
        &t,
        "updn",
        &RoutingRequest { vls: 1, classes: 1 },
        &EngineOptions {
            lmc: 1,
            ..EngineOptions::default()
        },
    )
    .unwrap();
    // The generator's LMC 0 LIDs are consecutive: no room for a second LID per port.
    let e = write_lfts(&t, &f).unwrap_err().to_string();
    assert!(
        e.contains("LMC 1") && e.contains("assign_missing_ids(1)"),
        "{e}"
    );
    assert!(write_dir(&t, &f, &std::env::temp_dir().join("flitsim-lmc-never")).is_err());
}

fn roundtrip(topo: &Topology, f: &FabricConfig) -> FabricConfig {
    let lfts = write_lfts(topo, f).unwrap();
    let sl2vl = write_sl2vl(topo, f).unwrap();
    let psl = write_path_sl(topo, f).unwrap();
    let back = read_tables(topo, &lfts, Some(&sl2vl), Some(&psl)).unwrap();
    assert_same_tables(topo, f, &back);
    // Writing again gives the same text.
    assert_eq!(write_lfts(topo, &back).unwrap(), lfts);
    assert_eq!(write_path_sl(topo, &back).unwrap(), psl);
    back
}

#[test]
fn dor_on_a_torus_roundtrips() {
    let t = generators::torus(&[4, 4], 2, 1, 1).unwrap();
    let f = route(&t, "dor", &RoutingRequest { vls: 4, classes: 2 }).unwrap();
    assert!(f.routing_sls > 1 || f.classes > 1);
    let back = roundtrip(&t, &f);
    assert!(back.num_vls <= f.num_vls);
    assert_eq!(back.engine, "file");
}

#[test]
fn dfsssp_on_a_random_topology_roundtrips() {
    let t =
        generators::from_spec("random:switches=16,ports=8,endpoints=2,links=28,seed=3").unwrap();
    let f = route_with(
        &t,
        "dfsssp",
        &RoutingRequest { vls: 8, classes: 1 },
        &EngineOptions::default(),
    )
    .unwrap();
    // Balanced layers: several path SLs and VLs.
    assert!(
        f.routing_sls > 1 && !f.path_sl.is_empty(),
        "{}",
        f.routing_sls
    );
    let back = roundtrip(&t, &f);
    assert!(crate::cdg::verify(&t, &back).unwrap().deadlock_free);
    // Without the flitsim comment the SL split is inferred the same way for one class.
    let sl2vl = write_sl2vl(&t, &f).unwrap();
    let plain: String = sl2vl
        .lines()
        .filter(|l| !l.starts_with("# flitsim"))
        .map(|l| format!("{l}\n"))
        .collect();
    let psl = write_path_sl(&t, &f).unwrap();
    let lfts = write_lfts(&t, &f).unwrap();
    let inferred = read_tables(&t, &lfts, Some(&plain), Some(&psl)).unwrap();
    if f.path_sl.iter().any(|&s| s + 1 == f.routing_sls) {
        assert_same_tables(&t, &f, &inferred);
    }
}

#[test]
fn lfts_alone_give_one_vl() {
    let t = generators::kary_ntree(2, 3, 1).unwrap();
    let f = route(&t, "ftree", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
    let back = read_tables(&t, &write_lfts(&t, &f).unwrap(), None, None).unwrap();
    assert_eq!(back.lft, f.lft);
    assert_eq!((back.num_vls, back.classes, back.routing_sls), (1, 1, 1));
    assert!(back.path_sl.is_empty());
}

#[test]
fn written_formats_match_opensm() {
    let t = generators::torus(&[2], 1, 1, 1).unwrap();
    let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    let lfts = write_lfts(&t, &f).unwrap();
    let first: Vec<&str> = lfts.lines().take(4).collect();
    let sw0 = t.switches()[0].name.clone();
    assert_eq!(
        first[0],
        format!("Unicast lids [0-4] of switch Lid 1 guid 0x0002c90000000000 ('{sw0}'):")
    );
    assert_eq!(
        first[1],
        format!("0x0001 000 # Switch portguid 0x0002c90000000000: '{sw0}'")
    );
    assert!(
        first[2].starts_with("0x0003 00")
            && first[2].contains("# Channel Adapter portguid 0x0002c90100000000: '"),
        "{}",
        first[2]
    );
    assert_eq!(lfts.lines().filter(|l| *l == "4 lids dumped").count(), 2);
    let g2l = write_guid2lid(&t).unwrap();
    assert_eq!(g2l.lines().next(), Some("0x0002c90000000000 0x0001 0x0001"));
    assert_eq!(g2l.lines().filter(|l| !l.is_empty()).count(), 4);
    // OpenSM's cache layout: entry, blank line.
    assert!(g2l.lines().skip(1).step_by(2).all(str::is_empty));
    assert!(g2l.ends_with("\n\n"));
    let psl = write_path_sl(&t, &f).unwrap();
    assert_eq!(psl.lines().count(), 4);
    assert!(psl.lines().all(|l| l.split(' ').count() == 3));
    let sl2vl = write_sl2vl(&t, &f).unwrap();
    assert!(sl2vl.contains(&format!(
        "Switch 0x0002c90000000000, base LID 1, \"{sw0}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}\n"
    )));
    let mut row = "0   0   :".to_string();
    for sl in 0..16 {
        let v = if sl < f.wire_sls() {
            f.nic_sl2vl[sl]
        } else {
            15
        };
        row += &format!(" {v:<2}");
    }
    assert!(
        sl2vl.contains(&format!(
            "Channel Adapter 0x0002c90100000000, base LID 3, \"{}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}\n{row}\n{SL2VL_SEPARATOR}\n\n",
            t.endpoints()[0].name
        )),
        "{sl2vl}"
    );
}

/// A dump laid out exactly as OpenSM 3.3 writes it (`osm_dump.c`), for a two-switch fabric
/// with two hosts, including routes to switch LIDs, the unrouted LID 0 absent, a QoS
/// SL2VL mapping all 16 SLs, and CA blocks.
const TOPO: &str = "\
switchguid=0x10(10)
Switch\t4 \"S-0000000000000010\"\t# \"swA\" enhanced port 0 lid 1 lmc 0
[1]\t\"H-00000000000000a0\"[1](a1)\t# \"hostA mlx4_0\" lid 3 4xQDR
[3]\t\"S-0000000000000020\"[3]\t# \"swB\" lid 2 4xQDR

switchguid=0x20(20)
Switch\t4 \"S-0000000000000020\"\t# \"swB\" enhanced port 0 lid 2 lmc 0
[2]\t\"H-00000000000000b0\"[1](b1)\t# \"hostB mlx4_0\" lid 4 4xQDR
[3]\t\"S-0000000000000010\"[3]\t# \"swA\" lid 1 4xQDR

caguid=0xa0
Ca\t1 \"H-00000000000000a0\"\t# \"hostA mlx4_0\"
[1](a1)\t\"S-0000000000000010\"[1]\t# lid 3 lmc 0 \"swA\" lid 1 4xQDR

caguid=0xb0
Ca\t1 \"H-00000000000000b0\"\t# \"hostB mlx4_0\"
[1](b1)\t\"S-0000000000000020\"[2]\t# lid 4 lmc 0 \"swB\" lid 2 4xQDR
";

const LFTS: &str = "\
Unicast lids [0-4] of switch Lid 1 guid 0x0000000000000010 ('swA'):
0x0001 000 # Switch portguid 0x0000000000000010: 'swA'
0x0002 003 # Switch portguid 0x0000000000000020: 'swB'
0x0003 001 # Channel Adapter portguid 0x00000000000000a1: 'hostA mlx4_0'
0x0004 003 # Channel Adapter portguid 0x00000000000000b1: 'hostB mlx4_0'
4 lids dumped
Unicast lids [0-4] of switch Lid 2 guid 0x0000000000000020 ('swB'):
0x0001 003 # Switch portguid 0x0000000000000010: 'swA'
0x0002 000 # Switch portguid 0x0000000000000020: 'swB'
0x0003 003 # Channel Adapter portguid 0x00000000000000a1: 'hostA mlx4_0'
0x0004 002 # Channel Adapter portguid 0x00000000000000b1: 'hostB mlx4_0'
4 lids dumped
";

const SL2VL: &str = "\
Switch 0x0000000000000010, base LID 1, \"swA\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
1   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
2   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
3   1   : 1  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
4   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
0   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
1   3   : 2  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
2   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
3   3   : 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15
4   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
#--------------------------------------------------------

Channel Adapter 0x00000000000000a1, base LID 3, \"hostA mlx4_0\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   0   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
#--------------------------------------------------------

";

#[test]
fn a_hand_written_opensm_dump_is_read() {
    let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
    let f = read_tables(&t, LFTS, Some(SL2VL), Some("3 4 0\n4 3 0\n3 3 0\n4 4 0\n")).unwrap();
    let (a, b) = (
        t.switch_by_guid(0x10).unwrap().0 as usize,
        t.switch_by_guid(0x20).unwrap().0 as usize,
    );
    let (ha, hb) = (
        t.endpoint_by_lid(3).unwrap().0 as usize,
        t.endpoint_by_lid(4).unwrap().0 as usize,
    );
    // IB port p is flitsim port p - 1.
    assert_eq!(f.lft[a][ha], 0);
    assert_eq!(f.lft[a][hb], 2);
    assert_eq!(f.lft[b][ha], 2);
    assert_eq!(f.lft[b][hb], 1);
    // All 16 SLs map to real VLs: 16 wire SLs, one routing SL, VLs 0..=3.
    assert_eq!((f.classes, f.routing_sls, f.num_vls), (16, 1, 4));
    assert!(f.path_sl.is_empty());
    let w = 16;
    // Row "3 1" (IB in 3, out 1) SL 0 is VL 1; row "1 3" SL 0 is VL 2.
    assert_eq!(f.sl2vl[a][(2 * 4) * w], 1);
    assert_eq!(f.sl2vl[a][(2) * w], 2);
    assert_eq!(f.nic_sl2vl[..4], [0, 1, 2, 3]);
    // Switch B has no SL2VL rows: VL 0.
    assert!(f.sl2vl[b].iter().all(|&v| v == 0));
    assert!(crate::cdg::verify(&t, &f).unwrap().deadlock_free);
    // A flitsim round trip of what was read gives the same tables.
    let again = read_tables(
        &t,
        &write_lfts(&t, &f).unwrap(),
        Some(&write_sl2vl(&t, &f).unwrap()),
        Some(&write_path_sl(&t, &f).unwrap()),
    )
    .unwrap();
    assert_eq!(again.lft, f.lft);
    assert_eq!(again.nic_sl2vl, f.nic_sl2vl);
    // Old OpenSM entry syntax, `0x<lid> <port> : (<type> portguid 0x…: '…')`, reads too.
    let old = LFTS
        .replace(
            " # Channel Adapter portguid",
            " : (Channel Adapter portguid",
        )
        .replace("mlx4_0'", "mlx4_0')")
        .replace("lids dumped", "lids in use");
    assert_eq!(read_tables(&t, &old, None, None).unwrap().lft, f.lft);
}

fn err(topo: &Topology, lfts: &str, sl2vl: Option<&str>, psl: Option<&str>) -> String {
    read_tables(topo, lfts, sl2vl, psl).unwrap_err().to_string()
}

#[test]
fn malformed_dumps_name_file_and_line() {
    let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
    let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 0x1"), None, None);
    assert!(
        m.contains("opensm-lfts.dump, line 4: cannot read the output port"),
        "{m}"
    );
    let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 009"), None, None);
    assert!(m.contains("line 4: port 9 does not exist"), "{m}");
    let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 000"), None, None);
    assert!(
        m.contains("line 4:") && m.contains("port 0, the switch itself"),
        "{m}"
    );
    let m = err(
        &t,
        &LFTS.replace("guid 0x0000000000000020", "guid 0x99"),
        None,
        None,
    );
    assert!(
        m.contains("line 7: switch GUID 0x0000000000000099 is not in"),
        "{m}"
    );
    let m = err(
        &t,
        &LFTS.replace(
            "0x0004 002 # Channel Adapter portguid 0x00000000000000b1",
            "0x0009 002 # Channel Adapter portguid 0x00000000000000c1",
        ),
        None,
        None,
    );
    assert!(
        m.contains("line 11: LID 9 (0x0009) belongs to no node"),
        "{m}"
    );
    let m = err(
        &t,
        &LFTS.replace("4 lids dumped\nUni", "garbage\nUni"),
        None,
        None,
    );
    assert!(m.contains("line 6: unrecognised line 'garbage'"), "{m}");
    let m = err(&t, "0x0001 001\n", None, None);
    assert!(m.contains("line 1: an LFT entry before any"), "{m}");
    // A routing that does not reach an endpoint fails the route check.
    let m = err(
        &t,
        &LFTS.replace("0x0004 002 #", "0x0004 003 #"),
        None,
        None,
    );
    assert!(m.contains("loop"), "{m}");
    let m = err(
        &t,
        LFTS,
        Some(&SL2VL.replace("1   3   : 2  1  ", "1   3   : ")),
        None,
    );
    assert!(
        m.contains("opensm-sl2vl.dump, line 10: expected 16 VLs"),
        "{m}"
    );
    let m = err(
        &t,
        LFTS,
        Some(&SL2VL.replace("1   3   : 2  1", "1   3   : 22 1")),
        None,
    );
    assert!(m.contains("line 10: SL 0: '22' is not a VL"), "{m}");
    let m = err(&t, LFTS, None, Some("3 4 0\n3 x 1\n"));
    assert!(
        m.contains("path-sl.txt, line 2: destination LID 'x'"),
        "{m}"
    );
    let m = err(&t, LFTS, None, Some("3 44 0\n"));
    assert!(
        m.contains("path-sl.txt, line 1: LID 44 belongs to no node"),
        "{m}"
    );
}

#[test]
fn a_used_sl_on_vl15_is_refused() {
    let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
    // Switch A's turn from host A (IB port 1) to switch B (IB port 3) drops SL 0.
    let bad = SL2VL.replace("1   3   : 2  1", "1   3   : 15 1");
    let m = err(&t, LFTS, Some(&bad), None);
    assert!(
        m.contains("VL 15 (drop)") && m.contains("port 1 to port 3"),
        "{m}"
    );
}

#[test]
fn ib_limits_are_enforced_when_writing() {
    let t = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let f = route(&t, "dor", &RoutingRequest { vls: 8, classes: 9 }).unwrap();
    assert!(f.wire_sls() > 16);
    let m = write_sl2vl(&t, &f).unwrap_err().to_string();
    assert!(m.contains("InfiniBand has only 16"), "{m}");
    let mut g = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    g.num_vls = 16;
    g.nic_sl2vl[0] = 15;
    let m = write_sl2vl(&t, &g).unwrap_err().to_string();
    assert!(
        m.contains("VL 15") && m.contains("at most 15 data VLs"),
        "{m}"
    );
    // Writing needs LIDs.
    let ibsim = "Switch 2 \"S1\"\n[1] \"H1\"[1]\nHca 1 \"H1\"\n[1] \"S1\"[1]\n";
    let t = Topology::from_ib_str(ibsim, "net").unwrap();
    let f = route(&t, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
    let m = write_lfts(&t, &f).unwrap_err().to_string();
    assert!(m.contains("has no GUID"), "{m}");
}

#[test]
fn write_dir_writes_four_files_and_replaces_them() {
    let t = generators::torus(&[3, 3], 1, 1, 1).unwrap();
    let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    let base = std::env::temp_dir().join(format!("flitsim-opensm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let dir = base.join("a/b");
    let paths = write_dir(&t, &f, &dir).unwrap();
    assert_eq!(paths.len(), 4);
    assert!(paths.iter().all(|p| p.is_file()));
    // Again into the existing directory; no temporary left behind.
    write_dir(&t, &f, &dir).unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
    let back = read_dir(&t, &dir).unwrap();
    assert_eq!(back.lft, f.lft);
    std::fs::remove_file(dir.join(LFTS_FILE)).unwrap();
    let m = read_dir(&t, &dir).unwrap_err().to_string();
    assert!(m.contains("no opensm-lfts.dump"), "{m}");
    let _ = std::fs::remove_dir_all(&base);
}
