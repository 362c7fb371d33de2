//! Every crate of the product denies `unwrap`, `expect` and `panic!`
//! outside tests through clippy (`cargo clippy -- -D warnings` in CI), so a
//! new crate root cannot forget it.

use std::path::PathBuf;

const DENY: &str = "#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]";

#[test]
fn every_crate_root_denies_unwrap_expect_and_panic() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut roots = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        for root in ["src/lib.rs", "src/main.rs"] {
            if dir.join(root).is_file() {
                roots.push(dir.join(root));
            }
        }
    }
    roots.sort();
    assert_eq!(roots.len(), 11, "{roots:?}");
    let missing: Vec<_> = roots
        .iter()
        .filter(|root| !std::fs::read_to_string(root).unwrap().lines().any(|l| l == DENY))
        .collect();
    assert!(missing.is_empty(), "crate roots without `{DENY}`: {missing:?}");
}
