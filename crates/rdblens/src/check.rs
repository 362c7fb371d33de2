//! `rdblens check`: a full structural walk that also decodes every value,
//! then the checksum.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use rdblens_parser::{escape_bytes, ChecksumStatus, RdbString, Record, Scratch};

#[derive(Default)]
struct DbCounts {
    keys: u64,
    expires: u64,
    hint: Option<(u64, u64)>,
}

fn text(s: &RdbString<'_>) -> String {
    s.to_vec()
        .map(|b| escape_bytes(&b))
        .unwrap_or_else(|e| format!("<{e}>"))
}

pub fn run(path: &Path, skip_unknown: bool, out: &mut impl Write) -> Result<()> {
    let (file, stored) = crate::input::open_input(path, false).context("cannot open")?;
    let rdb = crate::input::read_header(file.bytes(), skip_unknown)?;
    let name = crate::input::input_name(path);
    match stored.compression {
        None if stored.streamed => writeln!(out, "file: {name} ({} bytes received)", file.len())?,
        None => writeln!(out, "file: {name} ({} bytes)", file.len())?,
        Some(c) => {
            writeln!(
                out,
                "file: {name} ({}, {} bytes decompressed)",
                c.name(),
                file.len()
            )?;
            if let Some(why) = &stored.damage {
                writeln!(
                    out,
                    "warning: {}",
                    crate::input::damage_message(c, why, file.len())
                )?;
            }
        }
    }
    let magic = String::from_utf8_lossy(&file.bytes()[..9]);
    writeln!(out, "format: {} RDB {} ({magic})", rdb.dialect(), rdb.version())?;
    if rdb.format().is_newer_than_known() {
        let newest = rdblens_parser::Format::newest_known(rdb.dialect());
        writeln!(
            out,
            "warning: RDB {} is newer than any rdblens knows: read as RDB {newest} (--skip-unknown)",
            rdb.version()
        )?;
    }

    let mut dbs: BTreeMap<u64, DbCounts> = BTreeMap::new();
    let mut types: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut aux = Vec::new();
    let (mut functions, mut module_aux, mut slot_hints) = (0u64, 0u64, 0u64);
    let mut scratch = Scratch::new();
    let mut eof = None;
    let mut current_db = 0;
    for record in rdb.records() {
        match record? {
            Record::Aux { key, value } => aux.push(format!("{}={}", text(&key), text(&value))),
            Record::SelectDb { db } => current_db = db,
            Record::ResizeDb {
                db_size,
                expires_size,
            } => {
                dbs.entry(current_db).or_default().hint = Some((db_size, expires_size));
            }
            Record::Function { .. } | Record::FunctionPreGa { .. } => functions += 1,
            Record::ModuleAux(_) => module_aux += 1,
            Record::SlotInfo { .. } | Record::SlotImport { .. } | Record::Update { .. } => slot_hints += 1,
            Record::Entry(entry) => {
                entry.stats_with(&mut scratch)?;
                let db = dbs.entry(entry.db).or_default();
                db.keys += 1;
                db.expires += u64::from(entry.expiry.is_some());
                *types.entry(entry.value_type.name()).or_default() += 1;
            }
            Record::Eof(e) => eof = Some(e),
        }
    }
    let Some(eof) = eof else {
        bail!("no EOF record");
    };
    for a in &aux {
        writeln!(out, "aux: {a}")?;
    }
    for (db, c) in &dbs {
        write!(out, "db{db}: {} keys, {} with expiry", c.keys, c.expires)?;
        if let Some((k, e)) = c.hint {
            write!(out, " (RESIZEDB hint {k}/{e})")?;
        }
        writeln!(out)?;
    }
    let total: u64 = dbs.values().map(|c| c.keys).sum();
    writeln!(out, "keys: {total}")?;
    for (name, n) in &types {
        writeln!(out, "  {name}: {n}")?;
    }
    writeln!(
        out,
        "functions: {functions}, module aux records: {module_aux}, slot records: {slot_hints}"
    )?;
    if !eof.trailing.is_empty() {
        writeln!(
            out,
            "trailing bytes after the checksum: {} (AOF tail?)",
            eof.trailing.len()
        )?;
    }
    match rdb.checksum_status(&eof) {
        ChecksumStatus::Valid(crc) => writeln!(out, "checksum: valid (crc64 0x{crc:016x})")?,
        ChecksumStatus::Disabled => writeln!(out, "checksum: not recorded (rdbchecksum no)")?,
        ChecksumStatus::Absent => writeln!(out, "checksum: none (RDB version < 5)")?,
        ChecksumStatus::Mismatch { stored, computed } => {
            bail!(
                "checksum mismatch: the file stores 0x{stored:016x}, its bytes hash to 0x{computed:016x} \
                 (EOF at byte offset {})",
                eof.offset
            )
        }
    }
    writeln!(out, "ok")?;
    Ok(())
}
