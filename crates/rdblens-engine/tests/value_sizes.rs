//! Per-type value-size percentiles agree with the exact percentiles of
//! every key's own figures (all keys are in a long enough top list), on
//! dumps of several servers, and do not depend on the thread count.

use std::path::PathBuf;

use rdblens_engine::*;
use rdblens_summary::acc::sizes::Distribution;
use rdblens_summary::*;

fn analyze(f: &str, threads: usize) -> Summary {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rdb")
        .join(f);
    let data = std::fs::read(&path).unwrap();
    let opts = Options {
        threads,
        top: 100_000,
        ..Options::default()
    };
    analyze_bytes(&data, f, &opts).unwrap()
}

/// The `ceil(p% * n)`-th smallest value.
fn exact(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

fn check(name: &str, d: &Distribution, mut values: Vec<u64>) {
    values.sort_unstable();
    assert_eq!(d.count, values.len() as u64, "{name}");
    for p in [50.0, 90.0, 99.0, 100.0] {
        let (got, want) = (d.percentile(p).unwrap(), exact(&values, p));
        // At most 1/64 below, never above; exact below 128 and at p100.
        assert!(
            got <= want && (want - got) * 64 <= want,
            "{name} p{p}: {got} vs {want}"
        );
        if want < 128 || p == 100.0 {
            assert_eq!(got, want, "{name} p{p}");
        }
    }
}

#[test]
fn percentiles_match_every_keys_figures() {
    for file in [
        "redis-7.4.5/all-types.rdb",
        "valkey-9.1.2/all-types.rdb",
        "redis-5.0.14/lfu.rdb",
    ] {
        let s = analyze(file, 1);
        let sizes: Vec<(String, _)> = s
            .keys
            .value_sizes
            .iter()
            .map(|(t, v)| (t.to_string(), v.clone()))
            .collect();
        assert!(sizes.len() >= 5, "{file}: {} types", sizes.len());
        for (t, v) in &sizes {
            let keys = &s.keys.top.per_type.get(t.as_str()).expect("listed type")[0].keys; // ok: integration test
            check(
                &format!("{file} {t} memory"),
                &v.memory,
                keys.iter().map(|k| k.memory).collect(),
            );
            check(
                &format!("{file} {t} length"),
                &v.length,
                keys.iter().map(|k| k.elements).collect(),
            );
            if t != "string" {
                check(
                    &format!("{file} {t} largest element"),
                    &v.largest_element,
                    keys.iter().map(|k| k.max_element_len).collect(),
                );
            }
        }
        let two = analyze(file, 2);
        assert!(
            two.keys.value_sizes == s.keys.value_sizes,
            "{file}: 1 vs 2 threads"
        );
    }
}
