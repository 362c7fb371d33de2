//! A dump that shrinks while it is mapped (another process truncates it or
//! rewrites it in place) makes the next read of a page past its new end
//! raise SIGBUS, which would kill the process with no message. The handler
//! installed here names the file whose map was hit and exits with code 3.
//!
//! What it protects: truncation of a plain dump while it is read (whatever
//! the parser was doing). What it does not: a file rewritten in place
//! without shrinking (the bytes change under the parser; its bounds checks
//! still hold, and the checksum at the end says the file is damaged).
//! Compressed dumps and standard input are read from a private temporary
//! copy, which no other process can change.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// One watched map: its address range and the message to print.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    message: AtomicPtr<u8>,
    message_len: AtomicUsize,
}

const SLOTS: usize = 64;

#[allow(clippy::declare_interior_mutable_const)] // ok: the array initializer only
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    message: AtomicPtr::new(std::ptr::null_mut()),
    message_len: AtomicUsize::new(0),
};

static WATCHED: [Slot; SLOTS] = [EMPTY; SLOTS];
static NEXT: AtomicUsize = AtomicUsize::new(0);

const UNKNOWN: &[u8] =
    b"rdblens: bus error (SIGBUS): an input file may have shrunk while it was being read\n";

/// The message printed when the map of `name` is hit.
pub fn message(name: &str) -> String {
    format!(
        "rdblens: {name}: the file shrank while it was being read (truncated or rewritten by another process); \
         the report would be wrong: stopping\n"
    )
}

/// Watches the map `bytes` of the file `name`. A slot whose range overlaps
/// is replaced (that map is gone: its address was reused).
pub fn watch(bytes: &[u8], name: &str) {
    if bytes.is_empty() {
        return;
    }
    let (start, end) = (bytes.as_ptr() as usize, bytes.as_ptr() as usize + bytes.len());
    let slot = WATCHED
        .iter()
        .find(|s| s.start.load(Ordering::Acquire) < end && start < s.end.load(Ordering::Acquire))
        .unwrap_or_else(|| &WATCHED[NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS]);
    // Leaked on purpose: the handler may read it at any time, and there
    // are as many as input files.
    let text: &'static [u8] = Box::leak(message(name).into_boxed_str()).as_bytes();
    slot.end.store(0, Ordering::Release);
    slot.message_len.store(text.len(), Ordering::Release);
    slot.message.store(text.as_ptr().cast_mut(), Ordering::Release);
    slot.start.store(start, Ordering::Release);
    slot.end.store(end, Ordering::Release);
}

/// Installs the SIGBUS handler (once, at start-up).
#[cfg(unix)]
pub fn install() {
    // SAFETY: `on_sigbus` only loads atomics and calls write(2) and
    // _exit(2), which are async-signal-safe; the sigaction struct is fully
    // initialised (zeroed, then the handler, flags and an empty mask).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
pub fn install() {}

#[cfg(unix)]
extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers;
    // the messages are leaked, so never freed while a slot points at them.
    unsafe {
        let addr = (*info).si_addr() as usize;
        let hit = WATCHED
            .iter()
            .find(|s| s.start.load(Ordering::Acquire) <= addr && addr < s.end.load(Ordering::Acquire));
        let (ptr, len) = match hit {
            Some(s) => (
                s.message.load(Ordering::Acquire) as *const u8,
                s.message_len.load(Ordering::Acquire),
            ),
            None => (UNKNOWN.as_ptr(), UNKNOWN.len()),
        };
        let (ptr, len) = if ptr.is_null() {
            (UNKNOWN.as_ptr(), UNKNOWN.len())
        } else {
            (ptr, len)
        };
        libc::write(2, ptr.cast(), len);
        libc::_exit(3);
    }
}
