//! One-line generator specs ([`from_spec`], `torus:6x6`, `xgft:h=2,m=10,10,w=5,5`, …) and the
//! networks of Domke, Hoefler and Nagel's Table I as specs ([`table1_presets`]).
use super::{
    folded_butterfly, folded_shuffle_min, kary_ntree, kautz, param_err, random, torus_or_mesh,
    xgft, xgft_with_leaves, EndpointPlacement, RandomParams,
};
use crate::{Topology, TopologyError};

/// The networks of Domke, Hoefler and Nagel, "Deadlock-Free Oblivious Routing for Arbitrary
/// Topologies" (IPDPS 2011), Table I, as `(name, spec)` pairs for [`from_spec`], named
/// `table1-<family>-<endpoints>`.
///
/// The table gives a nominal endpoint count per row (64 … 4096) and "assumed the use of
/// 36-port switches". XGFT and Kautz rows therefore attach exactly that many endpoints to the
/// switches (`total_endpoints`, spread evenly over the XGFT level-0 switches / all Kautz
/// switches). The k-ary n-tree rows are the plain k-ary n-trees, whose endpoint count is `kⁿ`
/// and differs from the row's nominal count except for 16-ary 2-tree (256): 36, 100, 256,
/// 216, 1000, 2744 and 5832 endpoints.
pub fn table1_presets() -> Vec<(String, String)> {
    // (endpoints, XGFT parameters, Kautz (b, n), k-ary n-tree (k, n))
    type Row = (u32, &'static str, (u32, u32), (u32, u32));
    let rows: [Row; 7] = [
        (64, "h=1,m=6,w=3", (2, 2), (6, 2)),
        (128, "h=1,m=10,w=5", (2, 2), (10, 2)),
        (256, "h=1,m=16,w=8", (2, 3), (16, 2)),
        (512, "h=2,m=6,6,w=3,3", (3, 3), (6, 3)),
        (1024, "h=2,m=10,10,w=5,5", (3, 3), (10, 3)),
        (2048, "h=2,m=14,14,w=7,7", (4, 3), (14, 3)),
        (4096, "h=2,m=18,18,w=9,9", (6, 3), (18, 3)),
    ];
    let mut out = Vec::new();
    for (e, x, (b, n), (k, kn)) in rows {
        out.push((
            format!("table1-xgft-{e}"),
            format!("xgft:{x},total_endpoints={e}"),
        ));
        out.push((
            format!("table1-kautz-{e}"),
            format!("kautz:b={b},n={n},total_endpoints={e}"),
        ));
        out.push((
            format!("table1-kary-ntree-{e}"),
            format!("kary-ntree:k={k},n={kn}"),
        ));
    }
    out
}

/// Parsed `key=value[,value…]` parameters of a spec.
struct SpecParams<'a> {
    kind: &'a str,
    positional: Option<&'a str>,
    values: Vec<(&'a str, Vec<&'a str>)>,
    used: std::collections::HashSet<&'a str>,
}

