//! From parsed records to a [`Topology`]: joins the two halves of every link, checks that
//! they agree, names and numbers switches and endpoints as the [module
//! documentation](super) describes.
use super::parse::{parse_lines, Kind, Parsed};
use crate::{Endpoint, Link, NodeId, PortRef, Shape, Switch, Topology, TopologyError};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Appends a suffix to names that occur more than once.
fn uniquify(names: &mut [String], suffix: impl Fn(usize) -> String) {
    let mut count: HashMap<String, usize> = HashMap::new();
    for n in names.iter() {
        *count.entry(n.clone()).or_default() += 1;
    }
    for (i, n) in names.iter_mut().enumerate() {
        if count[n.as_str()] > 1 {
            *n = format!("{n} {}", suffix(i));
        }
    }
}

pub(super) fn build(text: &str, origin: &str) -> Result<Topology, TopologyError> {
    let perr = |line: usize, m: String| TopologyError::Parse {
        path: origin.into(),
        message: format!("line {line}: {m}"),
    };
    let Parsed { nodes, halves } = parse_lines(text).map_err(|(l, m)| perr(l, m))?;
    if nodes.is_empty() {
        return Err(perr(
            text.lines().count().max(1),
            "the file ends without any Switch or Ca record (an empty topology file)".into(),
        ));
    }
    if let Some(first) = nodes.iter().find(|n| n.kind == Kind::Ca) {
        if nodes.iter().all(|n| n.kind == Kind::Ca) {
            return Err(perr(
                first.line,
                "the file has no Switch record (endpoints must attach to switches)".into(),
            ));
        }
    }
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(&j) = by_id.get(n.id.as_str()) {
            return Err(perr(
                n.line,
                format!(
                    "node \"{}\" is already defined on line {}",
                    n.id, nodes[j].line
                ),
            ));
        }
        by_id.insert(&n.id, i);
    }
    // (node, port) → half.
    let mut at: HashMap<(usize, u16), usize> = HashMap::new();
    // Ports named only as the far end of a link: (node, port) → line.
    let mut claimed: HashMap<(usize, u16), usize> = HashMap::new();
    let mut remote_of = Vec::with_capacity(halves.len());
    for (hi, h) in halves.iter().enumerate() {
        if let Some(&prev) = at.get(&(h.node, h.port)) {
            return Err(perr(
                h.line,
                format!(
                    "port {} of \"{}\" is already listed on line {}",
                    h.port, nodes[h.node].id, halves[prev].line
                ),
            ));
        }
        at.insert((h.node, h.port), hi);
        let r = *by_id
            .get(h.remote_id.as_str())
            .ok_or_else(|| perr(h.line, format!("unknown node \"{}\"", h.remote_id)))?;
        if h.remote_port > nodes[r].nports {
            return Err(perr(
                h.line,
                format!(
                    "remote port {} is out of range: \"{}\" has ports 1..={}",
                    h.remote_port, nodes[r].id, nodes[r].nports
                ),
            ));
        }
        if r == h.node {
            return Err(perr(h.line, "a port is linked to its own node".into()));
        }
        if nodes[r].kind == Kind::Ca && nodes[h.node].kind == Kind::Ca {
            return Err(perr(
                h.line,
                "CA-to-CA links are not supported (endpoints must attach to switches)".into(),
            ));
        }
        remote_of.push(r);
    }
    for (hi, h) in halves.iter().enumerate() {
        let key = (remote_of[hi], h.remote_port);
        if at.contains_key(&key) {
            continue; // the two halves are checked against each other below
        }
        if let Some(prev) = claimed.insert(key, h.line) {
            return Err(perr(
                h.line,
                format!(
                    "port {} of \"{}\" is already the far end of the link on line {prev}",
                    h.remote_port, nodes[key.0].id
                ),
            ));
        }
    }
    // Both halves of a link must agree.
    for (hi, h) in halves.iter().enumerate() {
        let r = remote_of[hi];
        let Some(&oi) = at.get(&(r, h.remote_port)) else {
            continue;
        };
        let o = &halves[oi];
        let here = format!("port {} of \"{}\"", h.port, nodes[h.node].id);
        let there = format!("port {} of \"{}\"", h.remote_port, nodes[r].id);
        if remote_of[oi] != h.node || o.remote_port != h.port {
            return Err(perr(
                h.line,
                format!(
                    "link sides disagree: {here} leads to {there}, but line {} says {there} leads to port {} of \"{}\"",
                    o.line, o.remote_port, o.remote_id
                ),
            ));
        }
        for (what, mine, theirs) in [
            ("port GUID", h.remote_guid, o.local_guid),
            ("port GUID", h.local_guid, o.remote_guid),
        ] {
            if let (Some(a), Some(b)) = (mine, theirs) {
                if a != b {
                    return Err(perr(
                        h.line,
                        format!(
                            "link sides disagree on a {what}: {a:x} here, {b:x} on line {}",
                            o.line
                        ),
                    ));
                }
            }
        }
        let lid_pairs = [
            (h.remote_lid, o.local_lid.or(nodes[r].lid)),
            (h.local_lid.or(nodes[h.node].lid), o.remote_lid),
        ];
        for (a, b) in lid_pairs {
            if let (Some(a), Some(b)) = (a, b) {
                if a != b {
                    return Err(perr(
                        h.line,
                        format!(
                            "link sides disagree on a LID: {a} here, {b} on line {}",
                            o.line
                        ),
                    ));
                }
            }
        }
    }
    // Switches in file order.
    let mut switch_of = vec![u32::MAX; nodes.len()];
    let mut switches = Vec::new();
    let mut switch_names = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.kind == Kind::Switch {
            switch_of[i] = switches.len() as u32;
            switch_names.push(n.desc.clone().unwrap_or_else(|| n.id.clone()));
            switches.push(Switch {
                name: String::new(),
                ports: n.nports,
                guid: n.guid,
                lid: n.lid,
            });
        }
    }
    let sw_nodes: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].kind == Kind::Switch)
        .collect();
    uniquify(&mut switch_names, |i| match nodes[sw_nodes[i]].guid {
        Some(g) => format!("({g:016x})"),
        None => format!("({})", nodes[sw_nodes[i]].id),
    });
    for (s, n) in switches.iter_mut().zip(switch_names) {
        s.name = n;
    }
    // Connected CA ports: port → (switch node, switch port, guid, lid, line).
    type CaPort = (usize, u16, Option<u64>, Option<u16>, usize);
    let mut ca_ports: Vec<BTreeMap<u16, CaPort>> = vec![BTreeMap::new(); nodes.len()];
    for (hi, h) in halves.iter().enumerate() {
        let r = remote_of[hi];
        if nodes[h.node].kind == Kind::Ca {
            let e =
                ca_ports[h.node]
                    .entry(h.port)
                    .or_insert((r, h.remote_port, None, None, h.line));
            e.2 = e.2.or(h.local_guid);
            e.3 = e.3.or(h.local_lid);
        } else if nodes[r].kind == Kind::Ca {
            let e = ca_ports[r]
                .entry(h.remote_port)
                .or_insert((h.node, h.port, None, None, h.line));
            e.2 = e.2.or(h.remote_guid);
            e.3 = e.3.or(h.remote_lid);
        }
    }
    let mut endpoints = Vec::new();
    let mut endpoint_lines = Vec::new();
    let mut links = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.kind != Kind::Ca {
            continue;
        }
        let multi = ca_ports[i].len() > 1;
        let desc = n.desc.clone().unwrap_or_else(|| n.id.clone());
        for (&p, &(s, sp, guid, lid, line)) in &ca_ports[i] {
            let id = endpoints.len() as u32;
            let guid = guid.or(n.guid.map(|g| g.wrapping_add(p as u64)));
            endpoint_lines.push(line);
            endpoints.push(Endpoint {
                name: if multi {
                    format!("{desc} p{p}")
                } else {
                    desc.clone()
                },
                guid,
                lid,
            });
            links.push(Link {
                a: PortRef {
                    node: NodeId::Endpoint(id),
                    port: 0,
                },
                b: PortRef {
                    node: NodeId::Switch(switch_of[s]),
                    port: sp - 1,
                },
                latency: 1,
                width: 1,
            });
        }
    }
    let mut names: Vec<String> = endpoints.iter().map(|e| e.name.clone()).collect();
    uniquify(&mut names, |i| match endpoints[i].guid {
        Some(g) => format!("({g:016x})"),
        None => format!("(#{i})"),
    });
    for (e, n) in endpoints.iter_mut().zip(names) {
        e.name = n;
    }
    // Identities must be unique (Topology::new checks this too, but cannot name the line).
    let mut guids: HashMap<u64, (String, usize)> = HashMap::new();
    let mut lids: HashMap<u16, (String, usize)> = HashMap::new();
    let idents = switches
        .iter()
        .zip(&sw_nodes)
        .map(|(s, &i)| {
            (
                format!("switch \"{}\"", nodes[i].id),
                s.guid,
                s.lid,
                nodes[i].line,
            )
        })
        .chain(
            endpoints
                .iter()
                .zip(&endpoint_lines)
                .map(|(e, &l)| (format!("endpoint \"{}\"", e.name), e.guid, e.lid, l)),
        );
    for (who, guid, lid, line) in idents {
        if let Some(g) = guid {
            if let Some((prev, pl)) = guids.insert(g, (who.clone(), line)) {
                return Err(perr(
                    line,
                    format!("{who} has GUID {g:#018x}, already the GUID of {prev} on line {pl}"),
                ));
            }
        }
        if let Some(l) = lid {
            if let Some((prev, pl)) = lids.insert(l, (who.clone(), line)) {
                return Err(perr(
                    line,
                    format!("{who} has LID {l}, already the LID of {prev} on line {pl}"),
                ));
            }
        }
    }
    // Switch-to-switch links, each once, keyed by their lower end.
    let mut sw_links: BTreeMap<(u32, u16), (u32, u16)> = BTreeMap::new();
    for (hi, h) in halves.iter().enumerate() {
        let r = remote_of[hi];
        if nodes[h.node].kind == Kind::Switch && nodes[r].kind == Kind::Switch {
            let a = (switch_of[h.node], h.port - 1);
            let b = (switch_of[r], h.remote_port - 1);
            let (lo, hi_end) = if a < b { (a, b) } else { (b, a) };
            sw_links.insert(lo, hi_end);
        }
    }
    for ((s, p), (t, q)) in sw_links {
        links.push(Link {
            a: PortRef {
                node: NodeId::Switch(s),
                port: p,
            },
            b: PortRef {
                node: NodeId::Switch(t),
                port: q,
            },
            latency: 1,
            width: 1,
        });
    }
    let name = Path::new(origin)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| origin.to_string());
    Topology::new(name, Shape::Irregular, switches, endpoints, links).map_err(|e| {
        TopologyError::Parse {
            path: origin.into(),
            message: e.to_string(),
        }
    })
}
