//! Tests of the ibnetdiscover / ibsim reader and writer.
use crate::{generators, link_set, EndpointId, NodeId, SwitchId, Topology};
use std::collections::{BTreeMap, BTreeSet};

const TEST_FILE: &str = "../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo";

fn test_file() -> Option<Topology> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(TEST_FILE);
    if !path.exists() {
        println!("skipping: test fabric {} is not present", path.display());
        return None;
    }
    Some(Topology::read_ib(&path).unwrap())
}

#[test]
fn real_dump_has_the_expected_fabric() {
    let Some(t) = test_file() else { return };
    assert_eq!(t.num_switches(), 8);
    assert_eq!(t.num_endpoints(), 145);
    assert!(t.is_connected());
    assert!(t.switches().iter().all(|s| s.ports == 36));
    // Inter-switch links: 47 in total, between 12 switch pairs: 11 pairs with 4 parallel
    // links and one pair with 3.
    let mut pairs: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for l in t.links() {
        if let (NodeId::Switch(a), NodeId::Switch(b)) = (l.a.node, l.b.node) {
            *pairs.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    assert_eq!(pairs.values().sum::<u32>(), 47);
    assert_eq!(pairs.len(), 12);
    let mut mult: Vec<u32> = pairs.values().copied().collect();
    mult.sort();
    assert_eq!(mult, [vec![3], vec![4; 11]].concat());
    assert_eq!(t.links().len(), 145 + 47);
    // Hosts per switch: five leaves with 24, one with 22, spine ib7 with 3, spine ib8 none.
    let mut per: Vec<usize> = (0..8)
        .map(|s| t.switch_endpoints(SwitchId(s)).count())
        .collect();
    per.sort();
    assert_eq!(per, vec![0, 3, 22, 24, 24, 24, 24, 24]);
    // 144 CAs; one of them has both ports cabled.
    let two_port: Vec<&str> = t
        .endpoints()
        .iter()
        .filter(|e| e.name.ends_with(" p1") || e.name.ends_with(" p2"))
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(two_port.len(), 2, "{two_port:?}");
    // Identity lookups.
    let ib5 = t.switch_by_guid(0xf452_1403_0011_65a0).unwrap();
    let sw = &t.switches()[ib5.0 as usize];
    assert_eq!((sw.name.as_str(), sw.lid), ("MF0;ib5:SX6036/U1", Some(128)));
    let e = t.endpoint_by_guid(0x24be_05ff_ff98_0031).unwrap();
    assert_eq!(t.endpoints()[e.0 as usize].name, "stage114 mlx4_0");
    assert_eq!(t.endpoints()[e.0 as usize].lid, Some(105));
    assert_eq!(t.endpoint_by_lid(105), Some(e));
    // IB port 1 of ib5 is flitsim port 0.
    assert_eq!(t.endpoint_switch(e), (ib5, 0));
    // Port GUID with leading zeros dropped in the dump.
    let atlas = t.endpoint_by_guid(0x0002_c903_002d_b103).unwrap();
    assert_eq!(t.endpoints()[atlas.0 as usize].lid, Some(129));
    // A CA whose second port is the cabled one keeps its port GUID.
    let b2 = t.endpoint_by_guid(0x24be_05ff_ff98_bb42).unwrap();
    assert_eq!(t.endpoints()[b2.0 as usize].name, "booster2 mlx4_0");
    assert!(t.endpoint_by_lid(1).is_none(), "LID 1 is a switch");
    let names: BTreeSet<&str> = t.endpoints().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.len(), 145, "endpoint names are unique");
    assert!(t.switch_by_guid(0x24be_05ff_ff98_0031).is_none());
}

#[test]
fn real_dump_roundtrips_exactly() {
    let Some(t) = test_file() else { return };
    let text = t.to_ibnetdiscover();
    let back = Topology::from_ib_str(&text, "back.topo").unwrap();
    assert_eq!(back.links(), t.links());
    assert_eq!(back.switches(), t.switches());
    assert_eq!(back.endpoints(), t.endpoints());
}

#[test]
fn generated_topologies_roundtrip() {
    for t in [
        generators::kary_ntree(3, 3, 1).unwrap(),
        generators::torus(&[3, 4], 2, 2, 1).unwrap(),
        generators::torus(&[2, 2], 1, 1, 1).unwrap(),
    ] {
        let back = Topology::from_ib_str(&t.to_ibnetdiscover(), "gen").unwrap();
        assert_eq!(back.switches(), t.switches(), "{}", t.name());
        assert_eq!(back.endpoints(), t.endpoints(), "{}", t.name());
        assert_eq!(link_set(&back), link_set(&t), "{}", t.name());
        // A second round trip is exact, links in the same order.
        let again = Topology::from_ib_str(&back.to_ibnetdiscover(), "gen").unwrap();
        assert_eq!(again.links(), back.links());
    }
}

const IBSIM: &str = r#"# ibsim net file
Switch	8 "Switch1"
[1]	"Hca1"[1]
[2]	"Hca1"[2]
[3]	"Switch2"[3]
[5]	"Switch2"[5]

Switch 8 "Switch2"
[1]	"Hca2"[1]
[2]	"Hca2"[2]
[3]	"Switch1"[3]
[5]	"Switch1"[5]

Hca	2 "Hca1"
[1]	"Switch1"[1]
[2]	"Switch1"[2]

Hca	2 "Hca2"
[1]	"Switch2"[1]
[2]	"Switch2"[2]
"#;

#[test]
fn ibsim_net_files_are_read() {
    let t = Topology::from_ib_str(IBSIM, "net.2sw2path4hca2port").unwrap();
    assert_eq!(t.num_switches(), 2);
    assert_eq!(t.num_endpoints(), 4);
    assert_eq!(t.links().len(), 4 + 2);
    let names: Vec<&str> = t.endpoints().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Hca1 p1", "Hca1 p2", "Hca2 p1", "Hca2 p2"]);
    assert_eq!(t.endpoint_switch(EndpointId(1)), (SwitchId(0), 1));
    assert!(t
        .endpoints()
        .iter()
        .all(|e| e.guid.is_none() && e.lid.is_none()));
    assert!(t.is_connected());
    assert_eq!(t.name(), "net");
}

fn err(text: &str) -> String {
    Topology::from_ib_str(text, "bad.topo")
        .unwrap_err()
        .to_string()
}

const GOOD: &str = "Switch\t4 \"S-0000000000000001\"\t# \"sw\" enhanced port 0 lid 1 lmc 0\n\
[1]\t\"H-00000000000000a0\"[1](a1) \t# \"host\" lid 2 4xQDR\n\
\n\
Ca\t2 \"H-00000000000000a0\"\t# \"host\"\n\
[1](a1) \t\"S-0000000000000001\"[1]\t# lid 2 lmc 0 \"sw\" lid 1 4xQDR\n";

#[test]
fn minimal_dump_reads() {
    let t = Topology::from_ib_str(GOOD, "ok.topo").unwrap();
    assert_eq!((t.num_switches(), t.num_endpoints()), (1, 1));
    assert_eq!(t.endpoints()[0].guid, Some(0xa1));
    assert_eq!(t.endpoint_by_lid(2), Some(EndpointId(0)));
    assert_eq!(t.switches()[0].lid, Some(1));
}

#[test]
fn malformed_lines_are_named() {
    // Truncated port line.
    let truncated = GOOD.lines().take(4).collect::<Vec<_>>().join("\n") + "\n[1](a1) \t\"S-0000";
    let m = err(&truncated);
    assert!(m.starts_with("bad.topo: line 5: unterminated"), "{m}");
    let m = err(&GOOD.replace("\"[1]\t# lid 2", "\"[\t# lid 2"));
    assert!(m.contains("line 5: expected a remote port number"), "{m}");
    // Bad GUIDs, in a node id and in a port GUID.
    let m = err(&GOOD.replace(
        "Switch\t4 \"S-0000000000000001\"",
        "Switch\t4 \"S-00000000000zz001\"",
    ));
    assert!(m.contains("line 1: bad GUID '00000000000zz001'"), "{m}");
    let m = err(&GOOD.replace("[1](a1) \t\"S", "[1](a1x) \t\"S"));
    assert!(m.contains("line 5: bad port GUID 'a1x'"), "{m}");
    // Port out of range on either side.
    let m = err(&GOOD.replace("[1]\t\"H-", "[5]\t\"H-"));
    assert!(m.contains("line 2: port 5 is out of range"), "{m}");
    let m = err(&GOOD.replace(
        "[1](a1) \t\"S-0000000000000001\"[1]",
        "[1](a1) \t\"S-0000000000000001\"[9]",
    ));
    assert!(m.contains("line 5: remote port 9 is out of range"), "{m}");
    // The two sides of a link disagree.
    let m = err(&GOOD.replace(
        "\"H-00000000000000a0\"[1](a1)",
        "\"H-00000000000000a0\"[2](a1)",
    ));
    assert!(
        m.contains("line 5: link sides disagree") && m.contains("line 2 says"),
        "{m}"
    );
    let m = err(&GOOD.replace("# lid 2 lmc", "# lid 3 lmc"));
    assert!(m.contains("link sides disagree on a LID"), "{m}");
    // Other junk.
    assert!(err("Switch 4 \"S-1\"\n[1] \"S-2\"[1]\n").contains("line 2: unknown node \"S-2\""));
    assert!(err("[1] \"S-2\"[1]\n").contains("line 1: port line before"));
    assert!(err("\n\nfoo bar\n").contains("line 3: unrecognised line"));
    assert!(err("switchguid=0xzz\n").contains("line 1: bad value"));
    assert!(err("Switch x \"S-1\"\n").contains("line 1: expected the number of ports"));
}
