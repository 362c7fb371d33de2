//! How many buckets, and what they cost.
//!
//! Elements are spread by a hash of the member modulo N, so a bucket's
//! count is Binomial(n, 1/N): mean n/N, standard deviation about
//! sqrt(n/N). N is the smallest count for which the fullest bucket stays
//! under the limit after the key grows by [`GROWTH`]: (1 + GROWTH) times
//! the mean plus [`SPREAD`] standard deviations of the grown mean.
//!
//! The memory of the buckets is the expectation of the model's price over
//! that distribution (allocator size classes make the price a step
//! function of the count, so the price of the mean bucket would be off by
//! up to a size class).

/// Growth the buckets absorb before the fullest one reaches the limit.
pub const GROWTH: f64 = 0.25;
/// Standard deviations of the bucket count kept under the limit.
pub const SPREAD: f64 = 3.0;

/// The largest mean bucket count whose grown, spread-out maximum stays
/// within `limit`.
pub fn mean_per_bucket(limit: u64) -> u64 {
    let fits = |m: u64| {
        let grown = m as f64 * (1.0 + GROWTH);
        grown + SPREAD * grown.sqrt() <= limit as f64
    };
    // Binary search: `fits` is monotone.
    let (mut lo, mut hi) = (0u64, limit);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo.max(1)
}

/// Buckets for `count` elements with at most `mean` per bucket on average
/// (at least 2: one bucket is no split).
pub fn buckets_for(count: u64, mean: u64) -> u64 {
    count.div_ceil(mean.max(1)).max(2)
}

/// The fullest bucket to expect now: mean plus [`SPREAD`] deviations.
pub fn expected_max(count: u64, buckets: u64) -> u64 {
    let p = 1.0 / buckets.max(1) as f64;
    let mean = count as f64 * p;
    let sd = (count as f64 * p * (1.0 - p)).sqrt();
    (mean + SPREAD * sd).ceil() as u64
}

/// Growth the buckets absorb before the fullest reaches `limit`, as a
/// fraction of today's size (0.25 = 25%).
pub fn headroom(count: u64, buckets: u64, limit: u64) -> f64 {
    let max = expected_max(count, buckets).max(1);
    limit as f64 / max as f64 - 1.0
}

/// Points at most priced per distribution.
const POINTS: u64 = 160;

/// `E[price(k)]` for k ~ Binomial(`count`, 1/`buckets`), over +-6
/// deviations around the mean. The weights come from the ratio of
/// consecutive probabilities, P(k+1)/P(k) = (n-k)/(k+1) * p/(1-p), so no
/// factorial is ever computed; wide distributions are priced at most at
/// [`POINTS`] points, each carrying the weight of its stretch of counts.
pub fn expected_price(count: u64, buckets: u64, mut price: impl FnMut(u64) -> u64) -> f64 {
    let p = 1.0 / buckets.max(1) as f64;
    if p >= 1.0 {
        return price(count) as f64;
    }
    let mean = count as f64 * p;
    let sd = (count as f64 * p * (1.0 - p)).sqrt();
    let lo = (mean - 6.0 * sd - 1.0).floor().max(0.0) as u64;
    let hi = ((mean + 6.0 * sd + 1.0).ceil() as u64).min(count);
    let mode = (mean.floor() as u64).clamp(lo, hi);
    let ratio = p / (1.0 - p);
    // Relative weights, 1 at the mode.
    let mut w = vec![0.0f64; (hi - lo + 1) as usize];
    w[(mode - lo) as usize] = 1.0;
    for k in mode..hi {
        let i = (k - lo) as usize;
        w[i + 1] = w[i] * (count - k) as f64 / (k + 1) as f64 * ratio;
    }
    for k in (lo + 1..=mode).rev() {
        let i = (k - lo) as usize;
        // P(k-1) = P(k) * k / (n-k+1) / ratio
        w[i - 1] = w[i] * k as f64 / (count - k + 1) as f64 / ratio;
    }
    let stride = ((hi - lo + 1).div_ceil(POINTS)).max(1) as usize;
    let (mut sum, mut total) = (0.0, 0.0);
    for (c, chunk) in w.chunks(stride).enumerate() {
        let weight: f64 = chunk.iter().sum();
        if weight == 0.0 {
            continue;
        }
        let first = lo + (c * stride) as u64;
        let centre: f64 = chunk.iter().enumerate().map(|(j, x)| x * j as f64).sum::<f64>() / weight;
        sum += weight * price(first + centre.round() as u64) as f64;
        total += weight;
    }
    if total == 0.0 {
        price(mean.round() as u64) as f64
    } else {
        sum / total
    }
}

/// Decimal digits of `n`.
pub fn digits(n: u64) -> u64 {
    n.max(1).ilog10() as u64 + 1
}

/// Buckets 0..`buckets` grouped by the digit count of their number, as
/// (digits, buckets with that many): key lengths differ by group.
pub fn digit_groups(buckets: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut start = 0u64;
    let mut d = 1u64;
    while start < buckets {
        let end = 10u64.saturating_pow(d as u32).min(buckets);
        out.push((d, end - start));
        start = end;
        d += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_means_leave_room_for_growth_and_spread() {
        // 1.25 * 358 = 447.5; + 3 * sqrt(447.5) = 511.0 <= 512.
        assert_eq!(mean_per_bucket(512), 358);
        assert_eq!(mean_per_bucket(128), 78);
        assert_eq!(mean_per_bucket(5000), 3833);
        assert_eq!(mean_per_bucket(1), 1);
        assert_eq!(buckets_for(20_000, 358), 56);
        assert_eq!(buckets_for(100, 358), 2);
    }

    #[test]
    fn digit_groups_cover_every_bucket() {
        assert_eq!(digit_groups(7), vec![(1, 7)]);
        assert_eq!(digit_groups(10), vec![(1, 10)]);
        assert_eq!(digit_groups(2000), vec![(1, 10), (2, 90), (3, 900), (4, 1000)]);
    }

    #[test]
    fn the_expected_price_weighs_the_size_classes() {
        // A step at 100: half the buckets of mean 100 land above it.
        let e = expected_price(100_000, 1000, |k| if k > 100 { 2 } else { 1 });
        assert!((1.40..1.50).contains(&e), "{e}");
        // A linear price: the expectation is the price of the mean.
        let e = expected_price(10, 10, |k| k * 7);
        assert!((e - 7.0).abs() < 1e-5, "{e}");
        let e = expected_price(1_000_000, 3, |k| k);
        assert!((e - 333_333.3).abs() < 2.0, "{e}");
    }
}
