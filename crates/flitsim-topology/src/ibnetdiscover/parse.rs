//! The line grammar of `ibnetdiscover` dumps and `ibsim` net files (see the
//! [module documentation](super)): node record headers, port lines and their comments, read
//! into [`Parsed`] records before any linking.
use crate::PortNum;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Switch,
    Ca,
}

/// A node record header.
#[derive(Debug)]
pub(super) struct NodeRec {
    pub(super) kind: Kind,
    pub(super) id: String,
    pub(super) nports: u16,
    pub(super) desc: Option<String>,
    pub(super) guid: Option<u64>,
    pub(super) lid: Option<u16>,
    pub(super) line: usize,
}

/// One side of a link, as listed in the record of `node`.
#[derive(Debug)]
pub(super) struct Half {
    pub(super) node: usize,
    pub(super) port: u16,
    pub(super) remote_id: String,
    pub(super) remote_port: u16,
    pub(super) local_guid: Option<u64>,
    pub(super) remote_guid: Option<u64>,
    pub(super) local_lid: Option<u16>,
    pub(super) remote_lid: Option<u16>,
    pub(super) line: usize,
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
pub(super) struct Parsed {
    pub(super) nodes: Vec<NodeRec>,
    pub(super) halves: Vec<Half>,
}

pub(super) fn parse_lines(text: &str) -> Result<Parsed, (usize, String)> {
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
                if n == 0 || n > PortNum::MAX as u64 {
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
                if rp == 0 || rp > PortNum::MAX as u64 {
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
