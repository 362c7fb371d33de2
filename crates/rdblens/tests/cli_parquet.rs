//! `rdblens keys --format parquet`: read back with the parquet crate's own
//! reader, one file (`-o FILE.parquet`) has the CSV's rows and columns,
//! typed; a dataset (`-o DIR`) has a part per dump with the versioned
//! dataset schema, in Hive partitions. Without the `parquet` feature (on by
//! default) the format is refused as a usage error.

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

    fn files_under(dir: &Path) -> Vec<String> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                found.extend(files_under(&path).into_iter().map(|f| format!("{name}/{f}")));
            } else {
                found.push(name);
            }
        }
        found.sort();
        found
    }

    fn keys_to_dataset(args: &[&str]) -> assert_cmd::assert::Assert {
        rdblens()
            .arg("keys")
            .args(args)
            .args(["--format", "parquet", "-q"])
            .assert()
    }

    /// A dataset part's row as text.
    fn dataset_row(row: &parquet::record::Row) -> Vec<String> {
        row.get_column_iter()
            .map(|(name, field)| match field {
                // As the CSV writes a key: as it is, or escaped when not
                // UTF-8 or when it holds control characters.
                Field::Bytes(b) => match std::str::from_utf8(b.data()) {
                    Ok(text) if !text.chars().any(char::is_control) => text.to_string(),
                    _ => rdblens_parser::escape_bytes(b.data()),
                },
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

    /// Two dumps into a new directory: a shard each, named after the file,
    /// the snapshot after the earliest ctime; each part has the dataset
    /// schema, its labels and version in the footer, and its dump's keys in
    /// file order, the key as its bytes and as the CSV's text.
    #[test]
    fn a_dataset_has_a_part_per_dump_with_the_versioned_schema() {
        let dir = tempfile::tempdir().unwrap();
        let generated = dir.path().join("node-9.rdb.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(
            &mut gz,
            &RdbBuilder::new()
                .string(b"b", b"2", Some(1_800_000_000_123))
                .string(b"a", b"1", None)
                .finish(),
        )
        .unwrap();
        std::fs::write(&generated, gz.finish().unwrap()).unwrap();
        let dataset = dir.path().join("keys");
        keys_to_dataset(&[
            ALL_TYPES,
            generated.to_str().unwrap(),
            "-o",
            dataset.to_str().unwrap(),
        ])
        .success()
        .stdout("")
        .stderr("");
        // ctime 1700000000 (the generated dump) is earlier than the fixture's.
        let snapshot = "cluster=default/snapshot=2023-11-14T22-13-20Z";
        assert_eq!(
            files_under(&dataset),
            [
                format!("{snapshot}/shard=all-types/part-0.parquet"),
                format!("{snapshot}/shard=node-9/part-0.parquet"),
            ]
        );
        // Nothing staged is left beside it.
        assert_eq!(files_under(dir.path()).len(), 3);

        let part = |shard: &str| {
            SerializedFileReader::new(
                File::open(dataset.join(format!("{snapshot}/shard={shard}/part-0.parquet"))).unwrap(),
            )
            .unwrap()
        };
        let reader = part("all-types");
        let meta = reader.metadata().file_metadata();
        let names: Vec<&str> = meta.schema_descr().columns().iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "db",
                "key",
                "key_text",
                "key_escaped",
                "type",
                "encoding",
                "size_in_bytes",
                "member_count",
                "len_largest_element",
                "rdb_size",
                "expire_at",
                "expiry_ms",
                "ttl_ms",
                "idle_seconds",
                "freq",
                "redis_slot",
                "rdb_type",
                "module"
            ]
        );
        let key = &meta.schema_descr().columns()[1];
        assert_eq!(
            (key.physical_type(), key.logical_type_ref()),
            (PhysicalType::BYTE_ARRAY, None)
        );
        let kv: Vec<(String, String)> = meta
            .key_value_metadata()
            .unwrap()
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.clone().unwrap()))
            .collect();
        let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            kv,
            [
                ("rdblens.schema", "rdblens_key"),
                ("rdblens.schema_version", "1"),
                ("rdblens.cluster", "default"),
                ("rdblens.snapshot", "2023-11-14T22-13-20Z"),
                ("rdblens.shard", "all-types"),
                ("rdblens.source", ALL_TYPES),
            ]
        );

        // Row by row, the CSV's figures in the dataset's columns.
        let rows: Vec<Vec<String>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| dataset_row(&r.unwrap()))
            .collect();
        let csv_rows = csv(&[ALL_TYPES]);
        assert_eq!(rows.len(), 227);
        for (p, c) in rows.iter().zip(&csv_rows) {
            // CSV: database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,
            // expiry,expiry_ms,ttl_ms,serialized_bytes,rdb_type,module,idle_seconds,lfu_freq,slot,key_escaped
            let redis_type = if c[1] == "sortedset" {
                "zset"
            } else {
                c[1].as_str()
            };
            let expected = [
                &c[0], &c[2], &c[2], &c[16], redis_type, &c[4], &c[3], &c[5], &c[6], &c[10], &c[8], &c[8],
                &c[9], &c[13], &c[14], &c[15], &c[11], &c[12],
            ];
            assert_eq!(p, &expected, "{}", c[2]);
        }
        assert!(rows
            .iter()
            .any(|r| r[1] == "bin:\\xff\\xfe\\x00\\x01key" && r[3] == "true"));
        assert!(rows.iter().any(|r| r[4] == "zset"));
        // The key column is the bytes themselves.
        let bin = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap())
            .find_map(|r| match r.get_column_iter().nth(1).unwrap().1 {
                Field::Bytes(b) if b.data().starts_with(b"bin:") => Some(b.data().to_vec()),
                _ => None,
            })
            .unwrap();
        assert_eq!(bin, b"bin:\xff\xfe\x00\x01key");

        let generated_rows: Vec<Vec<String>> = part("node-9")
            .get_row_iter(None)
            .unwrap()
            .map(|r| dataset_row(&r.unwrap()))
            .collect();
        assert_eq!(generated_rows.len(), 2);
        assert_eq!(
            (&generated_rows[0][1][..], &generated_rows[0][10][..]),
            ("b", "1800000000123")
        );
        assert_eq!((&generated_rows[1][1][..], &generated_rows[1][10][..]), ("a", ""));
    }

    /// Later runs add snapshots (or shards) to a dataset; a shard that is
    /// there already is refused before anything is written, and the
    /// dataset is left as it was.
    #[test]
    fn a_dataset_grows_by_snapshots_and_no_shard_is_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let dataset = dir.path().join("keys");
        let out = dataset.to_str().unwrap();
        let run = |snapshot: &str| {
            keys_to_dataset(&[
                ALL_TYPES,
                "--label",
                "node-1",
                "--cluster-label",
                "prod",
                "--snapshot-label",
                snapshot,
                "-o",
                out,
            ])
        };
        run("2026-11-20").success();
        run("2026-11-21").success();
        let before: Vec<(String, Vec<u8>)> = files_under(&dataset)
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(dataset.join(&f)).unwrap();
                (f, bytes)
            })
            .collect();
        assert_eq!(
            before.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
            [
                "cluster=prod/snapshot=2026-11-20/shard=node-1/part-0.parquet",
                "cluster=prod/snapshot=2026-11-21/shard=node-1/part-0.parquet",
            ]
        );
        run("2026-11-21").code(2).stdout("").stderr(format!(
            "rdblens: {out}/cluster=prod/snapshot=2026-11-21/shard=node-1: this shard is in the dataset already: \
             remove it, or give another --snapshot-label or --label\n"
        ));
        let after: Vec<(String, Vec<u8>)> = files_under(&dataset)
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(dataset.join(&f)).unwrap();
                (f, bytes)
            })
            .collect();
        assert!(after == before);
        assert_eq!(
            std::fs::read_dir(&dataset).unwrap().count(),
            1,
            "a staging directory is left"
        );
    }

    #[test]
    fn dataset_flags_are_checked_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("keys");
        let out = out.to_str().unwrap();
        let valkey = "fixtures/rdb/valkey-9.1.2/all-types.rdb";
        let refused = |args: &[&str], message: &str| {
            keys_to_dataset(args)
                .code(2)
                .stdout("")
                .stderr(format!("rdblens: {message}\n"));
        };
        refused(
            &[ALL_TYPES, "--cluster-label", "a/b", "-o", out],
            "--cluster-label \"a/b\": '/' is not allowed in a partition label (letters, digits, `.`, `-`, `_`, `+`)",
        );
        refused(
            &[ALL_TYPES, "--snapshot-label", ".x", "-o", out],
            "--snapshot-label \".x\": a partition label cannot start with `.` or `_` (engines skip such directories)",
        );
        refused(
            &[ALL_TYPES, valkey, "-o", out],
            &format!("{ALL_TYPES} and {valkey} are both shard \"all-types\" of the dataset: give each file its own --label"),
        );
        let one_file = dir.path().join("k.parquet");
        refused(
            &[ALL_TYPES, valkey, "-o", one_file.to_str().unwrap()],
            "--format parquet to one file takes one dump: give -o DIR for a dataset with a shard per dump",
        );
        rdblens()
            .args(["keys", ALL_TYPES, "--snapshot-label", "s1", "-o", out])
            .assert()
            .code(2)
            .stderr("rdblens: --cluster-label and --snapshot-label label a dataset: give --format parquet -o DIR\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
