//! `Topology::read_file` / `read_str`: every format flitsim reads, told apart by content,
//! and the inputs that used to be accepted silently (an empty file, a 0-port switch, an
//! endpoint GUID equal to a switch GUID), which are now errors naming file and line.
use flitsim_topology::{generators, Topology, TopologyFormat};
use std::path::{Path, PathBuf};

/// The shared test fabric (a real `ibnetdiscover` dump). These tests fail, not skip, when it
/// is missing: the dataset is part of the test suite.
fn shared_dump() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo");
    assert!(
        p.is_file(),
        "test fabric {} is missing (the shared test data must be present)",
        p.display()
    );
    p
}

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("flitsim-read-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const IBSIM: &str = include_str!("data/two-switches.ibsim");

fn err(text: &str) -> String {
    Topology::read_str(text, "bad.topo")
        .unwrap_err()
        .to_string()
}

#[test]
fn the_format_is_detected_by_content() {
    let t = generators::torus(&[3, 3], 1, 1, 1).unwrap();
    assert_eq!(
        Topology::detect_format(&t.to_json()),
        Some(TopologyFormat::Json)
    );
    assert_eq!(
        Topology::detect_format(&t.to_ibnetdiscover()),
        Some(TopologyFormat::InfiniBand)
    );
    assert_eq!(
        Topology::detect_format(IBSIM),
        Some(TopologyFormat::InfiniBand)
    );
    assert_eq!(Topology::detect_format(" \n\t\n"), None);
    assert_eq!(
        Topology::detect_format("\u{feff}\n  {"),
        Some(TopologyFormat::Json)
    );
}

#[test]
fn every_format_is_read_whatever_the_file_is_called() {
    let dir = TempDir::new("formats");
    let t = generators::kary_ntree(2, 3, 1).unwrap();
    // Extensions that lie: JSON in a .topo file, an ibnetdiscover dump in a .json file.
    for (name, text) in [
        ("fabric.topo", t.to_json()),
        ("fabric", t.to_json()),
        ("fabric.json", t.to_ibnetdiscover()),
        ("fabric.net", t.to_ibnetdiscover()),
    ] {
        let p = dir.write(name, text);
        let back = Topology::read_file(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.num_switches(), t.num_switches(), "{name}");
        assert_eq!(back.num_endpoints(), t.num_endpoints(), "{name}");
        assert_eq!(back.links().len(), t.links().len(), "{name}");
    }
    let p = dir.write("net.json", IBSIM);
    let n = Topology::read_file(&p).unwrap();
    assert_eq!((n.num_switches(), n.num_endpoints()), (2, 4));
    // A byte-order mark is skipped.
    let p = dir.write("bom.json", format!("\u{feff}{}", t.to_json()));
    assert_eq!(Topology::read_file(&p).unwrap().num_switches(), 12);
}

#[test]
fn the_shared_ibnetdiscover_dump_is_read_by_read_file() {
    let p = shared_dump();
    let t = Topology::read_file(&p).unwrap();
    assert_eq!((t.num_switches(), t.num_endpoints()), (8, 145));
    // Same as the format-specific reader, and back through flitsim's own writers.
    let ib = Topology::read_ib(&p).unwrap();
    assert_eq!(t.links(), ib.links());
    let again = Topology::read_str(&t.to_ibnetdiscover(), "again.topo").unwrap();
    assert_eq!(again.links(), t.links());
    let json = Topology::read_str(&t.to_json(), "again.json").unwrap();
    assert_eq!(json.links(), t.links());
}

#[test]
fn empty_files_are_errors() {
    let dir = TempDir::new("empty");
    for (name, bytes) in [
        ("zero.topo", ""),
        ("blank.topo", " \n\n\t \r\n"),
        ("bom.json", "\u{feff}"),
    ] {
        let p = dir.write(name, bytes);
        let m = Topology::read_file(&p).unwrap_err().to_string();
        assert!(
            m.starts_with(&p.display().to_string()) && m.contains("empty topology file"),
            "{name}: {m}"
        );
    }
    // Comments only: no fabric either.
    let m = err("# nothing here\n\n# at all\n");
    assert!(
        m.contains("bad.topo: line 3") && m.contains("empty topology file"),
        "{m}"
    );
    // CAs only.
    let m = err("\nCa 1 \"H-0001\"\n");
    assert!(
        m.contains("line 2") && m.contains("no Switch record"),
        "{m}"
    );
    // JSON without switches.
    let m = err(
        r#"{"format":"flitsim-topology","version":1,"name":"x","switches":[],"endpoints":[],"links":[]}"#,
    );
    assert!(m.contains("bad.topo") && m.contains("no switches"), "{m}");
}

#[test]
fn bytes_that_are_not_utf8_name_the_line() {
    let m = Topology::read_bytes(b"Switch 2 \"S-1\"\n[1] \"S-2\"\xff[1]\n", "x.topo")
        .unwrap_err()
        .to_string();
    assert!(m.starts_with("x.topo: line 2, column 10: not UTF-8"), "{m}");
}

#[test]
fn a_switch_with_zero_ports_is_an_error() {
    let m = err("Switch 0 \"S-1\"\n");
    assert!(
        m.contains("bad.topo: line 1") && m.contains("port count 0"),
        "{m}"
    );
    let t = generators::torus(&[2, 2], 1, 1, 1).unwrap();
    let text = t.to_json().replacen("\"ports\": 5", "\"ports\": 0", 1);
    let m = err(&text);
    assert!(
        m.contains("bad.topo") && m.contains("switch 0 (\"sw0_0\") has 0 ports"),
        "{m}"
    );
}

#[test]
fn an_endpoint_guid_equal_to_a_switch_guid_is_an_error() {
    // The CA's port GUID is the switch's node GUID: it would be written twice into guid2lid.
    let text = "Switch 4 \"S-000000000000abcd\"\n\
                [1] \"H-0000000000000100\"[1](abcd)\n\
                \n\
                Ca 1 \"H-0000000000000100\"\n\
                [1](abcd) \"S-000000000000abcd\"[1]\n";
    let m = err(text);
    assert!(
        m.contains("bad.topo: line 2")
            && m.contains("GUID 0x000000000000abcd")
            && m.contains("switch \"S-000000000000abcd\" on line 1"),
        "{m}"
    );
    // ibsim: an unlisted port GUID is node GUID + port, which here hits the switch.
    let m = err("Switch 4 \"S-0000000000000101\"\n[1] \"H-0000000000000100\"[1]\nCa 1 \"H-0000000000000100\"\n[1] \"S-0000000000000101\"[1]\n");
    assert!(
        m.contains("line 2") && m.contains("0x0000000000000101"),
        "{m}"
    );
    // The same in flitsim JSON.
    let t = generators::torus(&[2, 2], 1, 1, 1).unwrap();
    let sg = t.switches()[1].guid.unwrap();
    let eg = t.endpoints()[2].guid.unwrap();
    let text = t
        .to_json()
        .replace(&format!("\"guid\": {eg}"), &format!("\"guid\": {sg}"));
    let m = err(&text);
    assert!(
        m.contains("endpoint ep2 has GUID") && m.contains("the GUID of switch sw1_0"),
        "{m}"
    );
}

#[test]
fn identity_and_port_clashes_name_their_lines() {
    // Two switches with the same LID.
    let m = err("Switch 2 \"S-1\" # \"a\" lid 3\n[1] \"S-2\"[1]\nSwitch 2 \"S-2\" # \"b\" lid 3\n");
    assert!(
        m.contains("line 3") && m.contains("already the LID of switch \"S-1\" on line 1"),
        "{m}"
    );
    // Two one-sided links to the same far port.
    let m = err(
        "Switch 2 \"S-1\"\nSwitch 2 \"S-2\"\n[1] \"S-1\"[1]\nSwitch 2 \"S-3\"\n[1] \"S-1\"[1]\n",
    );
    assert!(
        m.contains("line 5") && m.contains("already the far end of the link on line 3"),
        "{m}"
    );
}

/// Found by fuzzing: a switch with 65535 ports (the most a flitsim port number allows) was
/// accepted in JSON but its ibnetdiscover dump was refused ("port count 65535 is out of
/// range"); IB port numbers 1..=65535 fit, so the dump now reads back.
#[test]
fn a_switch_with_65535_ports_survives_the_ibnetdiscover_writer() {
    use flitsim_topology::{Endpoint, Link, NodeId, PortRef, Shape, Switch};
    let mut t = Topology::new(
        "wide",
        Shape::Irregular,
        vec![Switch {
            name: "sw".into(),
            ports: u16::MAX,
            ..Switch::default()
        }],
        vec![Endpoint {
            name: "ep".into(),
            ..Endpoint::default()
        }],
        vec![Link {
            a: PortRef {
                node: NodeId::Endpoint(0),
                port: 0,
            },
            b: PortRef {
                node: NodeId::Switch(0),
                port: u16::MAX - 1,
            },
            latency: 1,
            width: 1,
        }],
    )
    .unwrap();
    t.assign_guids_and_lids();
    let back = Topology::read_str(&t.to_ibnetdiscover(), "wide.topo").unwrap();
    assert_eq!(back.switches()[0].ports, u16::MAX);
    assert_eq!(back.links()[0].b.port, u16::MAX - 1);
}
