//! `rdblens check`: sound files, flipped bytes, truncation, non-RDB input.

mod support;

use predicates::str::contains;
use support::{rdblens, root, RdbBuilder, ALL_TYPES};

#[test]
fn a_sound_file_passes() {
    rdblens()
        .args(["check", ALL_TYPES])
        .assert()
        .success()
        .stdout(contains("format: Redis RDB 12 (REDIS0012)"))
        .stdout(contains("keys: 227"))
        .stdout(contains("checksum: valid (crc64 0xcbadfd70b6e27532)"))
        .stdout(contains("\nok\n"))
        .stderr("");
}

#[test]
fn every_file_is_checked() {
    rdblens()
        .args(["check", ALL_TYPES, "fixtures/rdb/valkey-9.1.2/all-types.rdb"])
        .assert()
        .success()
        .stdout(contains("format: Valkey RDB 80 (VALKEY080)"));
    // One bad file among good ones: every file is still checked, exit 3.
    rdblens()
        .args(["check", "/nonexistent.rdb", ALL_TYPES])
        .assert()
        .code(3)
        .stdout(contains("keys: 227"))
        .stderr("rdblens: /nonexistent.rdb: cannot open: No such file or directory (os error 2)\n");
}

#[test]
fn a_flipped_byte_is_a_checksum_mismatch() {
    let mut data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    data[1000] ^= 0x40;
    let dir = tempfile::tempdir().unwrap();
    let flipped = dir.path().join("flipped.rdb");
    std::fs::write(&flipped, data).unwrap();
    rdblens()
        .arg("check")
        .arg(&flipped)
        .assert()
        .code(3)
        .stderr(contains(format!(
            "rdblens: {}: checksum mismatch: the file stores 0xcbadfd70b6e27532, its bytes hash to 0x",
            flipped.display()
        )));
}

#[test]
fn a_truncated_file_names_the_offset_and_key() {
    let data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, &data[..600_000]).unwrap();
    rdblens().arg("check").arg(&cut).assert().code(3).stderr(format!(
        "rdblens: {}: unexpected end of input while reading string value: needed 1048576 bytes, \
         460260 remain at byte offset 139740 in key \"str:big:1mb-random\"\n",
        cut.display()
    ));
}

#[test]
fn a_damaged_value_names_the_offset_and_key() {
    let data = RdbBuilder::new().damaged_hash(b"broken").finish();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("damaged.rdb");
    std::fs::write(&file, data).unwrap();
    rdblens()
        .arg("check")
        .arg(&file)
        .assert()
        .code(3)
        .stderr(contains("corrupt listpack"))
        .stderr(contains("at byte offset"))
        .stderr(contains("in key \"broken\""));
}

#[test]
fn not_rdb_input_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("notes.txt");
    std::fs::write(&txt, "hello\n").unwrap();
    rdblens().arg("check").arg(&txt).assert().code(3).stderr(format!(
        "rdblens: {}: not an RDB file: it starts with text \"hello\\n\", expected the magic REDIS00NN or VALKEYNNN at byte offset 0\n",
        txt.display()
    ));
}

#[test]
fn usage_errors_exit_2() {
    rdblens()
        .arg("check")
        .assert()
        .code(2)
        .stderr(contains("required arguments were not provided"));
    rdblens()
        .args(["check", ALL_TYPES, "--format", "json"])
        .assert()
        .code(2);
}
