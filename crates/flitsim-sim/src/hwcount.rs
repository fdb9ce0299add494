//! Hardware event counts of the simulation loop (`run.counters`): instructions, cycles and
//! cache misses from the processor's performance counters, page faults from the kernel.
//!
//! On Linux the counters are opened with `perf_event_open` (the `perf-event2` crate) for the
//! loop's thread, user space only (what `kernel.perf_event_paranoid` ≤ 2 allows an
//! unprivileged process), and inherited by the lane threads the run starts afterwards, so a
//! run on several threads counts all of them (a thread's counts join the total when it
//! exits). Virtual machines often expose no hardware counters; each counter that cannot be
//! opened is `null` and [`HwCounts::unavailable`] says why. Elsewhere nothing is counted.
//! Counting never changes a result: the counts go to `performance`, like the clocks.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the counters counted while the simulation loop ran (`performance.counters`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct HwCounts {
    /// Instructions retired in user space (`null` where the processor's counters are not
    /// available).
    pub instructions: Option<u64>,
    /// Processor cycles in user space.
    pub cycles: Option<u64>,
    /// Last-level cache misses (the kernel's generic `cache-misses` event).
    pub cache_misses: Option<u64>,
    /// Level-1 data cache read misses.
    pub l1d_read_misses: Option<u64>,
    /// Page faults (a software event of the kernel; counted even without hardware
    /// counters).
    pub page_faults: Option<u64>,
    /// Why some counters are `null` (`null` when every counter was read).
    pub unavailable: Option<String>,
}

/// The counters of one run, started by [`Counting::start`] and read by [`Counting::finish`].
pub struct Counting {
    #[cfg(target_os = "linux")]
    counters: Vec<(Kind, Option<perf_event::Counter>)>,
    /// Counters that could not be opened or read, with the reason.
    failures: Vec<(&'static str, String)>,
}

#[cfg(target_os = "linux")]
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Instructions,
    Cycles,
    CacheMisses,
    L1dReadMisses,
    PageFaults,
}

impl Counting {
    /// Opens and starts the counters for this thread and the threads it starts from now on.
    /// A counter that cannot be opened is left out (its count is `null`), never an error.
    pub fn start() -> Counting {
        #[cfg(target_os = "linux")]
        {
            use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
            use perf_event::Builder;
            let mut failures = Vec::new();
            let mut counters = Vec::new();
            let l1d_miss = Cache {
                which: CacheId::L1D,
                operation: CacheOp::READ,
                result: CacheResult::MISS,
            };
            let builders = [
                (Kind::Instructions, Builder::new(Hardware::INSTRUCTIONS)),
                (Kind::Cycles, Builder::new(Hardware::CPU_CYCLES)),
                (Kind::CacheMisses, Builder::new(Hardware::CACHE_MISSES)),
                (Kind::L1dReadMisses, Builder::new(l1d_miss)),
                (Kind::PageFaults, Builder::new(Software::PAGE_FAULTS)),
            ];
            for (kind, mut b) in builders {
                let opened = b.inherit(true).build().and_then(|mut c| {
                    c.enable()?;
                    Ok(c)
                });
                match opened {
                    Ok(c) => counters.push((kind, Some(c))),
                    Err(e) => {
                        failures.push((kind.name(), open_failure(&e)));
                        counters.push((kind, None));
                    }
                }
            }
            Counting { counters, failures }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let why = "performance counters are read on Linux only";
            Counting {
                failures: [
                    "instructions",
                    "cycles",
                    "cache_misses",
                    "l1d_read_misses",
                    "page_faults",
                ]
                .into_iter()
                .map(|name| (name, why.to_string()))
                .collect(),
            }
        }
    }

    /// Stops the counters and returns their counts. Call it after the threads started since
    /// [`Counting::start`] have ended, so that their counts are included.
    pub fn finish(self) -> HwCounts {
        #[allow(unused_mut)]
        let mut counts = HwCounts::default();
        #[allow(unused_mut)]
        let mut failures = self.failures;
        #[cfg(target_os = "linux")]
        for (kind, counter) in self.counters {
            let Some(mut c) = counter else { continue };
            let value = c.disable().and_then(|_| c.read_full()).map(|d| {
                // Shared with other events by the kernel: scale to the whole time.
                match (d.time_enabled(), d.time_running()) {
                    (Some(on), Some(ran)) if ran < on && !ran.is_zero() => {
                        (d.count() as f64 * on.as_secs_f64() / ran.as_secs_f64()).round() as u64
                    }
                    _ => d.count(),
                }
            });
            match value {
                Ok(v) => {
                    let slot = match kind {
                        Kind::Instructions => &mut counts.instructions,
                        Kind::Cycles => &mut counts.cycles,
                        Kind::CacheMisses => &mut counts.cache_misses,
                        Kind::L1dReadMisses => &mut counts.l1d_read_misses,
                        Kind::PageFaults => &mut counts.page_faults,
                    };
                    *slot = Some(v);
                }
                Err(e) => failures.push((kind.name(), e.to_string())),
            }
        }
        // One entry per reason, naming its counters (the hardware ones usually fail
        // together).
        let mut reasons: Vec<(String, &str)> = Vec::new();
        for (name, why) in &failures {
            match reasons.iter_mut().find(|(_, w)| w == why) {
                Some((names, _)) => {
                    names.push_str(", ");
                    names.push_str(name);
                }
                None => reasons.push((name.to_string(), why)),
            }
        }
        if !reasons.is_empty() {
            let text: Vec<String> = reasons.iter().map(|(n, w)| format!("{n}: {w}")).collect();
            counts.unavailable = Some(text.join("; "));
        }
        counts
    }
}

