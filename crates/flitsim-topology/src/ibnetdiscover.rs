//! Reading and writing InfiniBand fabric dumps: the text that `ibnetdiscover` (infiniband-diags)
//! prints, and the "net" files of the `ibsim` fabric simulator, which use the same record
//! syntax (ibsim's `net-examples/examples.README`: "ibsim uses text file in the format compatible
//! with ibnetdiscover command output").
//!
//! ## Accepted syntax
//!
//! ```text
//! # comment                                   (also blank lines)
//! vendid=0x2c9   devid=0xc738   sysimgguid=0x…   switchguid=0x…(…)   caguid=0x…
//! Switch 36 "S-f4521403001165a0"  # "MF0;ib5:SX6036/U1" enhanced port 0 lid 128 lmc 0
//! [1]  "H-24be05ffff980030"[1](24be05ffff980031)  # "stage114 mlx4_0" lid 105 4xQDR
//! [21] "S-f4521403007ea570"[26]                   # "MF0;ib8:SX6036/U1" lid 1 4xFDR10
//! Ca 2 "H-24be05ffff985d90"  # "stage97 mlx4_0"
//! [1](24be05ffff985d91)  "S-f4521403001165a0"[32]  # lid 121 lmc 0 "MF0;ib5:SX6036/U1" lid 128 4xQDR
//! Hca 2 "Hca1"                                 (ibsim: Hca = Ca, any quoted node id)
//! [1] "Switch1"[1]                             (ibsim: no port GUIDs, no comment)
//! ```
//!
//! A node record is a header line followed by one line per connected port. Node ids of the
//! form `S-<hex>` / `H-<hex>` carry the node GUID; other ids (ibsim) are plain names.
//! In a port line the `(hex)` right after the local port number is the local port GUID (CA
//! records), the `(hex)` after the remote port number the remote port GUID (switch records
//! pointing at CAs). In the `#` comment, a `lid N` before the first quoted string is the local
//! port's LID and one after it the remote port's LID; link width and speed (`4xQDR`, …) are
//! ignored. ibsim's `include`, `do` and `@alias` extensions and routers are not supported.
//!
//! ## Mapping to flitsim
//!
//! * Each switch becomes a flitsim switch with as many ports as the header says; IB port `p`
//!   (numbered from 1; port 0 is the management port) is flitsim port `p − 1`. Its GUID is the
//!   node GUID, its LID the LID of port 0 (`lid` in the header). LID 0 means "unassigned".
//! * Each *connected* CA port becomes one flitsim endpoint (CA records in file order, then by
//!   port number). Its GUID is the port GUID (for ibsim files without port GUIDs:
//!   node GUID + port number, ibsim's own convention, when the node id carries a GUID), its
//!   LID the LID on its port line. Its name is the CA's description, with ` p<port>` appended
//!   when the CA has more than one connected port; names that would repeat get the GUID (or a
//!   counter) appended. Switch names are their descriptions, made unique the same way.
//! * Each link appears in the records of both its ends. The two halves must agree on ports,
//!   port GUIDs and LIDs; a link listed from one end only is accepted. Several links between
//!   the same two switches are kept as separate links. Every link gets latency 1 and width 1.
//!
//! Links are ordered endpoint links first (in endpoint order), then switch-to-switch links by
//! (switch, port) of their lower end, so [`Topology::to_ibnetdiscover`] followed by reading
//! gives back the same switches, endpoints and links.
use crate::{
    Endpoint, Link, NodeId, PortNum, PortRef, Shape, Switch, Topology, TopologyError,
    GENERATED_ENDPOINT_GUID_BASE, GENERATED_SWITCH_GUID_BASE,
};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Switch,
    Ca,
}

/// A node record header.
#[derive(Debug)]
struct NodeRec {
    kind: Kind,
    id: String,
    nports: u16,
    desc: Option<String>,
    guid: Option<u64>,
    lid: Option<u16>,
    line: usize,
}

