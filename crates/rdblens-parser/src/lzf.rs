//! LZF decompression (the format of liblzf that Redis uses).
//!
//! Written by hand because the `lzf` crate is deprecated and only returns a
//! freshly allocated `Vec`; the analyzer decompresses millions of small
//! blobs and needs to reuse one buffer, with the output capped by the
//! declared length.
//!
//! Speed without `unsafe`: the output buffer keeps [`SLACK`] bytes past the
//! declared length, so literal runs and back references are copied in
//! fixed-size chunks of 8, 16 or 32 bytes (`[u8; N]` copies compile to
//! register and vector moves, where an `extend_from_slice` of a few bytes is
//! a call to libc's `memmove`). A chunk may write past the end of the current
//! operation; those bytes are garbage until the next operation overwrites
//! them, and bytes before the output position are always final. Only literal
//! runs near the end of the input take an exact (variable-length) copy.
//!
//! Measured on the 1.15 GB benchmark dump (1.16 M LZF strings, mean 937 B
//! out): 0.74 GB/s of output byte by byte, 1.5 GB/s in chunks. Variants that
//! did worse there: 16-byte literal copies for short runs, 8-byte ones for
//! runs up to 8, and a `memmove` or 32-byte chunks for long back references
//! (each test on the hot path costs more than long copies gain; long
//! references still run at ~20 GB/s).

/// Bytes kept past the declared length in the buffer of [`decompress_into`]:
/// the largest chunk overshoot (a 32-byte chunk for a 1-byte literal run).
const SLACK: usize = 32;

/// The largest output `clen` compressed bytes can produce: a 3-byte back
/// reference yields at most 264 bytes. Declared lengths above this are lies,
/// and are rejected before any allocation.
pub fn max_output_len(clen: u64) -> u64 {
    (clen / 3 + 1).saturating_mul(264)
}

fn check_declared(input: &[u8], len: usize) -> Result<(), String> {
    if len as u64 > max_output_len(input.len() as u64) {
        return Err(format!(
            "declared uncompressed length {len} is impossible for {} compressed bytes",
            input.len()
        ));
    }
    Ok(())
}

/// Decompresses `input` into `out`, which ends up exactly `len` bytes long
/// (empty after an error).
pub fn decompress(input: &[u8], len: usize, out: &mut Vec<u8>) -> Result<(), String> {
    // Refuse an impossible length before touching the buffer.
    check_declared(input, len)?;
    match decompress_into(input, len, out) {
        Ok(_) => {
            out.truncate(len);
            Ok(())
        }
        Err(e) => {
            out.clear();
            Err(e)
        }
    }
}

/// Decompresses `input` into `buf` and returns the `len` bytes of output,
/// `&buf[..len]`. `buf` is a reusable buffer: it is grown (never shrunk) to
/// `len` plus a little slack, and its contents past the output are
/// unspecified, so reusing it costs no zero-filling once it is big enough.
pub fn decompress_into<'o>(input: &[u8], len: usize, buf: &'o mut Vec<u8>) -> Result<&'o [u8], String> {
    check_declared(input, len)?;
    // `len` is bounded by the input size above, so this cannot over-allocate.
    let need = len + SLACK;
    if buf.len() < need {
        buf.resize(need, 0);
    }
    let out = &mut buf[..need];
    let op = decode(input, len, out)?;
    if op != len {
        return Err(format!("decompressed to {op} bytes, declared {len}"));
    }
    Ok(&buf[..len])
}

/// The longest prefix [`prefix`] decodes: a compact blob's header (a
/// ziplist's is 10 bytes) with room to spare.
pub const PREFIX_MAX: usize = 16;

