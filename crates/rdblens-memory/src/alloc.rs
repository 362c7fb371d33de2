//! jemalloc size classes: what `zmalloc_size()` reports for an n-byte request.
//!
//! Redis and Valkey bundle jemalloc built with `--with-lg-quantum=3`, which
//! gives 8-byte steps up to 64 bytes. Distribution packages that link the
//! system libjemalloc (Debian's `redis-server`) use the stock 16-byte
//! quantum, which has no 24, 40 or 56 classes. Past 64 bytes both builds
//! share the same classes: 16-byte steps to 128, then four classes per
//! doubling (memory-model.md §2; checked against `nallocx()` of both builds).

/// Usable size of an `n`-byte request. `quantum` is 8 (bundled jemalloc) or
/// 16 (stock jemalloc); any other value is treated as 8.
pub fn usable_size(n: u64, quantum: u64) -> u64 {
    if n <= 8 {
        return 8;
    }
    if quantum != 16 && n <= 64 {
        return round_up(n, 8);
    }
    if n <= 128 {
        return round_up(n, 16);
    }
    // 2^(lg-1) < n <= 2^lg; the group below 2^lg has four classes, each a
    // quarter of 2^(lg-1) apart.
    let lg = 64 - (n - 1).leading_zeros();
    round_up(n, 1u64 << (lg - 3))
}

/// Rounds up to a multiple of the power of two `step`, saturating instead of
/// wrapping for absurd inputs (lengths come from untrusted files).
fn round_up(n: u64, step: u64) -> u64 {
    n.saturating_add(step - 1) & !(step - 1)
}

#[cfg(test)]
mod tests {
    use super::usable_size;

    /// The classes up to 16 KiB as dumped with `nallocx()` from Redis' bundled
    /// `libjemalloc.a` (memory-model.md §2).
    const BUNDLED: &[u64] = &[
        8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768,
        896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288,
        14336, 16384,
    ];

    fn class_of(n: u64, classes: &[u64]) -> u64 {
        classes.iter().copied().find(|&c| c >= n).unwrap_or(0)
    }

    #[test]
    fn bundled_quantum_8_matches_the_class_table() {
        for n in 0..=16384 {
            assert_eq!(usable_size(n, 8), class_of(n, BUNDLED), "n={n}");
        }
    }

    #[test]
    fn stock_quantum_16_has_no_24_40_56() {
        let stock: Vec<u64> = [8u64, 16, 32, 48, 64]
            .into_iter()
            .chain(BUNDLED.iter().copied().filter(|&c| c > 64))
            .collect();
        for n in 0..=16384 {
            assert_eq!(usable_size(n, 16), class_of(n, &stock), "n={n}");
        }
        assert_eq!(usable_size(17, 16), 32);
        assert_eq!(usable_size(40, 16), 48);
        assert_eq!(usable_size(40, 8), 40);
    }

    #[test]
    fn large_classes_are_four_per_doubling() {
        for (n, want) in [
            (16385, 20480),
            (20481, 24576),
            (32768, 32768),
            (32769, 40960),
            (65537, 81920),
            (1_048_577, 1_310_720),
        ] {
            assert_eq!(usable_size(n, 8), want, "n={n}");
            assert_eq!(usable_size(n, 16), want, "n={n}");
        }
        assert_eq!(usable_size(u64::MAX, 8), !((1u64 << 61) - 1));
    }
}