/// One side of a link, as listed in the record of `node`.
#[derive(Debug)]
struct Half {
    node: usize,
    port: u16,
    remote_id: String,
    remote_port: u16,
    local_guid: Option<u64>,
    remote_guid: Option<u64>,
    local_lid: Option<u16>,
    remote_lid: Option<u16>,
    line: usize,
}

type PResult<T> = Result<T, String>;

/// A cursor over one line.
struct Cur<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cur<'a> {
    fn new(s: &'a str) -> Self {
        Cur { s, pos: 0 }
    }
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn skip_ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char, what: &str) -> PResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' {what}, found {}", self.found()))
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            None => "end of line".into(),
            Some(_) => {
                let r: String = self.rest().chars().take(12).collect();
                format!("'{r}'")
            }
        }
    }
    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let r = self.rest();
        let n = r.find(|c: char| !f(c)).unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }
    fn decimal(&mut self, what: &str) -> PResult<u64> {
        let d = self.take_while(|c| c.is_ascii_digit());
        if d.is_empty() {
            return Err(format!("expected {what}, found {}", self.found()));
        }
        d.parse().map_err(|_| format!("{what} '{d}' is too large"))
    }
    fn quoted(&mut self, what: &str) -> PResult<String> {
        self.expect('"', &format!("before {what}"))?;
        let r = self.rest();
        match r.find('"') {
            Some(n) => {
                self.pos += n + 1;
                Ok(r[..n].to_string())
            }
            None => Err(format!("unterminated quoted {what}")),
        }
    }
    /// `(hex)` if present.
    fn paren_guid(&mut self, what: &str) -> PResult<Option<u64>> {
        if !self.eat('(') {
            return Ok(None);
        }
        let h = self.take_while(|c| c != ')');
        let g = parse_hex(h).ok_or_else(|| format!("bad {what} '{h}'"))?;
        self.expect(')', &format!("after {what}"))?;
        Ok(Some(g))
    }
}

/// Parses 1–16 hex digits, with or without `0x`.
fn parse_hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 16 || !s.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// The GUID encoded in an `S-…`/`H-…` node id, `None` for plain (ibsim) names.
fn guid_of_id(id: &str) -> PResult<Option<u64>> {
    match id
        .strip_prefix("S-")
        .or_else(|| id.strip_prefix("H-"))
        .or_else(|| id.strip_prefix("R-"))
    {
        Some(h) => parse_hex(h)
            .map(Some)
            .ok_or_else(|| format!("bad GUID '{h}' in node id \"{id}\"")),
        None => Ok(None),
    }
}

/// Splits a `#` comment into words, keeping quoted strings whole (marked `true`).
fn comment_tokens(c: &str) -> PResult<Vec<(bool, String)>> {
    let mut out = Vec::new();
    let mut cur = Cur::new(c);
    loop {
        cur.skip_ws();
        match cur.peek() {
            None => return Ok(out),
            Some('"') => out.push((true, cur.quoted("description")?)),
            Some(_) => out.push((false, cur.take_while(|c| !c.is_whitespace()).to_string())),
        }
    }
}

/// Comment contents: the first quoted string, the LID before it and the LID after it.
struct Comment {
    desc: Option<String>,
    lid_before: Option<u16>,
    lid_after: Option<u16>,
}

fn parse_comment(c: &str) -> PResult<Comment> {
    let toks = comment_tokens(c)?;
    let mut out = Comment {
        desc: None,
        lid_before: None,
        lid_after: None,
    };
    let mut i = 0;
    while i < toks.len() {
        let (q, t) = &toks[i];
        if *q {
            if out.desc.is_none() {
                out.desc = Some(t.clone());
            }
        } else if t == "lid" {
            let v = toks
                .get(i + 1)
                .filter(|(q, _)| !q)
                .ok_or_else(|| "expected a number after 'lid'".to_string())?;
            let lid: u16 = v.1.parse().map_err(|_| format!("bad LID '{}'", v.1))?;
            let lid = (lid != 0).then_some(lid);
            if out.desc.is_none() {
                out.lid_before = out.lid_before.or(lid);
            } else {
                out.lid_after = out.lid_after.or(lid);
            }
            i += 1;
        }
        i += 1;
    }
    Ok(out)
}

