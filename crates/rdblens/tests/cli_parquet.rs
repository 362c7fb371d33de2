//! `rdblens keys --format parquet`: read back with the parquet crate's own
//! reader, the file has the CSV's rows and columns, typed. Without the
//! `parquet` feature the format is refused as a usage error.

mod support;

#[cfg(not(feature = "parquet"))]
#[test]
fn parquet_needs_the_feature() {
    use support::{rdblens, ALL_TYPES};
    rdblens()
        .args(["keys", ALL_TYPES, "--format", "parquet", "-o", "/dev/null"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains("built without Parquet support"));
}

#[cfg(feature = "parquet")]
mod with_parquet {
    use std::fs::File;
    use std::path::Path;

    use parquet::basic::{LogicalType, Repetition, TimeUnit, Type as PhysicalType};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    use super::support::{rdblens, root, RdbBuilder, ALL_TYPES};

    fn csv(args: &[&str]) -> Vec<Vec<String>> {
        let out = rdblens().arg("keys").args(args).assert().success();
        let mut r = csv::Reader::from_reader(&out.get_output().stdout[..]);
        r.records()
            .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
            .collect()
    }

    fn parquet(path: &Path, args: &[&str]) -> SerializedFileReader<File> {
        rdblens()
            .arg("keys")
            .args(args)
            .args(["--format", "parquet", "-o", path.to_str().unwrap()])
            .assert()
            .success()
            .stdout("");
        SerializedFileReader::new(File::open(path).unwrap()).unwrap()
    }

    /// A parquet row as the CSV writes it; `expiry` (a timestamp here, ISO
    /// text in the CSV) as its milliseconds.
    fn as_text(row: &parquet::record::Row) -> Vec<String> {
        row.get_column_iter()
            .map(|(name, field)| match field {
                Field::Null => String::new(),
                Field::Bool(b) => b.to_string(),
                Field::Int(n) => n.to_string(),
                Field::Long(n) => n.to_string(),
                Field::Str(s) => s.clone(),
                Field::TimestampMillis(ms) => ms.to_string(),
                other => panic!("{name}: unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn rows_and_columns_are_the_csv_ones_typed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.parquet");
        let reader = parquet(&path, &[ALL_TYPES, "--now", "1800000000"]);
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 227);
        assert!(meta.created_by().unwrap().starts_with("rdblens "));

        let csv_rows = csv(&[ALL_TYPES, "--now", "1800000000"]);
        let header = csv::Reader::from_reader(
            &rdblens()
                .args(["keys", ALL_TYPES, "--db", "99"])
                .assert()
                .success()
                .get_output()
                .stdout[..],
        )
        .headers()
        .unwrap()
        .clone();
        let schema = meta.schema_descr();
        let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
        assert_eq!(names, header.iter().collect::<Vec<_>>());

        // Types: integers are INT64 (INT32 for slot and lfu_freq), names are
        // UTF-8 strings, expiry a UTC timestamp in ms, key_escaped a boolean;
        // what the CSV leaves empty is nullable.
        for c in schema.columns() {
            let (physical, logical) = (c.physical_type(), c.logical_type_ref().cloned());
            let nullable = c.self_type().get_basic_info().repetition() == Repetition::OPTIONAL;
            match c.name() {
                "type" | "key" | "encoding" | "rdb_type" => {
                    assert_eq!(
                        (physical, logical, nullable),
                        (PhysicalType::BYTE_ARRAY, Some(LogicalType::String), false)
                    )
                }
                "module" => assert_eq!(
                    (physical, logical, nullable),
                    (PhysicalType::BYTE_ARRAY, Some(LogicalType::String), true)
                ),
                "expiry" => assert_eq!(
                    (physical, logical, nullable),
                    (
                        PhysicalType::INT64,
                        Some(LogicalType::timestamp(true, TimeUnit::MILLIS)),
                        true
                    )
                ),
                "expiry_ms" | "ttl_ms" | "idle_seconds" => {
                    assert_eq!((physical, nullable), (PhysicalType::INT64, true))
                }
                "lfu_freq" => assert_eq!((physical, nullable), (PhysicalType::INT32, true)),
                "slot" => assert_eq!((physical, nullable), (PhysicalType::INT32, false)),
                "key_escaped" => assert_eq!((physical, nullable), (PhysicalType::BOOLEAN, false)),
                _ => assert_eq!(
                    (physical, logical, nullable),
                    (PhysicalType::INT64, None, false),
                    "{}",
                    c.name()
                ),
            }
        }

        let rows: Vec<Vec<String>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| as_text(&r.unwrap()))
            .collect();
        assert_eq!(rows.len(), csv_rows.len());
        let expiry = names.iter().position(|&n| n == "expiry").unwrap();
        let expiry_ms = names.iter().position(|&n| n == "expiry_ms").unwrap();
        for (p, c) in rows.iter().zip(&csv_rows) {
            let mut c = c.clone();
            c[expiry] = c[expiry_ms].clone();
            assert_eq!(p, &c);
        }
        // Some values, spelled out.
        let key = names.iter().position(|&n| n == "key").unwrap();
        let profile = rows.iter().find(|r| r[key] == "user:1:profile").unwrap();
        assert_eq!(
            &profile[..7],
            ["0", "hash", "user:1:profile", "112", "listpack", "3", "14"]
        );
        assert!(rows.iter().any(|r| !r[expiry].is_empty()));
        assert!(rows
            .iter()
            .any(|r| r[key] == "bin:\\xff\\xfe\\x00\\x01key" && r.last().unwrap() == "true"));
    }

    #[test]
    fn many_keys_make_several_row_groups_and_filters_apply() {
        let mut b = RdbBuilder::new();
        for i in 0..300_000u32 {
            b = b.string(
                format!("k:{i}").as_bytes(),
                b"v",
                (i % 2 == 0).then_some(1_900_000_000_000),
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let dump = dir.path().join("many.rdb");
        std::fs::write(&dump, b.finish()).unwrap();
        let path = dir.path().join("many.parquet");
        let reader = parquet(&path, &[dump.to_str().unwrap()]);
        assert_eq!(reader.metadata().file_metadata().num_rows(), 300_000);
        assert!(reader.metadata().num_row_groups() >= 3);
        let mut n = 0;
        for (i, row) in reader.get_row_iter(None).unwrap().enumerate() {
            let row = as_text(&row.unwrap());
            assert_eq!(row[2], format!("k:{i}"));
            assert_eq!(row[8], if i % 2 == 0 { "1900000000000" } else { "" });
            n += 1;
        }
        assert_eq!(n, 300_000);
        let filtered = parquet(&dir.path().join("f.parquet"), &[ALL_TYPES, "--type", "zset"]);
        let zsets = csv(&[ALL_TYPES, "--type", "zset"]).len() as i64;
        assert_eq!(filtered.metadata().file_metadata().num_rows(), zsets);
        // An empty result is still a valid file.
        let none = parquet(&dir.path().join("none.parquet"), &[ALL_TYPES, "--db", "99"]);
        assert_eq!(none.metadata().file_metadata().num_rows(), 0);
        let _ = root();
    }
}
