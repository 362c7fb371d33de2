#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../alloc_limit.rs"]
mod alloc_limit;
#[path = "../../crates/rdblens/tests/exercise/mod.rs"]
mod exercise;

fuzz_target!(|data: &[u8]| exercise::zipmap(data));