/// Why `perf_event_open` refused a counter, in a user's words.
#[cfg(target_os = "linux")]
fn open_failure(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            format!("the processor's counters are not available to this process ({e})")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "not permitted ({e}); kernel.perf_event_paranoid at most 2 lets a process count \
             its own user-space events"
        ),
        _ => format!("perf_event_open failed: {e}"),
    }
}

#[cfg(target_os = "linux")]
impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Instructions => "instructions",
            Kind::Cycles => "cycles",
            Kind::CacheMisses => "cache_misses",
            Kind::L1dReadMisses => "l1d_read_misses",
            Kind::PageFaults => "page_faults",
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Touches `pages` fresh pages of 4 KiB (each a page fault) and returns a sum of them,
    /// so the work is not optimised away. The pages are mapped here, not taken from the
    /// allocator: after other tests in this process have freed large blocks, glibc serves a
    /// block this size from its heap, whose pages may have been touched already.
    fn touch(pages: usize) -> u64 {
        let len = pages * 4096;
        // SAFETY: a private anonymous mapping of `len` bytes, used only as that slice and
        // unmapped before returning.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED, "mmap of {len} bytes");
            // Small pages only, whatever the kernel's transparent huge page setting.
            libc::madvise(p, len, libc::MADV_NOHUGEPAGE);
            let v = std::slice::from_raw_parts_mut(p as *mut u8, len);
            for i in (0..len).step_by(4096) {
                v[i] = 1;
            }
            let sum = std::hint::black_box(&v)
                .iter()
                .step_by(4096)
                .map(|&x| x as u64)
                .sum();
            libc::munmap(p, len);
            sum
        }
    }

    /// Page faults are a software event the kernel counts on any Linux machine: touching
    /// N fresh pages, in this thread and in a thread started after the counters, counts at
    /// least N faults each.
    #[test]
    fn counts_page_faults_of_this_thread_and_of_threads_started_later() {
        let mut alone = Counting::start();
        // The counters of a thread that cannot open them are left out, not an error: skip
        // where even software events are refused (kernel.perf_event_paranoid = 3).
        if alone.counters.iter().all(|(_, c)| c.is_none()) {
            eprintln!("perf_event_open refused here: {:?}", alone.failures);
            return;
        }
        assert_eq!(touch(2000), 2000);
        let own = std::mem::replace(&mut alone, Counting::start()).finish();
        drop(alone.finish());
        let own_faults = own.page_faults.expect("page faults counted");
        assert!(
            own_faults >= 2000,
            "{own_faults} page faults for 2000 pages"
        );

        let both = Counting::start();
        let spawned = std::thread::spawn(|| touch(3000)).join().unwrap();
        assert_eq!(spawned, 3000);
        let counts = both.finish();
        let faults = counts.page_faults.expect("page faults counted");
        assert!(
            faults >= 3000,
            "{faults} page faults counted for 3000 pages touched by a thread started later"
        );
        // Hardware counters are either counted or said to be missing.
        for (name, v) in [
            ("instructions", counts.instructions),
            ("cycles", counts.cycles),
            ("cache_misses", counts.cache_misses),
            ("l1d_read_misses", counts.l1d_read_misses),
        ] {
            match v {
                Some(n) => assert!(name == "cache_misses" || name == "l1d_read_misses" || n > 0),
                None => assert!(
                    counts.unavailable.as_deref().unwrap_or("").contains(name),
                    "{name} missing without a reason: {:?}",
                    counts.unavailable
                ),
            }
        }
    }

    /// Where the processor's counters are available, a loop of known length retires at
    /// least as many instructions as it has iterations.
    #[test]
    fn counts_instructions_where_the_processor_allows() {
        let c = Counting::start();
        let mut x = 0u64;
        for i in 0..10_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let counts = c.finish();
        std::hint::black_box(x);
        match counts.instructions {
            Some(n) => assert!(n >= 10_000_000, "{n} instructions for 10^7 iterations"),
            None => eprintln!("no instruction counter here: {:?}", counts.unavailable),
        }
    }
}