impl<'a> SpecParams<'a> {
    fn parse(spec: &'a str) -> Result<Self, TopologyError> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut p = SpecParams {
            kind: kind.trim(),
            positional: None,
            values: Vec::new(),
            used: Default::default(),
        };
        for (i, tok) in rest.split(',').map(str::trim).enumerate() {
            if tok.is_empty() {
                if rest.trim().is_empty() {
                    break;
                }
                return Err(param_err(format!("{kind}: empty parameter in '{spec}'")));
            }
            match tok.split_once('=') {
                Some((k, v)) => {
                    let k = k.trim();
                    if p.values.iter().any(|(x, _)| *x == k) {
                        return Err(param_err(format!("{kind}: parameter '{k}' given twice")));
                    }
                    p.values.push((k, vec![v.trim()]));
                }
                None if i == 0 => p.positional = Some(tok),
                None => match p.values.last_mut() {
                    Some((_, v)) => v.push(tok),
                    None => return Err(param_err(format!("{kind}: unexpected '{tok}'"))),
                },
            }
        }
        Ok(p)
    }
    fn raw(&mut self, key: &'a str) -> Option<Vec<&'a str>> {
        let v = self.values.iter().find(|(k, _)| *k == key)?.1.clone();
        self.used.insert(key);
        Some(v)
    }
    fn list(&mut self, key: &'a str) -> Result<Option<Vec<u32>>, TopologyError> {
        let kind = self.kind;
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .iter()
                .map(|s| {
                    s.parse::<u32>().map_err(|_| {
                        param_err(format!(
                            "{kind}: parameter '{key}': '{s}' is not a non-negative integer"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }
    fn opt(&mut self, key: &'a str) -> Result<Option<u64>, TopologyError> {
        let kind = self.kind;
        match self.raw(key) {
            None => Ok(None),
            Some(v) if v.len() == 1 => v[0].parse::<u64>().map(Some).map_err(|_| {
                param_err(format!(
                    "{kind}: parameter '{key}': '{}' is not a non-negative integer",
                    v[0]
                ))
            }),
            Some(v) => Err(param_err(format!(
                "{kind}: parameter '{key}' takes one value, got {}",
                v.join(",")
            ))),
        }
    }
    fn opt32(&mut self, key: &'a str) -> Result<Option<u32>, TopologyError> {
        let kind = self.kind;
        self.opt(key)?
            .map(|x| {
                u32::try_from(x)
                    .map_err(|_| param_err(format!("{kind}: parameter '{key}' = {x} is too large")))
            })
            .transpose()
    }
    fn req(&mut self, key: &'a str) -> Result<u32, TopologyError> {
        let kind = self.kind;
        self.opt32(key)?
            .ok_or_else(|| param_err(format!("{kind}: missing parameter '{key}'")))
    }
    /// Fails on parameters nobody asked for.
    fn done(&self) -> Result<(), TopologyError> {
        if let Some((k, _)) = self.values.iter().find(|(k, _)| !self.used.contains(k)) {
            return Err(param_err(format!("{}: unknown parameter '{k}'", self.kind)));
        }
        Ok(())
    }
    fn no_positional(&self) -> Result<(), TopologyError> {
        match self.positional {
            Some(p) => Err(param_err(format!(
                "{}: unexpected '{p}' (parameters are key=value)",
                self.kind
            ))),
            None => Ok(()),
        }
    }
}

/// Builds a topology from a one-line spec. Accepted forms (every generator also takes an
/// optional `latency=L`, default 1):
///
/// | spec | generator |
/// |---|---|
/// | `kary-ntree:k=8,n=3` | [`kary_ntree`] |
/// | `xgft:h=2,m=10,10,w=5,5` | [`xgft`]; with `endpoints=E` (per level-0 switch) or `total_endpoints=N`: [`xgft_with_leaves`] |
/// | `kautz:b=3,n=3,endpoints=4` | [`kautz`](fn@kautz), `endpoints` per switch, or `total_endpoints=N` |
/// | `torus:6x6`, `mesh:4x4` (optional `,endpoints=E,trunk=T`, default 1 and 1) | [`torus_or_mesh`] |
/// | `random:switches=128,ports=32,endpoints=16,links=256,seed=1` (optional `multi_links=1`) | [`random`](fn@random) |
/// | `fly:k=4,n=3` | [`folded_butterfly`] |
/// | `min:endpoints=128,radix=16` | [`folded_shuffle_min`] (folded perfect-shuffle MIN) |
///
/// Errors ([`TopologyError::Parameters`]) name the bad or missing parameter.
pub fn from_spec(spec: &str) -> Result<Topology, TopologyError> {
    let mut p = SpecParams::parse(spec)?;
    let latency = p.opt32("latency")?.unwrap_or(1);
    let t = match p.kind {
        "kary-ntree" => {
            p.no_positional()?;
            let (k, n) = (p.req("k")?, p.req("n")?);
            p.done()?;
            kary_ntree(k, n, latency)
        }
        "xgft" => {
            p.no_positional()?;
            let h = p.req("h")?;
            let m = p
                .list("m")?
                .ok_or_else(|| param_err("xgft: missing parameter 'm'"))?;
            let w = p
                .list("w")?
                .ok_or_else(|| param_err("xgft: missing parameter 'w'"))?;
            let per = p.opt32("endpoints")?;
            let total = p.opt32("total_endpoints")?;
            p.done()?;
            match (per, total) {
                (None, None) => xgft(h, &m, &w, latency),
                (Some(e), None) => {
                    xgft_with_leaves(h, &m, &w, EndpointPlacement::PerSwitch(e), latency)
                }
                (None, Some(t)) => {
                    xgft_with_leaves(h, &m, &w, EndpointPlacement::Total(t), latency)
                }
                (Some(_), Some(_)) => Err(param_err(
                    "xgft: give either 'endpoints' or 'total_endpoints', not both",
                )),
            }
        }
        "kautz" => {
            p.no_positional()?;
            let (b, n) = (p.req("b")?, p.req("n")?);
            let per = p.opt32("endpoints")?;
            let total = p.opt32("total_endpoints")?;
            p.done()?;
            let place = match (per, total) {
                (Some(e), None) => EndpointPlacement::PerSwitch(e),
                (None, Some(t)) => EndpointPlacement::Total(t),
                (None, None) => EndpointPlacement::PerSwitch(1),
                (Some(_), Some(_)) => {
                    return Err(param_err(
                        "kautz: give either 'endpoints' or 'total_endpoints', not both",
                    ))
                }
            };
            kautz(b, n, place, latency)
        }
        kind @ ("torus" | "mesh") => {
            let dims = p.positional.ok_or_else(|| {
                param_err(format!("{kind}: missing the sides, e.g. '{kind}:4x4'"))
            })?;
            let sides = dims
                .split('x')
                .map(|s| {
                    s.trim().parse::<u32>().map_err(|_| {
                        param_err(format!("{kind}: side '{s}' in '{dims}' is not a number"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let e = p.opt32("endpoints")?.unwrap_or(1);
            let trunk = p.opt32("trunk")?.unwrap_or(1);
            p.done()?;
            torus_or_mesh(&sides, e, trunk, latency, kind == "torus")
        }
        "random" => {
            p.no_positional()?;
            let params = RandomParams {
                switches: p.req("switches")?,
                ports: p.req("ports")?,
                endpoints_per_switch: p.req("endpoints")?,
                links: p.req("links")?,
                seed: p.opt("seed")?.unwrap_or(0),
                multi_links: p.opt("multi_links")?.unwrap_or(0) != 0,
                latency,
            };
            p.done()?;
            random(&params)
        }
        "fly" => {
            p.no_positional()?;
            let (k, n) = (p.req("k")?, p.req("n")?);
            p.done()?;
            folded_butterfly(k, n, latency)
        }
        "min" => {
            p.no_positional()?;
            let (e, r) = (p.req("endpoints")?, p.req("radix")?);
            p.done()?;
            folded_shuffle_min(e, r, latency)
        }
        other => Err(param_err(format!(
            "unknown topology kind '{other}' in '{spec}'; expected one of kary-ntree, xgft, \
             kautz, torus, mesh, random, fly, min"
        ))),
    }?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Shape, SwitchId};

    #[test]
    fn table1_presets_build_with_the_documented_sizes() {
        let presets = table1_presets();
        assert_eq!(presets.len(), 21);
        let kary = [36, 100, 256, 216, 1000, 2744, 5832];
        let rows = [64, 128, 256, 512, 1024, 2048, 4096];
        for (i, chunk) in presets.chunks(3).enumerate() {
            for (name, spec) in chunk {
                let t = from_spec(spec).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(t.is_connected(), "{name}");
                let want = if name.contains("kary") {
                    kary[i]
                } else {
                    rows[i]
                };
                assert_eq!(t.num_endpoints(), want, "{name}");
                assert!(name.ends_with(&rows[i].to_string()));
                assert!((0..t.num_switches() as u32).all(|s| t.num_ports(SwitchId(s)) <= 36));
            }
        }
    }

    #[test]
    fn specs_are_parsed_with_clear_errors() {
        let t = from_spec("kary-ntree:k=2,n=3").unwrap();
        assert_eq!(t.shape(), &Shape::KaryNTree { k: 2, n: 3 });
        let t = from_spec("torus:6x6").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (36, 36));
        let t = from_spec("torus:4x4,endpoints=2,trunk=2").unwrap();
        assert_eq!((t.num_endpoints(), t.num_ports(SwitchId(0))), (32, 10));
        let t = from_spec("mesh:4x4").unwrap();
        assert!(matches!(t.shape(), Shape::Torus { wrap: false, .. }));
        let t = from_spec("random:switches=16,ports=8,endpoints=2,links=20,seed=1").unwrap();
        assert_eq!(t.num_endpoints(), 32);
        let t = from_spec("xgft:h=2,m=4,4,w=1,2").unwrap();
        assert_eq!(t.num_endpoints(), 16);
        let t = from_spec("xgft:h=2,m=10,10,w=5,5").unwrap();
        assert_eq!((t.num_endpoints(), t.num_switches()), (100, 100 + 50 + 25));
        let t = from_spec("kautz:b=3,n=3,endpoints=4").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (108, 432));
        assert_eq!(from_spec("fly:k=4,n=3").unwrap().num_endpoints(), 64);
        let t = from_spec("min:endpoints=128,radix=16").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (24, 128));
        assert_eq!(
            from_spec("kary-ntree:k=2,n=2,latency=3")
                .unwrap()
                .max_latency(),
            3
        );
        let e = |s: &str| from_spec(s).unwrap_err().to_string();
        assert!(e("kary-ntree:k=x,n=3").contains("parameter 'k': 'x'"));
        assert!(e("kary-ntree:n=3").contains("missing parameter 'k'"));
        assert!(e("torus:6x6,foo=1").contains("unknown parameter 'foo'"));
        assert!(e("torus:6xa").contains("side 'a'"));
        assert!(e("torus:endpoints=2").contains("missing the sides"));
        assert!(e("hypercube:n=3").contains("unknown topology kind 'hypercube'"));
        assert!(e("xgft:h=2,m=10,w=5,5").contains("2 values of m"));
        assert!(e("xgft:h=2,m=4,4,w=1,2,endpoints=1,total_endpoints=4").contains("not both"));
        assert!(e("kautz:b=3,n=3,endpoints=4,endpoints=5").contains("'endpoints' given twice"));
        assert!(e("random:switches=4,ports=8,endpoints=2,seed=1").contains("'links'"));
        assert!(e("fly:k=4,n=3,m=2").contains("unknown parameter 'm'"));
    }

    /// Specs far beyond the size limits are refused up front with the limit in the message,
    /// never an allocation failure or an arithmetic overflow.
    #[test]
    fn oversized_specs_are_refused() {
        let e = |s: &str| from_spec(s).unwrap_err().to_string();
        for (spec, want) in [
            ("torus:100000x100000", "torus: 10000000000 switches is more than the limit of 16777216 (2^24)"),
            ("mesh:65536x65536x65536", "mesh: 281474976710656 switches"),
            ("torus:4294967295x4294967295x4294967295", "more than 2^64 switches"),
            ("torus:4096x4097", "switches is more than the limit"),
            ("torus:4x4,endpoints=4294967295", "ports per switch is too many"),
            ("torus:4x4,trunk=4294967295", "ports per switch is too many"),
            ("torus:4096x4096,endpoints=2", "endpoints is more than the limit"),
            ("torus:2048x2048,trunk=10", "switch ports in total is more than the limit"),
            ("xgft:h=3,m=1000,1000,1000,w=1,1000,1000", "xgft:"),
            ("xgft:h=2,m=65535,65535,w=1,65535", "xgft:"),
            ("xgft:h=8,m=4294967295,4294967295,4294967295,4294967295,4294967295,4294967295,4294967295,4294967295,w=1,2,3,4,5,6,7,8", "xgft:"),
            ("xgft:h=1,m=4,w=2,total_endpoints=4294967295", "endpoints is more than the limit"),
            ("xgft:h=1,m=4,w=2,endpoints=4294967295", "xgft:"),
            ("kary-ntree:k=100000,n=3", "kary-ntree:"),
            ("kary-ntree:k=2,n=4294967295", "kary-ntree:"),
            ("kary-ntree:k=40000,n=1", "ports per switch is too many"),
            ("fly:k=1048576,n=1", "ports per switch is too many"),
            ("fly:k=64,n=6", "fly:"),
            ("min:endpoints=4294967295,radix=4", "min:"),
            ("min:endpoints=4294967296,radix=16", "min:"),
            ("min:endpoints=1024,radix=1048576", "ports per switch is too many"),
            ("kautz:b=4294967295,n=1", "kautz:"),
            ("kautz:b=4000,n=1", "kautz:"),
            ("kautz:b=2,n=3,total_endpoints=4294967295", "kautz:"),
            ("random:switches=4294967295,ports=8,endpoints=1,links=4294967294", "random:"),
            ("random:switches=4,ports=70000,endpoints=1,links=4", "out of range"),
            ("random:switches=1,ports=0,endpoints=0,links=0", "out of range"),
            ("random:switches=10,ports=4294967295,endpoints=4294967295,links=4294967295", "random:"),
        ] {
            let msg = e(spec);
            assert!(msg.contains(want), "{spec}: {msg}");
            assert!(!msg.starts_with("error"), "{spec}: {msg}");
        }
    }

    /// A large random network is built without rescanning all switches per link.
    #[test]
    fn large_random_network_builds_quickly() {
        let t0 = std::time::Instant::now();
        let t = from_spec("random:switches=20000,ports=8,endpoints=2,links=50000,seed=1").unwrap();
        assert_eq!(t.num_switches(), 20000);
        assert!(t.is_connected());
        assert!(t0.elapsed().as_secs() < 30, "{:?}", t0.elapsed());
    }
}
