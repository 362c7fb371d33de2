//! The mapped file's page management: releasing and faulting pages in
//! never changes what the map reads, and ranges past its end are cut.

use std::path::PathBuf;

use rdblens_parser::RdbFile;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb/redis-8.0.6/all-types.rdb")
}

#[test]
fn released_and_faulted_in_pages_read_the_file_unchanged() {
    let path = fixture();
    let want = std::fs::read(&path).unwrap();
    let file = RdbFile::open(&path).unwrap();
    let len = file.len();
    assert_eq!(len, want.len());
    // Several fault-around steps (64 KiB), a part past the end, an empty
    // and a reversed range, a range wholly past the end.
    file.populate(0, 200_000);
    file.release(0, len);
    file.populate(100_001, len + 4096);
    file.populate(len, len);
    file.populate(5000, 10);
    file.populate(len + 1, len + 100_000);
    assert_eq!(file.bytes(), &want[..]);
    file.release(4096, len + 4096);
    file.populate(0, len);
    assert_eq!(file.bytes(), &want[..]);
}