/// The first `want` (at most [`PREFIX_MAX`], at most `len`) bytes of the
/// output, decoding no further than the token that reaches them: what a
/// blob's header says, without decompressing the rest of it. `None` when the
/// stream breaks before them (the full decoder then says how). Byte by byte:
/// it runs once per blob, over a token or two.
pub fn prefix(input: &[u8], len: usize, want: usize) -> Option<[u8; PREFIX_MAX]> {
    let want = want.min(len);
    if want > PREFIX_MAX || check_declared(input, len).is_err() {
        return None;
    }
    let mut out = [0u8; PREFIX_MAX];
    let (mut ip, mut op) = (0usize, 0usize);
    while op < want {
        let ctrl = *input.get(ip)? as usize;
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let run = input.get(ip..ip + n)?;
            if op + n > len {
                return None;
            }
            for &b in run.iter().take(PREFIX_MAX - op) {
                out[op] = b;
                op += 1;
            }
            ip += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(ip)? as usize;
                ip += 1;
            }
            let dist = ((ctrl & 0x1f) << 8) + *input.get(ip)? as usize + 1;
            ip += 1;
            n += 2;
            if dist > op || op + n > len {
                return None;
            }
            // Byte by byte: the source may overlap what this copy writes.
            for _ in 0..n.min(PREFIX_MAX - op) {
                out[op] = out[op - dist];
                op += 1;
            }
        }
    }
    Some(out)
}

/// Step between 16-byte stores of a repeating pattern of period `dist`
/// (`dist < 8`): the largest multiple of `dist` that is at most 16.
const PATTERN_STEP: [usize; 8] = [0, 16, 16, 15, 16, 15, 12, 14];

/// Copies `N`-byte chunks `dist >= N` bytes back, from `op` until at least
/// `n` bytes are written. Each chunk is read whole before it is written, and
/// its source lies before its destination, so it only reads final bytes.
#[inline(always)]
fn copy_back<const N: usize>(out: &mut [u8], op: usize, dist: usize, n: usize) {
    let mut k = 0;
    loop {
        let s = op - dist + k;
        // Through a copy: source and destination are the same buffer.
        let mut chunk = [0u8; N];
        chunk.copy_from_slice(&out[s..s + N]);
        out[op + k..op + k + N].copy_from_slice(&chunk);
        k += N;
        if k >= n {
            break;
        }
    }
}

