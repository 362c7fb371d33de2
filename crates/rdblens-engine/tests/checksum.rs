//! The trailer checksum, hashed ahead of the walker: valid files stay
//! valid whatever their size or the thread count, a flipped byte anywhere is
//! a mismatch, and bytes after the checksum (which the hash may have run
//! into) do not count.

use rdblens_engine::analyze_bytes;
use rdblens_parser::crc64;
use rdblens_summary::{Options, Summary};

/// A `REDIS0009` file of `n` string keys with `value_len`-byte values and
/// a correct checksum: large enough for the hash to run ahead many times.
fn file(n: usize, value_len: u32) -> Vec<u8> {
    let mut data = b"REDIS0009".to_vec();
    for i in 0..n {
        data.push(0); // string
        let key = format!("k:{i}");
        data.push(key.len() as u8); // 6-bit length
        data.extend_from_slice(key.as_bytes());
        data.push(0x80); // 32-bit length follows, big-endian
        data.extend_from_slice(&value_len.to_be_bytes());
        data.extend((0..value_len).map(|j| (j as usize * 31 + i) as u8));
    }
    data.push(0xff);
    let crc = crc64(&data);
    data.extend_from_slice(&crc.to_le_bytes());
    data
}

fn analyze(data: &[u8], threads: usize) -> Summary {
    let opts = Options {
        threads,
        ..Options::default()
    };
    analyze_bytes(data, "test.rdb", &opts).unwrap()
}

fn checksum(data: &[u8], threads: usize) -> String {
    analyze(data, threads).files[0].checksum.to_string()
}

#[test]
fn valid_files_of_any_size_stay_valid() {
    // Smaller than the lookahead, a little larger, and many times larger.
    for (n, len) in [(3, 100), (3, 100_000), (40, 100_000), (5, 3_000_000)] {
        let data = file(n, len);
        for threads in [1, 2] {
            let s = analyze(&data, threads);
            assert_eq!(
                s.files[0].checksum.as_str(),
                "valid",
                "{n} x {len} B, {threads} threads"
            );
            assert_eq!(s.keys.totals.keys, n as u64);
        }
    }
}

#[test]
fn a_flipped_byte_is_a_mismatch_wherever_it_is() {
    let data = file(40, 100_000);
    for at in [20, 1_000_000, data.len() / 2, data.len() - 10] {
        let mut bad = data.clone();
        bad[at] ^= 0x01;
        for threads in [1, 2] {
            assert_eq!(
                checksum(&bad, threads),
                "mismatch",
                "byte {at}, {threads} threads"
            );
        }
    }
}

#[test]
fn bytes_after_the_checksum_do_not_count() {
    for (n, len) in [(3, 100), (40, 100_000)] {
        let mut data = file(n, len);
        // An appended tail longer than the checksum: the hash, which only
        // stops 8 bytes short of the end, runs past the trailer.
        data.extend_from_slice(&[0x5a; 1000]);
        for threads in [1, 2] {
            assert_eq!(
                checksum(&data, threads),
                "valid",
                "{n} x {len} B, {threads} threads"
            );
        }
    }
}
