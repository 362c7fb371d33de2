//! Listpack entry sizes for what small string keys would cost as fields of
//! a hash (small-key-sprawl), on top of the memory model's entry arithmetic.

use rdblens_memory::listpack_entry;
use rdblens_parser::Element;

/// A string entry of `len` bytes.
pub fn str_entry(len: u64) -> u64 {
    listpack_entry::string(len)
}

/// An integer entry.
pub fn int_entry(v: i64) -> u64 {
    listpack_entry::int(v)
}

/// The entry for these bytes: listpacks store canonical integers as integers.
pub fn bytes_entry(b: &[u8]) -> u64 {
    match Element::Bytes(b).as_int() {
        Some(v) => int_entry(v),
        None => str_entry(b.len() as u64),
    }
}

/// The entry for an integer known only by the length of its decimal text
/// (int-encoded string values): the largest integer of that many digits,
/// so the estimate errs towards smaller savings.
pub fn int_entry_for_digits(digits: u64) -> u64 {
    let largest = 10i64
        .checked_pow(digits.min(19) as u32)
        .map_or(i64::MAX, |p| p - 1);
    int_entry(largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_sizes_follow_listpack_c() {
        assert_eq!(str_entry(0), 2);
        assert_eq!(str_entry(20), 22);
        assert_eq!(str_entry(63), 65);
        assert_eq!(str_entry(64), 67);
        assert_eq!(str_entry(126), 130);
        assert_eq!(int_entry(5), 2);
        assert_eq!(int_entry(128), 3);
        assert_eq!(int_entry(-1), 3);
        assert_eq!(int_entry(40_000), 5);
        assert_eq!(int_entry(i64::MAX), 10);
        assert_eq!(bytes_entry(b"12345"), 4);
        assert_eq!(bytes_entry(b"007"), 5);
        assert_eq!(int_entry_for_digits(2), 2);
        assert_eq!(int_entry_for_digits(3), 3);
        assert_eq!(int_entry_for_digits(6), 5);
        assert_eq!(int_entry_for_digits(20), 10);
    }
}