/// Splits off a trailing `# comment`, ignoring `#` inside quotes.
fn split_comment(s: &str) -> (&str, Option<&str>) {
    let mut in_q = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_q = !in_q,
            '#' if !in_q => return (&s[..i], Some(&s[i + 1..])),
            _ => {}
        }
    }
    (s, None)
}

/// Everything read from the text, before linking.
struct Parsed {
    nodes: Vec<NodeRec>,
    halves: Vec<Half>,
}

fn parse_lines(text: &str) -> Result<Parsed, (usize, String)> {
    let mut nodes: Vec<NodeRec> = Vec::new();
    let mut halves = Vec::new();
    let mut current: Option<usize> = None;
    let mut pending_guid: Option<u64> = None;
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        let err = |m: String| (ln, m);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let word_end = line
            .find(|c: char| c.is_whitespace() || c == '=' || c == '[' || c == '@')
            .unwrap_or(line.len());
        let word = &line[..word_end];
        if line[word_end..].starts_with('=') {
            let value = line[word_end + 1..].trim();
            let (num, extra) = match value.find('(') {
                Some(p) => (&value[..p], Some(&value[p..])),
                None => (value, None),
            };
            let v = parse_hex(num).ok_or_else(|| err(format!("bad value '{value}' for {word}")))?;
            if let Some(x) = extra {
                let inner = x
                    .strip_prefix('(')
                    .and_then(|x| x.strip_suffix(')'))
                    .and_then(parse_hex);
                if inner.is_none() {
                    return Err(err(format!("bad value '{value}' for {word}")));
                }
            }
            match word {
                "switchguid" | "caguid" | "rtguid" => pending_guid = Some(v),
                "vendid" | "devid" | "sysimgguid" => {}
                _ => return Err(err(format!("unknown setting '{word}'"))),
            }
            continue;
        }
        match word {
            "Switch" | "Ca" | "Hca" => {
                let kind = if word == "Switch" {
                    Kind::Switch
                } else {
                    Kind::Ca
                };
                let (body, comment) = split_comment(&line[word_end..]);
                let mut c = Cur::new(body);
                c.skip_ws();
                let n = c.decimal("the number of ports").map_err(err)?;
                if n == 0 || n > PortNum::MAX as u64 - 1 {
                    return Err(err(format!("port count {n} is out of range")));
                }
                c.skip_ws();
                let id = c.quoted("node id").map_err(err)?;
                c.skip_ws();
                if !c.rest().is_empty() {
                    return Err(err(format!("unexpected {} after the node id", c.found())));
                }
                let mut guid = guid_of_id(&id).map_err(err)?;
                if guid.is_none() {
                    guid = pending_guid;
                }
                pending_guid = None;
                let cm = match comment {
                    Some(cm) => parse_comment(cm).map_err(err)?,
                    None => Comment {
                        desc: None,
                        lid_before: None,
                        lid_after: None,
                    },
                };
                nodes.push(NodeRec {
                    kind,
                    id,
                    nports: n as u16,
                    desc: cm.desc,
                    guid,
                    lid: cm.lid_after.or(cm.lid_before),
                    line: ln,
                });
                current = Some(nodes.len() - 1);
            }
            "Rt" | "Router" => return Err(err("routers are not supported".into())),
            "include" | "do" => {
                return Err(err(format!(
                    "the ibsim '{word}' extension is not supported"
                )))
            }
            _ if line.starts_with('[') => {
                let node = current
                    .ok_or_else(|| err("port line before any Switch or Ca record".to_string()))?;
                let (body, comment) = split_comment(line);
                let mut c = Cur::new(body);
                c.expect('[', "before the port number").map_err(err)?;
                let p = c.decimal("a port number").map_err(err)?;
                c.expect(']', "after the port number").map_err(err)?;
                let nports = nodes[node].nports as u64;
                if p == 0 || p > nports {
                    return Err(err(format!(
                        "port {p} is out of range: \"{}\" has ports 1..={nports}",
                        nodes[node].id
                    )));
                }
                let local_guid = c.paren_guid("port GUID").map_err(err)?;
                c.skip_ws();
                let remote_id = c.quoted("remote node id").map_err(err)?;
                guid_of_id(&remote_id).map_err(err)?;
                c.expect('[', "before the remote port number")
                    .map_err(err)?;
                let rp = c.decimal("a remote port number").map_err(err)?;
                c.expect(']', "after the remote port number").map_err(err)?;
                if rp == 0 || rp > PortNum::MAX as u64 - 1 {
                    return Err(err(format!("remote port {rp} is out of range")));
                }
                let remote_guid = c.paren_guid("remote port GUID").map_err(err)?;
                // ibsim port options (`w=4 s=2`) may follow; anything else is an error.
                for tok in c.rest().split_whitespace() {
                    let ok = tok
                        .split_once('=')
                        .is_some_and(|(k, v)| !k.is_empty() && v.parse::<u32>().is_ok());
                    if !ok {
                        return Err(err(format!("unexpected '{tok}' in port line")));
                    }
                }
                let cm = match comment {
                    Some(cm) => parse_comment(cm).map_err(err)?,
                    None => Comment {
                        desc: None,
                        lid_before: None,
                        lid_after: None,
                    },
                };
                halves.push(Half {
                    node,
                    port: p as u16,
                    remote_id,
                    remote_port: rp as u16,
                    local_guid,
                    remote_guid,
                    local_lid: cm.lid_before,
                    remote_lid: cm.lid_after,
                    line: ln,
                });
            }
            _ if line.starts_with('@') => {
                return Err(err("ibsim port aliases ('@') are not supported".into()))
            }
            _ => return Err(err(format!("unrecognised line '{line}'"))),
        }
    }
    Ok(Parsed { nodes, halves })
}

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

