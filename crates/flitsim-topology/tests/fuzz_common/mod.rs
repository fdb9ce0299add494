//! Shared by the parser fuzz targets of `flitsim-topology` and `flitsim-manager` (the latter
//! includes this file with `#[path]`): the case count, structured mutations of valid inputs
//! and the checks every target makes.
//!
//! cargo-fuzz needs a nightly toolchain, so the targets are proptest properties over
//! arbitrary bytes *and* over valid inputs mutated the way real damage and fuzzers mutate
//! them: truncation at any byte, flipped/inserted/deleted bytes, deleted, duplicated, swapped
//! and inserted lines, and numbers replaced by boundary values (0, −1, 2³², 2⁶⁴, 10²⁶, …).
#![allow(dead_code)]
use proptest::prelude::*;
use proptest::sample::Index;
use std::time::{Duration, Instant};

/// Cases per fuzz target: `FLITSIM_FUZZ_CASES`, else `default` (the CI budget).
pub fn cases(default: u32) -> u32 {
    std::env::var("FLITSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// proptest configuration of a fuzz target: [`cases`], no shrinking time limit beyond
/// proptest's defaults, and no regression files (failures are printed; a found input
/// becomes a named regression test).
pub fn config(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default),
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

/// Boundary values that replace numbers in a mutated input.
pub const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "15",
    "16",
    "255",
    "256",
    "65534",
    "65535",
    "65536",
    "49151",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x0",
    "0xffffffffffffffff",
    "-0",
    "1e300",
    "NaN",
    "",
];

/// One structured mutation; positions are [`Index`]es into whatever they select from.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Cut the input at a byte.
    Truncate(Index),
    /// Flip one bit of a byte.
    FlipBit(Index, u8),
    /// Insert a byte.
    InsertByte(Index, u8),
    /// Delete a byte.
    DeleteByte(Index),
    /// Delete a run of up to 64 bytes.
    DeleteRange(Index, u8),
    /// Delete a line.
    DeleteLine(Index),
    /// Copy a line to another place.
    DuplicateLine(Index, Index),
    /// Swap two lines.
    SwapLines(Index, Index),
    /// Insert one of the target's interesting lines.
    InsertLine(Index, Index),
    /// Replace a run of digits by a boundary value.
    ReplaceNumber(Index, Index),
}

/// Any [`Mutation`], line and number mutations weighted up (they reach deeper).
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        2 => (any::<Index>(), prop::sample::select(&b" \t\n\"[]()#=-x0123456789abcdefSCH,:{}"[..]))
            .prop_map(|(i, b)| Mutation::InsertByte(i, b)),
        1 => any::<Index>().prop_map(Mutation::DeleteByte),
        1 => (any::<Index>(), 1u8..64).prop_map(|(i, n)| Mutation::DeleteRange(i, n)),
        2 => any::<Index>().prop_map(Mutation::DeleteLine),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::DuplicateLine(a, b)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::InsertLine(a, b)),
        4 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::ReplaceNumber(a, b)),
    ]
}

fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// Applies `m` to `bytes`; `extra` are the target's interesting lines for
/// [`Mutation::InsertLine`].
pub fn apply(bytes: &mut Vec<u8>, m: &Mutation, extra: &[&str]) {
    let n = bytes.len();
    match m {
        Mutation::Truncate(i) => bytes.truncate(i.index(n + 1)),
        Mutation::FlipBit(i, b) if n > 0 => bytes[i.index(n)] ^= 1 << b,
        Mutation::InsertByte(i, b) => bytes.insert(i.index(n + 1), *b),
        Mutation::DeleteByte(i) if n > 0 => {
            bytes.remove(i.index(n));
        }
        Mutation::DeleteRange(i, k) if n > 0 => {
            let a = i.index(n);
            let b = (a + *k as usize).min(n);
            bytes.drain(a..b);
        }
        Mutation::DeleteLine(i) => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                ls.remove(i.index(ls.len()));
            }
            *bytes = ls.concat();
        }
        Mutation::DuplicateLine(a, b) => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                let l = ls[a.index(ls.len())].clone();
                ls.insert(b.index(ls.len() + 1), l);
            }
            *bytes = ls.concat();
        }
        Mutation::SwapLines(a, b) => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                let (x, y) = (a.index(ls.len()), b.index(ls.len()));
                ls.swap(x, y);
            }
            *bytes = ls.concat();
        }
        Mutation::InsertLine(a, b) if !extra.is_empty() => {
            let mut ls = lines(bytes);
            let l = format!("{}\n", extra[b.index(extra.len())]);
            ls.insert(a.index(ls.len() + 1), l.into_bytes());
            *bytes = ls.concat();
        }
        Mutation::ReplaceNumber(a, b) => {
            let mut runs = Vec::new();
            let mut i = 0;
            while i < n {
                if bytes[i].is_ascii_digit() {
                    let s = i;
                    while i < n && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                    runs.push((s, i));
                } else {
                    i += 1;
                }
            }
            if !runs.is_empty() {
                let (s, e) = runs[a.index(runs.len())];
                let v = NUMBERS[b.index(NUMBERS.len())];
                bytes.splice(s..e, v.bytes());
            }
        }
        _ => {}
    }
}

/// A seed from `seeds` with 1..=`max` mutations applied.
pub fn mutated(
    seeds: Vec<Vec<u8>>,
    extra: &'static [&'static str],
    max: usize,
) -> impl Strategy<Value = Vec<u8>> {
    let n = seeds.len();
    (0..n, prop::collection::vec(mutation(), 1..=max)).prop_map(move |(s, ms)| {
        let mut b = seeds[s].clone();
        for m in &ms {
            apply(&mut b, m, extra);
        }
        b
    })
}

/// Text assembled from tokens of a grammar (reaches more of a parser than random bytes).
pub fn token_soup(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(tokens), 0..max).prop_map(|v| v.concat())
}

/// Runs `f`, failing if it takes longer than `limit` (a hang shows up as a slow case).
pub fn timed<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let r = f();
    let dt = t0.elapsed();
    assert!(dt <= limit, "{what} took {dt:?} (limit {limit:?})");
    r
}

/// True when `msg` names a line: `line N` with N ≥ 1.
pub fn names_a_line(msg: &str) -> bool {
    msg.match_indices("line ").any(|(i, _)| {
        let rest = &msg[i + 5..];
        let d: String = rest.chars().take_while(char::is_ascii_digit).collect();
        d.parse::<u64>().is_ok_and(|x| x >= 1)
    })
}