/// Runs the LZF stream into `out` (at least `len + SLACK` bytes) and returns
/// the number of bytes produced. Every check (and its message) is the one of
/// the byte-by-byte decoder: nothing is written at or past `len` except
/// chunk overshoot into the slack.
fn decode(input: &[u8], len: usize, out: &mut [u8]) -> Result<usize, String> {
    debug_assert!(out.len() >= len + SLACK);
    let mut ip = 0usize;
    let mut op = 0usize;
    while ip < input.len() {
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
            if let Some(src) = input.get(ip..ip + 32) {
                // op + n <= len, so op + 32 <= len + 31 fits in the slack.
                out[op..op + 32].copy_from_slice(src);
            } else if n <= 16 && ip + 16 <= input.len() {
                out[op..op + 16].copy_from_slice(&input[ip..ip + 16]);
            } else {
                out[op..op + n].copy_from_slice(&input[ip..ip + n]);
            }
            ip += n;
            op += n;
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
            // Chunks end at most N - 1 bytes past op + n <= len: in the slack.
            if n <= 8 && dist >= 8 {
                copy_back::<8>(out, op, dist, n);
            } else if dist >= 16 {
                copy_back::<16>(out, op, dist, n);
            } else if dist >= 8 {
                copy_back::<8>(out, op, dist, n);
            } else {
                // Overlapping run of period dist < 8 (a repeated byte, or a
                // short pattern): build 16 bytes of it, then store them every
                // PATTERN_STEP bytes (a multiple of the period).
                let src = op - dist;
                let mut pattern = [0u8; 16];
                // Bytes past op (src + dist) are not final, but only the
                // first dist are kept: the loop overwrites the others.
                pattern[..8].copy_from_slice(&out[src..src + 8]);
                for i in dist..16 {
                    pattern[i] = pattern[i - dist];
                }
                let step = PATTERN_STEP[dist];
                let mut k = 0;
                loop {
                    out[op + k..op + k + 16].copy_from_slice(&pattern);
                    k += step;
                    if k >= n {
                        break;
                    }
                }
            }
            op += n;
        }
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prefix_stops_at_the_bytes_asked_for() {
        // "abc" literal, then a back reference of 6 bytes at distance 3.
        let input = [2, b'a', b'b', b'c', (4 << 5), 2];
        let head = prefix(&input, 9, 5).unwrap(); // ok: unit test
        assert_eq!(&head[..5], b"abcab");
        // Asked for more than the output holds: the whole output.
        let head = prefix(&input, 9, PREFIX_MAX).unwrap(); // ok: unit test
        assert_eq!(&head[..9], b"abcabcabc");
        // Never past the token that reaches the bytes: a broken tail is not read.
        assert!(prefix(&[2, b'a', b'b', b'c', 0xff], 9, 3).is_some());
        assert!(prefix(&[2, b'a', b'b', b'c', 0xff], 9, 4).is_none());
        // A reference before the start, a run past the input, an impossible length.
        assert!(prefix(&[(1 << 5), 0], 3, 1).is_none());
        assert!(prefix(&[5, b'a'], 6, 1).is_none());
        assert!(prefix(&[0, b'a'], 1000, 1).is_none());
    }

    #[test]
    fn literal_and_overlapping_reference() {
        // "abc" literal, then a back reference of 6 bytes at distance 3.
        let input = [2, b'a', b'b', b'c', (4 << 5), 2];
        let mut out = Vec::new();
        decompress(&input, 9, &mut out).unwrap(); // ok: unit test
        assert_eq!(out, b"abcabcabc");
        let mut buf = Vec::new();
        let got = decompress_into(&input, 9, &mut buf).unwrap(); // ok: unit test
        assert_eq!(got, b"abcabcabc");
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
        assert!(out.is_empty());
        // A back reference that would run past the declared length.
        assert_eq!(
            decompress(&[0, b'a', (7 << 5), 200, 0], 100, &mut out).unwrap_err(),
            "output exceeds the declared length 100"
        );
    }

    /// One LZF operation, for building streams.
    #[derive(Clone, Debug)]
    enum Op {
        Literal(Vec<u8>),
        /// Distance back (1..=8192, clamped to what has been produced), length 3..=264.
        Back(usize, usize),
    }

    /// Encodes operations as an LZF stream and computes the expected output
    /// byte by byte (the obvious, slow decoder).
    fn encode(ops: &[Op]) -> (Vec<u8>, Vec<u8>) {
        let mut stream = Vec::new();
        let mut expected: Vec<u8> = Vec::new();
        for op in ops {
            match op {
                Op::Literal(bytes) => {
                    for run in bytes.chunks(32) {
                        stream.push((run.len() - 1) as u8);
                        stream.extend_from_slice(run);
                        expected.extend_from_slice(run);
                    }
                }
                &Op::Back(dist, n) => {
                    if expected.is_empty() {
                        continue;
                    }
                    let dist = dist.clamp(1, expected.len().min(8192));
                    let (d, l) = (dist - 1, n - 2);
                    if l < 7 {
                        stream.push(((l << 5) | (d >> 8)) as u8);
                    } else {
                        stream.push(((7 << 5) | (d >> 8)) as u8);
                        stream.push((l - 7) as u8);
                    }
                    stream.push(d as u8);
                    for _ in 0..n {
                        expected.push(expected[expected.len() - dist]);
                    }
                }
            }
        }
        (stream, expected)
    }

    /// A small greedy LZF compressor (longest match over the whole 8 KiB
    /// window, overlapping matches included): slow, but exercises every
    /// distance the data offers.
    fn compress(data: &[u8]) -> Vec<u8> {
        let mut ops = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < data.len() {
            let (mut best_len, mut best_dist) = (0, 0);
            for dist in 1..=i.min(8192) {
                let mut l = 0;
                while l < 264 && i + l < data.len() && data[i + l - dist] == data[i + l] {
                    l += 1;
                }
                if l > best_len {
                    (best_len, best_dist) = (l, dist);
                }
            }
            if best_len >= 3 {
                if !lit.is_empty() {
                    ops.push(Op::Literal(std::mem::take(&mut lit)));
                }
                ops.push(Op::Back(best_dist, best_len));
                i += best_len;
            } else {
                lit.push(data[i]);
                i += 1;
            }
        }
        if !lit.is_empty() {
            ops.push(Op::Literal(lit));
        }
        let (stream, expected) = encode(&ops);
        assert_eq!(expected, data, "the test compressor is wrong");
        stream
    }

    fn check(stream: &[u8], expected: &[u8], buf: &mut Vec<u8>) {
        assert_eq!(decompress_into(stream, expected.len(), buf).unwrap(), expected); // ok: unit test
        let mut exact = Vec::new();
        decompress(stream, expected.len(), &mut exact).unwrap(); // ok: unit test
        assert_eq!(exact, expected);
        // One byte more or less declared is an error, never a panic.
        assert!(decompress_into(stream, expected.len() + 1, buf).is_err());
        if !expected.is_empty() {
            assert!(decompress_into(stream, expected.len() - 1, buf).is_err());
        }
        // Every truncation of the stream is an error or a shorter output.
        for cut in 0..stream.len() {
            let _ = decompress_into(&stream[..cut], expected.len(), buf);
        }
    }

    #[test]
    fn every_distance_and_length() {
        let mut buf = Vec::new();
        let seed: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for dist in 1..=40 {
            for n in [3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 263, 264] {
                for tail in [0usize, 1, 5, 40] {
                    let ops = [
                        Op::Literal(seed.clone()),
                        Op::Back(dist, n),
                        Op::Literal(seed[..tail].to_vec()),
                    ];
                    let (stream, expected) = encode(&ops);
                    check(&stream, &expected, &mut buf);
                }
            }
        }
    }

    #[test]
    fn roundtrip_text_and_runs() {
        let mut buf = Vec::new();
        let text = b"{\"id\":12345,\"name\":\"user:12345\",\"tags\":[\"a\",\"b\",\"a\",\"b\"]}    \
            <div class=\"x\">          </div><div class=\"x\">0000000000000000</div>";
        let data: Vec<u8> = text.iter().cycle().take(3000).copied().collect();
        check(&compress(&data), &data, &mut buf);
        let zeros = vec![0u8; 5000];
        check(&compress(&zeros), &zeros, &mut buf);
        // A small buffer reused for a big output and back.
        check(&compress(&data[..50]), &data[..50], &mut buf);
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 1..70).prop_map(Op::Literal),
            (1usize..20, 3usize..=264).prop_map(|(d, n)| Op::Back(d, n)),
            (1usize..=8192, 3usize..=264).prop_map(|(d, n)| Op::Back(d, n)),
        ]
    }

    proptest! {
        #[test]
        fn random_streams_decode_like_the_byte_by_byte_decoder(
            ops in prop::collection::vec(op_strategy(), 0..60),
        ) {
            let (stream, expected) = encode(&ops);
            let mut buf = Vec::new();
            check(&stream, &expected, &mut buf);
            // Any prefix is the full output's.
            for want in [1, 6, 10, PREFIX_MAX] {
                let n = want.min(expected.len());
                let head = prefix(&stream, expected.len(), want);
                prop_assert_eq!(head.map(|h| h[..n].to_vec()), Some(expected[..n].to_vec()));
            }
        }

        #[test]
        fn compressed_random_data_roundtrips(
            parts in prop::collection::vec(
                (prop::collection::vec(0u8..4, 0..40), 0usize..30),
                1..20,
            ),
        ) {
            // Small alphabet and repeated parts: plenty of matches, many overlapping.
            let mut data = Vec::new();
            for (bytes, repeat) in &parts {
                data.extend_from_slice(bytes);
                if !data.is_empty() {
                    let last = data[data.len() - 1];
                    data.resize(data.len() + *repeat, last);
                }
            }
            let mut buf = vec![0xaa; 7];
            check(&compress(&data), &data, &mut buf);
        }

        #[test]
        fn garbage_never_panics(input in prop::collection::vec(any::<u8>(), 0..200), len in 0usize..2000) {
            let mut buf = Vec::new();
            let _ = decompress_into(&input, len, &mut buf);
            let mut out = Vec::new();
            if decompress(&input, len, &mut out).is_ok() {
                prop_assert_eq!(out.len(), len);
            } else {
                prop_assert!(out.is_empty());
            }
        }
    }
}
