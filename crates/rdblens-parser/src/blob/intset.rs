use super::{le_signed, le_u32, BlobError, BlobResult};
use crate::element::decimal_len;
use crate::error::ErrorKind;
use crate::value::BlobSummary;

/// An intset: sorted integers of one width (2, 4 or 8 bytes).
#[derive(Clone, Copy, Debug)]
pub struct Intset<'b> {
    bytes: &'b [u8],
    width: usize,
    len: usize,
}

fn bad(pos: usize, msg: String) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadIntset(msg),
    }
}

impl<'b> Intset<'b> {
    /// Checks the header against the blob: element width 2, 4 or 8 and a count that fills it exactly.
    /// The order of the members is checked while iterating.
    pub fn new(bytes: &'b [u8]) -> BlobResult<Self> {
        if bytes.len() < 8 {
            return Err(bad(
                0,
                format!("{} bytes is shorter than the 8-byte header", bytes.len()),
            ));
        }
        let width = le_u32(bytes, 0) as usize;
        if !matches!(width, 2 | 4 | 8) {
            return Err(bad(0, format!("invalid element width {width}")));
        }
        let len = le_u32(bytes, 4) as usize;
        if (len as u64) * (width as u64) + 8 != bytes.len() as u64 {
            return Err(bad(
                4,
                format!(
                    "{len} elements of {width} bytes do not fill a {}-byte blob",
                    bytes.len()
                ),
            ));
        }
        Ok(Intset { bytes, width, len })
    }

    /// As [`super::Listpack::count_in_header`]: the member count of a
    /// `total`-byte intset from its first 8 bytes, with the checks of
    /// [`Intset::new`] (width, and a count that fills the blob) but the
    /// order of the members.
    pub fn count_in_header(head: &[u8], total: usize) -> Option<u32> {
        if head.len() < 8 {
            return None;
        }
        let width = le_u32(head, 0) as u64;
        let len = le_u32(head, 4);
        (matches!(width, 2 | 4 | 8) && u64::from(len) * width + 8 == total as u64).then_some(len)
    }

    /// Number of members, from the header (checked against the blob size).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes per element: 2, 4 or 8.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The whole blob, header included.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The [`BlobSummary`] of the members (count, decimal lengths, all
    /// integers), with the order check of [`Self::iter`] and its error. One
    /// loop per width: intsets are a quarter of the keys of the
    /// collection-heavy benchmark dump, and the iterator's width and order
    /// branches cost more than the sums.
    pub fn summary(&self) -> BlobResult<BlobSummary> {
        fn sum<const W: usize>(set: &Intset<'_>, read: impl Fn([u8; W]) -> i64) -> BlobResult<BlobSummary> {
            let mut s = BlobSummary {
                elements: set.len as u64,
                all_int: true,
                ..BlobSummary::default()
            };
            let mut prev = i64::MIN;
            for (i, chunk) in set.bytes[8..].chunks_exact(W).enumerate() {
                let mut raw = [0u8; W];
                raw.copy_from_slice(chunk);
                let v = read(raw);
                if i > 0 && prev >= v {
                    return Err(bad(8 + i * W, "members are not in ascending order".into()));
                }
                prev = v;
                let l = decimal_len(v) as u64;
                s.payload += l;
                s.max_len = s.max_len.max(l);
            }
            Ok(s)
        }
        match self.width {
            2 => sum::<2>(self, |b| i64::from(i16::from_le_bytes(b))),
            4 => sum::<4>(self, |b| i64::from(i32::from_le_bytes(b))),
            _ => sum::<8>(self, i64::from_le_bytes),
        }
    }

    /// The members in ascending order; a member not above its predecessor is an error.
    pub fn iter(&self) -> IntsetIter<'b> {
        IntsetIter {
            set: *self,
            next: 0,
            prev: None,
        }
    }
}

/// Members of an intset in ascending order. After an order error it yields nothing more.
pub struct IntsetIter<'b> {
    set: Intset<'b>,
    next: usize,
    prev: Option<i64>,
}

impl<'b> Iterator for IntsetIter<'b> {
    type Item = BlobResult<i64>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.set.len {
            return None;
        }
        let at = 8 + self.next * self.set.width;
        let v = le_signed(self.set.bytes, at, self.set.width);
        self.next += 1;
        if self.prev.is_some_and(|p| p >= v) {
            self.next = self.set.len;
            return Some(Err(bad(at, "members are not in ascending order".into())));
        }
        self.prev = Some(v);
        Some(Ok(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_hostile() {
        let mut b = vec![4, 0, 0, 0, 2, 0, 0, 0];
        b.extend_from_slice(&(-5i32).to_le_bytes());
        b.extend_from_slice(&70000i32.to_le_bytes());
        let s = Intset::new(&b).unwrap(); // ok: unit test
        assert_eq!(s.iter().collect::<Result<Vec<_>, _>>().unwrap(), vec![-5, 70000]); // ok: unit test
        let mut unsorted = b.clone();
        unsorted.swap(8, 12);
        unsorted.swap(9, 13);
        unsorted.swap(10, 14);
        unsorted.swap(11, 15);
        assert!(Intset::new(&unsorted).unwrap().iter().any(|r| r.is_err())); // ok: unit test
        let mut width = b.clone();
        width[0] = 3;
        assert!(Intset::new(&width).is_err());
        let mut len = b.clone();
        len[4] = 0xff;
        assert_eq!(Intset::new(&len).unwrap_err().pos, 4);
        assert!(Intset::new(&b[..7]).is_err());
    }
}
