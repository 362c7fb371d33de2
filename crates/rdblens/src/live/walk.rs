//! `--via dump`: the walk as a stream, what it says when it ends, and the
//! warnings it adds to its input in the report.

use std::io::{self, Read};
use std::sync::{Arc, Mutex};

use rdblens_live::{AccessFigure, DumpOptions, DumpWalk, LiveError, Session, WalkNotes};

use super::{connect_options, server_url, LiveArgs, SETTINGS};

/// A DUMP walk, which says on standard error how it went when it ends.
pub(super) struct Walk {
    walk: DumpWalk,
    notes: Arc<Mutex<WalkNotes>>,
    name: String,
    quiet: bool,
    pub(super) ended: bool,
}

impl Read for Walk {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.walk.read(buf)?;
        if n == 0 && !self.ended {
            self.ended = true;
            if let (false, Ok(notes)) = (self.quiet, self.notes.lock()) {
                eprintln!("rdblens: {}: {}", self.name, walk_summary(&notes));
            }
        }
        Ok(n)
    }
}

/// What a finished walk was: for standard error and the report's warnings.
fn walk_summary(notes: &WalkNotes) -> String {
    let mut text = format!(
        "a DUMP walk, not a point-in-time snapshot: {} keys read over {:.1} s with {} commands \
         (keys written meanwhile may be in either state; expiries as of when each key was read)",
        notes.keys,
        notes.elapsed.as_secs_f64(),
        notes.commands
    );
    if notes.vanished > 0 {
        text.push_str(&format!(
            "; {} keys were gone by the time they were read",
            notes.vanished
        ));
    }
    match (&notes.access_unread, notes.access) {
        (Some(why), _) => text.push_str(&format!("; idle times and LFU counters not read: {why}")),
        (None, Some(AccessFigure::Freq)) => text.push_str("; LFU counters by OBJECT FREQ"),
        (None, Some(AccessFigure::Idle)) => text.push_str("; idle times by OBJECT IDLETIME"),
        (None, None) => {}
    }
    text
}

/// The lines a walk adds to its input's warnings: what it was, and each
/// key the size guard measured instead of reading.
fn walk_warnings(notes: &WalkNotes, max_dump: u64) -> Vec<String> {
    let mut lines = vec![walk_summary(notes)];
    for m in &notes.measured {
        let length = m.length.map_or("unknown".to_string(), |n| n.to_string());
        lines.push(format!(
            "{}: not read (MEMORY USAGE {} bytes is above --max-dump {max_dump}): a {}, length {length}; \
             left out of every figure",
            String::from_utf8_lossy(&m.key),
            m.memory,
            m.kind
        ));
    }
    lines
}

/// The walks of this run, by input name, for [`annotate`].
static WALKS: Mutex<Vec<(String, Arc<Mutex<WalkNotes>>)>> = Mutex::new(Vec::new());

/// Adds each DUMP walk's warnings to its input in `summary`.
pub fn annotate(summary: &mut rdblens_summary::Summary) {
    let max_dump = SETTINGS.get().map_or(64 << 20, |s| s.max_dump);
    let Ok(walks) = WALKS.lock() else { return };
    for (name, notes) in walks.iter() {
        let Ok(notes) = notes.lock() else { continue };
        for file in summary.files.iter_mut().filter(|f| &f.path == name) {
            file.warnings.extend(walk_warnings(&notes, max_dump));
        }
    }
}

pub(super) fn open_walk(text: &str, settings: &LiveArgs, name: &str, quiet: bool) -> Result<Walk, LiveError> {
    let url = server_url(text)?;
    let mut session = Session::open(&url, &connect_options(settings))?;
    // The version and used_memory for the aux fields, where INFO is allowed.
    let facts = session.facts()?.ok();
    let opts = DumpOptions {
        rate: settings.rate,
        max_value_bytes: settings.max_dump,
    };
    let walk = DumpWalk::start(
        session,
        opts,
        facts.as_ref().map(|f| f.version.clone()),
        facts.and_then(|f| f.used_memory),
    )?;
    let notes = walk.notes();
    if let Ok(mut walks) = WALKS.lock() {
        walks.push((name.to_string(), Arc::clone(&notes)));
    }
    Ok(Walk {
        walk,
        notes,
        name: name.to_string(),
        quiet,
        ended: false,
    })
}
