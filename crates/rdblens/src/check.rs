//! `rdblens check`: a full structural walk that also decodes every value,
//! then the checksum.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{bail, Result};
use rdblens_parser::{escape_bytes, ChecksumStatus, Format, RdbString, Record, Scratch};

use crate::input::OnePass;

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

/// What the records of a dump hold, counted in file order.
#[derive(Default)]
struct Tally {
    dbs: BTreeMap<u64, DbCounts>,
    types: BTreeMap<&'static str, u64>,
    aux: Vec<String>,
    functions: u64,
    module_aux: u64,
    slot_hints: u64,
    current_db: u64,
    scratch: Scratch,
}

impl Tally {
    /// Counts `record`, decoding an entry's value: its damage is the error.
    fn add(&mut self, record: Record<'_>) -> Result<()> {
        match record {
            Record::Aux { key, value } => self.aux.push(format!("{}={}", text(&key), text(&value))),
            Record::SelectDb { db } => self.current_db = db,
            Record::ResizeDb {
                db_size,
                expires_size,
            } => {
                self.dbs.entry(self.current_db).or_default().hint = Some((db_size, expires_size));
            }
            Record::Function { .. } | Record::FunctionPreGa { .. } => self.functions += 1,
            Record::ModuleAux(_) => self.module_aux += 1,
            Record::SlotInfo { .. } | Record::SlotImport { .. } | Record::Update { .. } => {
                self.slot_hints += 1
            }
            Record::Entry(entry) => {
                entry.stats_with(&mut self.scratch)?;
                let db = self.dbs.entry(entry.db).or_default();
                db.keys += 1;
                db.expires += u64::from(entry.expiry.is_some());
                *self.types.entry(entry.value_type.name()).or_default() += 1;
            }
            Record::Eof(_) => {}
        }
        Ok(())
    }

    /// The lines after the format's: what the records held, the bytes
    /// after the trailer, and the checksum (a mismatch is the error).
    fn write(
        &self,
        out: &mut impl Write,
        trailing: u64,
        checksum: ChecksumStatus,
        eof_offset: u64,
    ) -> Result<()> {
        for a in &self.aux {
            writeln!(out, "aux: {a}")?;
        }
        for (db, c) in &self.dbs {
            write!(out, "db{db}: {} keys, {} with expiry", c.keys, c.expires)?;
            if let Some((k, e)) = c.hint {
                write!(out, " (RESIZEDB hint {k}/{e})")?;
            }
            writeln!(out)?;
        }
        let total: u64 = self.dbs.values().map(|c| c.keys).sum();
        writeln!(out, "keys: {total}")?;
        for (name, n) in &self.types {
            writeln!(out, "  {name}: {n}")?;
        }
        writeln!(
            out,
            "functions: {}, module aux records: {}, slot records: {}",
            self.functions, self.module_aux, self.slot_hints
        )?;
        if trailing > 0 {
            writeln!(out, "trailing bytes after the checksum: {trailing} (AOF tail?)")?;
        }
        match checksum {
            ChecksumStatus::Valid(crc) => writeln!(out, "checksum: valid (crc64 0x{crc:016x})")?,
            ChecksumStatus::Disabled => writeln!(out, "checksum: not recorded (rdbchecksum no)")?,
            ChecksumStatus::Absent => writeln!(out, "checksum: none (RDB version < 5)")?,
            ChecksumStatus::Mismatch { stored, computed } => {
                bail!(
                    "checksum mismatch: the file stores 0x{stored:016x}, its bytes hash to 0x{computed:016x} \
                     (EOF at byte offset {eof_offset})"
                )
            }
        }
        writeln!(out, "ok")?;
        Ok(())
    }
}

pub fn run(path: &Path, skip_unknown: bool, out: &mut impl Write) -> Result<()> {
    let name = crate::input::input_name(path);
    match crate::input::open_once(path, skip_unknown, false)? {
        OnePass::Mapped(file) => {
            let rdb = crate::input::read_header(file.bytes(), skip_unknown)?;
            writeln!(out, "file: {name} ({} bytes)", file.len())?;
            format_lines(rdb.format(), &file.bytes()[..9], out)?;
            let mut tally = Tally::default();
            let mut eof = None;
            for record in rdb.records() {
                let record = record?;
                if let Record::Eof(e) = &record {
                    eof = Some(*e);
                }
                tally.add(record)?;
            }
            let Some(eof) = eof else {
                bail!("no EOF record");
            };
            let checksum = rdb.checksum_status(&eof);
            tally.write(out, eof.trailing.len() as u64, checksum, eof.offset)
        }
        OnePass::Stream {
            mut source,
            compression,
            damage,
        } => {
            // Read once as it arrives: the lines that need the whole stream
            // (its size) are written once it has been read.
            let mut tally = Tally::default();
            let mut eof_offset = None;
            let (end, stopped) = rdblens_engine::walk_stream(&mut source, skip_unknown, |record| {
                if let Record::Eof(e) = &record {
                    eof_offset = Some(e.offset);
                }
                tally.add(record)
            });
            match compression {
                None => writeln!(out, "file: {name} ({} bytes received)", end.size)?,
                Some(c) => {
                    writeln!(
                        out,
                        "file: {name} ({}, {} bytes decompressed)",
                        c.name(),
                        end.size
                    )?;
                    let damage = damage.lock().ok().and_then(|d| d.clone());
                    if let Some((why, decompressed)) = damage {
                        writeln!(
                            out,
                            "warning: {}",
                            crate::input::damage_message(c, &why, decompressed)
                        )?;
                    }
                }
            }
            if let Some((format, magic)) = &end.format {
                format_lines(*format, magic, out)?;
            }
            if let Some(e) = stopped {
                return Err(e);
            }
            if let Some(e) = end.error {
                return Err(e.into());
            }
            if let Some(e) = end.read_error {
                bail!("reading failed after {} bytes: {e}", end.size);
            }
            let (Some(checksum), Some(eof_offset)) = (end.checksum, eof_offset) else {
                bail!("no EOF record");
            };
            tally.write(out, end.trailing, checksum, eof_offset)
        }
    }
}

/// The dump's format, and a warning when it is newer than any known.
fn format_lines(format: Format, magic: &[u8], out: &mut impl Write) -> Result<()> {
    let magic = String::from_utf8_lossy(magic);
    writeln!(out, "format: {} RDB {} ({magic})", format.dialect, format.version)?;
    if format.is_newer_than_known() {
        let newest = Format::newest_known(format.dialect);
        writeln!(
            out,
            "warning: RDB {} is newer than any rdblens knows: read as RDB {newest} (--skip-unknown)",
            format.version
        )?;
    }
    Ok(())
}
