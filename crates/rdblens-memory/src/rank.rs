//! A sorted set's listpack bytes along its order, for plans that cut it
//! into score ranges. A score's text decides its listpack entry (t_zset.c
//! `zzlInsertAt`: an integer, or `d2string()`'s text), and that length
//! follows the score: `%.17g` of a four-decimal score near 150,000 drops
//! its trailing zeros far more often than near 900,000, where a double's
//! step is coarser than the 17th digit. Ranges of the ordered set therefore
//! differ by up to 2 bytes a member, which moves buckets of ~100 members
//! across allocator size classes; a share of the whole set's bytes prices
//! every range alike (2.5 % high on the leaderboards checked).
//!
//! The walk sees a skiplist's members in its order (the writer saves them
//! from the greatest to the smallest, rdb.c `rdbSaveObject`), so the bytes
//! are summed in slices of consecutive members: at most [`MAX_SLICES`],
//! two neighbours merged whenever the slices run out, so each covers a
//! power of two of members. A set whose scores arrive out of order keeps
//! no profile (its ranges are priced by shares).

use serde::{Deserialize, Serialize};

/// Slices kept at most while summing (half of them after a merge).
const MAX_SLICES: usize = 64;

/// The listpack entry bytes of consecutive members, lowest scores first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankProfile {
    /// (members, bytes of their member and score entries) per slice.
    pub slices: Vec<[u64; 2]>,
}

impl RankProfile {
    /// No slices: the ranges are priced by shares.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// Members the profile covers.
    pub fn members(&self) -> u64 {
        self.slices.iter().map(|s| s[0]).sum()
    }

    /// Entry bytes of the members before rank `rank` (0 = the lowest
    /// score), linear inside a slice.
    fn bytes_before(&self, rank: u64) -> f64 {
        let mut seen = 0u64;
        let mut bytes = 0u64;
        for &[members, slice_bytes] in &self.slices {
            if rank < seen + members {
                let inside = (rank - seen) as f64 / members as f64;
                return bytes as f64 + inside * slice_bytes as f64;
            }
            seen += members;
            bytes += slice_bytes;
        }
        bytes as f64
    }

    /// Entry bytes of the `count` members from rank `start`; `None` when
    /// the profile is empty or does not cover that range.
    pub fn range_bytes(&self, start: u64, count: u64) -> Option<u64> {
        let end = start.checked_add(count)?;
        if self.slices.is_empty() || end > self.members() {
            return None;
        }
        Some((self.bytes_before(end) - self.bytes_before(start)).round() as u64)
    }
}

/// Sums a sorted set's entry bytes in slices as its members arrive.
#[derive(Clone, Debug)]
pub(crate) struct RankProfiler {
    /// Members in each closed slice.
    width: u64,
    /// Bytes of the closed slices, in arrival order.
    closed: Vec<u64>,
    /// Members and bytes of the open slice.
    open: (u64, u64),
    last_score: Option<f64>,
    /// The order the scores arrive in, once two differ.
    descending: Option<bool>,
    ordered: bool,
}

impl RankProfiler {
    pub fn new() -> Self {
        RankProfiler {
            width: 1,
            closed: Vec::new(),
            open: (0, 0),
            last_score: None,
            descending: None,
            ordered: true,
        }
    }

    /// A member of `score` whose member and score entries take `bytes`.
    pub fn push(&mut self, score: f64, bytes: u64) {
        if !self.ordered {
            return;
        }
        if let Some(last) = self.last_score {
            if score != last {
                let down = score < last;
                match self.descending {
                    None => self.descending = Some(down),
                    Some(d) if d != down => {
                        self.ordered = false;
                        return;
                    }
                    Some(_) => {}
                }
            }
        }
        self.last_score = Some(score);
        self.open.0 += 1;
        self.open.1 += bytes;
        if self.open.0 == self.width {
            self.closed.push(self.open.1);
            self.open = (0, 0);
            if self.closed.len() == MAX_SLICES {
                self.closed = self.closed.chunks(2).map(|p| p.iter().sum()).collect();
                self.width *= 2;
            }
        }
    }

    /// The profile, lowest scores first; empty when the scores came out
    /// of order.
    pub fn finish(self) -> RankProfile {
        if !self.ordered {
            return RankProfile::default();
        }
        let mut slices: Vec<[u64; 2]> = self.closed.iter().map(|&b| [self.width, b]).collect();
        if self.open.0 > 0 {
            slices.push([self.open.0, self.open.1]);
        }
        if self.descending == Some(true) {
            slices.reverse();
        }
        RankProfile { slices }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_merge_and_come_out_lowest_first() {
        let mut p = RankProfiler::new();
        // 200 members arriving from the highest score down; the 100
        // highest take 30 bytes each, the others 20.
        for i in 0..200u64 {
            p.push(1000.0 - i as f64, if i < 100 { 30 } else { 20 });
        }
        let profile = p.finish();
        assert_eq!(profile.members(), 200);
        // 64 slices of 1 merged to 32 of 2, ... : slices of 4 members
        // (50 of them), the lowest first.
        assert_eq!(profile.slices.len(), 50);
        assert_eq!(profile.slices[0], [4, 80]);
        assert_eq!(profile.slices[49], [4, 120]);
        assert_eq!(profile.range_bytes(0, 100), Some(2000));
        assert_eq!(profile.range_bytes(100, 100), Some(3000));
        assert_eq!(profile.range_bytes(98, 4), Some(100));
        assert_eq!(profile.range_bytes(150, 51), None);
    }

    #[test]
    fn scores_out_of_order_keep_no_profile() {
        let mut p = RankProfiler::new();
        for s in [1.0, 2.0, 2.0, 3.0, 1.5] {
            p.push(s, 10);
        }
        assert_eq!(p.finish(), RankProfile::default());
        // Ties do not decide the order.
        let mut p = RankProfiler::new();
        for s in [5.0, 5.0, 4.0, 4.0, 1.0] {
            p.push(s, 10);
        }
        assert_eq!(p.finish().slices.len(), 5);
    }
}
