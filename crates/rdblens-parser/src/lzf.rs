//! LZF decompression (the format of liblzf that Redis uses).
//!
//! Written by hand because the `lzf` crate is deprecated and only returns a
//! freshly allocated `Vec`; the analyzer decompresses millions of small
//! blobs and needs to reuse one buffer, with the output capped by the
//! declared length.

/// The largest output `clen` compressed bytes can produce: a 3-byte back
/// reference yields at most 264 bytes. Declared lengths above this are lies,
/// and are rejected before any allocation.
pub fn max_output_len(clen: u64) -> u64 {
    (clen / 3 + 1).saturating_mul(264)
}

/// Decompresses `input` into `out`, which ends up exactly `len` bytes long.
pub fn decompress(input: &[u8], len: usize, out: &mut Vec<u8>) -> Result<(), String> {
    if len as u64 > max_output_len(input.len() as u64) {
        return Err(format!(
            "declared uncompressed length {len} is impossible for {} compressed bytes",
            input.len()
        ));
    }
    out.clear();
    // Reserve without zero-filling: every output byte is written exactly once.
    out.reserve(len);
    let mut ip = 0usize;
    while ip < input.len() {
        let op = out.len();
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            if ip + n > input.len() {
                return Err(format!(
                    "literal run of {n} bytes at input byte {} runs past the end",
                    ip - 1
                ));
            }
            if op + n > len {
                return Err(format!("output exceeds the declared length {len}"));
            }
            out.extend_from_slice(&input[ip..ip + n]);
            ip += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(ip).ok_or("input ends inside a back reference")? as usize;
                ip += 1;
            }
            let low = *input.get(ip).ok_or("input ends inside a back reference")? as usize;
            ip += 1;
            let dist = ((ctrl & 0x1f) << 8) + low + 1;
            if dist > op {
                return Err(format!(
                    "back reference {dist} bytes back at output byte {op} points before the start"
                ));
            }
            n += 2;
            if op + n > len {
                return Err(format!("output exceeds the declared length {len}"));
            }
            let src = op - dist;
            if dist >= n {
                out.extend_from_within(src..src + n);
            } else {
                // Overlapping copy: byte by byte reproduces run-length patterns.
                for i in 0..n {
                    let b = out[src + i];
                    out.push(b);
                }
            }
        }
    }
    let op = out.len();
    if op != len {
        return Err(format!("decompressed to {op} bytes, declared {len}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_overlapping_reference() {
        // "abc" literal, then a back reference of 6 bytes at distance 3.
        let input = [2, b'a', b'b', b'c', (4 << 5), 2];
        let mut out = Vec::new();
        decompress(&input, 9, &mut out).unwrap();
        assert_eq!(out, b"abcabcabc");
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let mut out = Vec::new();
        assert_eq!(
            decompress(&[5, b'a'], 6, &mut out).unwrap_err(),
            "literal run of 6 bytes at input byte 0 runs past the end"
        );
        assert!(decompress(&[0, b'a', (1 << 5), 5], 4, &mut out)
            .unwrap_err()
            .contains("points before the start"));
        assert_eq!(
            decompress(&[0, b'a'], 2, &mut out).unwrap_err(),
            "decompressed to 1 bytes, declared 2"
        );
        assert_eq!(
            decompress(&[1, b'a', b'b'], 1, &mut out).unwrap_err(),
            "output exceeds the declared length 1"
        );
        assert!(decompress(&[0xe0], 10, &mut out)
            .unwrap_err()
            .contains("inside a back reference"));
        assert!(decompress(&[0, 1], 1 << 40, &mut out)
            .unwrap_err()
            .contains("impossible"));
    }
}