fn build(text: &str, origin: &str) -> Result<Topology, TopologyError> {
    let perr = |line: usize, m: String| TopologyError::Parse {
        path: origin.into(),
        message: format!("line {line}: {m}"),
    };
    let Parsed { nodes, halves } = parse_lines(text).map_err(|(l, m)| perr(l, m))?;
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
    // Connected CA ports: port → (switch node, switch port, guid, lid).
    type CaPort = (usize, u16, Option<u64>, Option<u16>);
    let mut ca_ports: Vec<BTreeMap<u16, CaPort>> = vec![BTreeMap::new(); nodes.len()];
    for (hi, h) in halves.iter().enumerate() {
        let r = remote_of[hi];
        if nodes[h.node].kind == Kind::Ca {
            let e = ca_ports[h.node]
                .entry(h.port)
                .or_insert((r, h.remote_port, None, None));
            e.2 = e.2.or(h.local_guid);
            e.3 = e.3.or(h.local_lid);
        } else if nodes[r].kind == Kind::Ca {
            let e = ca_ports[r]
                .entry(h.remote_port)
                .or_insert((h.node, h.port, None, None));
            e.2 = e.2.or(h.remote_guid);
            e.3 = e.3.or(h.remote_lid);
        }
    }
    let mut endpoints = Vec::new();
    let mut links = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.kind != Kind::Ca {
            continue;
        }
        let multi = ca_ports[i].len() > 1;
        let desc = n.desc.clone().unwrap_or_else(|| n.id.clone());
        for (&p, &(s, sp, guid, lid)) in &ca_ports[i] {
            let id = endpoints.len() as u32;
            let guid = guid.or(n.guid.map(|g| g + p as u64));
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

/// Quoted strings cannot contain `"`; it is written as `'`.
fn q(s: &str) -> String {
    s.replace('"', "'")
}

impl Topology {
    /// Parses an `ibnetdiscover` dump or an `ibsim` net file (both accepted by the same
    /// grammar, see the [module documentation](crate::ibnetdiscover)); `origin` names the
    /// source in errors and gives the topology its name. Every malformed line gives
    /// [`TopologyError::Parse`] with `line N: …`.
    pub fn from_ib_str(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        build(text, origin)
    }

    /// Reads an `ibnetdiscover` dump or `ibsim` net file.
    pub fn read_ib(path: &Path) -> Result<Topology, TopologyError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Io {
            path: name.clone(),
            source,
        })?;
        build(&text, &name)
    }

    /// Writes the topology as an `ibnetdiscover`-style dump that [`Topology::from_ib_str`]
    /// reads back to the same switches, endpoints and links (as a set; links come back in the
    /// reader's order). Each endpoint becomes a one-port CA whose node and port GUID are the
    /// endpoint's GUID. Missing GUIDs are filled with the values
    /// [`Topology::assign_guids_and_lids`] would give; missing LIDs are left out. Latency and
    /// width are not written (the reader uses 1 for both); a `"` in a name is written as `'`.
    pub fn to_ibnetdiscover(&self) -> String {
        let sg = |s: usize| {
            self.switches[s]
                .guid
                .unwrap_or(GENERATED_SWITCH_GUID_BASE + s as u64)
        };
        let eg = |e: usize| {
            self.endpoints[e]
                .guid
                .unwrap_or(GENERATED_ENDPOINT_GUID_BASE + e as u64)
        };
        let lid = |l: Option<u16>| l.map(|l| format!(" lid {l}")).unwrap_or_default();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "#\n# Topology file: written by flitsim from topology \"{}\"\n#",
            q(&self.name)
        );
        for (s, sw) in self.switches.iter().enumerate() {
            let _ = writeln!(out, "\nswitchguid={:#x}({:x})", sg(s), sg(s));
            let _ = writeln!(
                out,
                "Switch\t{} \"S-{:016x}\"\t\t# \"{}\" enhanced port 0{} lmc 0",
                sw.ports,
                sg(s),
                q(&sw.name),
                lid(sw.lid)
            );
            for p in 0..sw.ports {
                let Some(peer) = self.switch_peer(crate::SwitchId(s as u32), p) else {
                    continue;
                };
                match peer.remote.node {
                    NodeId::Switch(t) => {
                        let t = t as usize;
                        let _ = writeln!(
                            out,
                            "[{}]\t\"S-{:016x}\"[{}]\t\t# \"{}\"{}",
                            p + 1,
                            sg(t),
                            peer.remote.port + 1,
                            q(&self.switches[t].name),
                            lid(self.switches[t].lid)
                        );
                    }
                    NodeId::Endpoint(e) => {
                        let e = e as usize;
                        let _ = writeln!(
                            out,
                            "[{}]\t\"H-{:016x}\"[1]({:x}) \t\t# \"{}\"{}",
                            p + 1,
                            eg(e),
                            eg(e),
                            q(&self.endpoints[e].name),
                            lid(self.endpoints[e].lid)
                        );
                    }
                }
            }
        }
        for (e, ep) in self.endpoints.iter().enumerate() {
            let (s, p) = self.endpoint_switch(crate::EndpointId(e as u32));
            let s = s.0 as usize;
            let _ = writeln!(out, "\ncaguid={:#x}", eg(e));
            let _ = writeln!(out, "Ca\t1 \"H-{:016x}\"\t\t# \"{}\"", eg(e), q(&ep.name));
            let _ = writeln!(
                out,
                "[1]({:x}) \t\"S-{:016x}\"[{}]\t\t#{} lmc 0 \"{}\"{}",
                eg(e),
                sg(s),
                p + 1,
                lid(ep.lid),
                q(&self.switches[s].name),
                lid(self.switches[s].lid)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
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
        let truncated =
            GOOD.lines().take(4).collect::<Vec<_>>().join("\n") + "\n[1](a1) \t\"S-0000";
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
}
