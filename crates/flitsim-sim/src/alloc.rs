//! An allocator for programs that run the engine on large fabrics: the system allocator,
//! asking Linux to back blocks of [`LARGE`] bytes or more with transparent huge pages.
//!
//! The engine's per-port and per-VL vectors of a 65 536-endpoint fabric take hundreds of
//! megabytes, and the hot loop touches them at random: with 4 KiB pages nearly every such
//! touch also misses the TLB, and the page walk's own loads miss the caches. 2 MiB pages
//! cut the 16-ary 4-tree's cost per flit-hop by 6–24 % and the 256×256 torus's by 0–10 %
//! (`docs/performance.md`, "Session 28"), and do nothing measurable to fabrics that fit the
//! caches.
//!
//! The advice (`madvise(MADV_HUGEPAGE)`) is given when the block is allocated, before its
//! pages are first touched, so the kernel backs them with huge pages as they fault in; it is
//! the per-block form of glibc's `glibc.malloc.hugetlb=1` tunable. It does nothing when the
//! kernel's transparent huge pages are `never`, and nothing at all on other systems. A
//! program opts in with
//!
//! ```
//! #[global_allocator]
//! static ALLOC: flitsim_sim::alloc::HugePages = flitsim_sim::alloc::HugePages;
//! # fn main() {}
//! ```
//!
//! (the Python module, the `run` and `bench` examples do).

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large are advised (4 MiB: each holds at least one whole 2 MiB page).
pub const LARGE: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and the usual arm64 configuration.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, with large blocks advised for transparent huge pages.
pub struct HugePages;

// SAFETY: every call is forwarded to `System` with its arguments unchanged; the advice only
// changes how the kernel backs the block's pages, never their contents or the block's bounds.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        advise(p, new_size);
        p
    }
}

/// Advises the whole huge pages inside the block at `p` of `len` bytes, if it is large.
fn advise(p: *mut u8, len: usize) {
    if p.is_null() || len < LARGE {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `[start, end)` lies inside the block just allocated, and is page-aligned;
    // `MADV_HUGEPAGE` changes no data. A failure (THP not built in) is ignored: the pages
    // stay small, as without the advice.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advised range is inside the block and whole huge pages.
    #[test]
    fn blocks_keep_their_contents() {
        let a = HugePages;
        for &size in &[64usize, LARGE - 1, LARGE, 3 * LARGE + 12345] {
            let l = Layout::from_size_align(size, 64).unwrap();
            unsafe {
                let z = a.alloc_zeroed(l);
                assert!(!z.is_null());
                let s = std::slice::from_raw_parts_mut(z, size);
                assert!(s.iter().all(|&b| b == 0), "zeroed block of {size}");
                for (i, b) in s.iter_mut().enumerate() {
                    *b = (i % 251) as u8;
                }
                // Grown across the threshold (or within it): the contents move with it.
                let g = a.realloc(z, l, 2 * size + LARGE);
                assert!(!g.is_null());
                let s = std::slice::from_raw_parts(g, size);
                assert!(s.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
                a.dealloc(g, Layout::from_size_align(2 * size + LARGE, 64).unwrap());
            }
        }
    }

    /// On Linux with transparent huge pages available (`madvise` or `always`), a large block's
    /// mapping carries the advice (`hg` in its `VmFlags`).
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_advised() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !mode.is_ok_and(|m| m.contains("[madvise]") || m.contains("[always]")) {
            return; // nothing to check on this kernel
        }
        let a = HugePages;
        let size = 4 * LARGE;
        let l = Layout::from_size_align(size, 4096).unwrap();
        let p = unsafe { a.alloc(l) };
        assert!(!p.is_null());
        let inside = p as usize + size / 2;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut flags = None;
        let mut current = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        current = lo <= inside && inside < hi;
                        continue;
                    }
                }
            }
            if current {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    flags = Some(f.to_string());
                }
            }
        }
        unsafe { a.dealloc(p, l) };
        let flags = flags.expect("the block's mapping is in /proc/self/smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "VmFlags: {flags}"
        );
    }
}
