//! Per-frame video size traces (`process = { kind = "video", trace = "…" }`).
//!
//! The text format of the public video-trace libraries: one frame a line,
//! `frame_number type time size` — `type` is `I`, `P` or `B`, `time` is ignored (frames leave
//! every `frame_period` of the configuration), `size` is in bytes; further columns are
//! ignored, and blank lines and lines starting with `#` are skipped.

/// The frame sizes of a trace in flits of `flit_bytes` bytes (⌈size / flit_bytes⌉, at least
/// 1), in trace order. Errors name `origin` and the line.
pub fn read_video_trace(text: &str, origin: &str, flit_bytes: u32) -> Result<Vec<u32>, String> {
    let fb = u64::from(flit_bytes.max(1));
    let mut frames = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = |m: String| format!("{origin}: line {}: {m}", i + 1);
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 {
            return Err(bad(format!(
                "{l:?}: expected `frame_number type time size`"
            )));
        }
        f[0].parse::<u64>()
            .map_err(|_| bad(format!("frame number {:?} is not a whole number", f[0])))?;
        if !matches!(f[1], "I" | "P" | "B") {
            return Err(bad(format!("frame type {:?}: expected I, P or B", f[1])));
        }
        if !f[2].parse::<f64>().is_ok_and(|t| t.is_finite() && t >= 0.0) {
            return Err(bad(format!("time {:?} is not a non-negative number", f[2])));
        }
        let bytes: u64 = f[3]
            .parse()
            .map_err(|_| bad(format!("size {:?} is not a whole number of bytes", f[3])))?;
        let flits = bytes.div_ceil(fb).max(1);
        let flits = u32::try_from(flits)
            .map_err(|_| bad(format!("frame of {bytes} bytes is too large")))?;
        frames.push(flits);
    }
    if frames.is_empty() {
        return Err(format!("{origin}: the trace has no frames"));
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::read_video_trace;

    #[test]
    fn frames_are_rounded_up_to_flits_and_comments_skipped() {
        let t = "# frame type time size\n\n0 I 0 1000\n1 B 40 64\n2 P 80.0 65 extra\n3 B 120 0\n";
        assert_eq!(read_video_trace(t, "t.txt", 64).unwrap(), vec![16, 1, 2, 1]);
    }

    #[test]
    fn errors_name_file_and_line() {
        for (t, want) in [
            ("0 I 0 100\n1 X 40 100\n", "t.txt: line 2: frame type \"X\""),
            ("# c\n0 I 0\n", "t.txt: line 2:"),
            ("0 I 0 1e3\n", "t.txt: line 1: size \"1e3\""),
            ("a I 0 100\n", "t.txt: line 1: frame number"),
            ("0 I -1 100\n", "t.txt: line 1: time"),
            ("# only comments\n", "t.txt: the trace has no frames"),
        ] {
            let e = read_video_trace(t, "t.txt", 64).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
