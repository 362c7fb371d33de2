//! Every fuzz target's global allocator: the system one, except that a
//! single request above `LIMIT` aborts, so libFuzzer saves the input. Inputs
//! are at most 16 KiB: nothing they hold justifies such an allocation (LZF
//! expands at most 88 times), only a length trusted before it was checked.
//! Works with any sanitizer, including `-s none`.

use std::alloc::{GlobalAlloc, Layout, System};

const LIMIT: usize = 64 << 20;

pub struct Limit;

unsafe impl GlobalAlloc for Limit {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn check(size: usize) {
    if size > LIMIT {
        // No formatting here: it could allocate.
        const MSG: &[u8] = b"alloc_limit: a single allocation above 64 MiB\n";
        use std::io::Write;
        let _ = std::io::stderr().write_all(MSG);
        std::process::abort();
    }
}

#[global_allocator]
static GLOBAL: Limit = Limit;
