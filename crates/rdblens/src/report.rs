//! `rdblens report`: analyse one or more dumps and print tables or JSON.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use rdblens_analysis::{analyze_bytes, KeyFilter, Options, Summary};
use rdblens_memory::Profile;
use rdblens_parser::{RdbFile, TypeKind};
use rdblens_report::{ReportOptions, Section};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    Memory,
    Serialized,
    Elements,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Dump files (several: one combined report).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Keys per top list.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Output format; tables are plain (no box drawing) when not on a terminal.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// The first big-key table's order.
    #[arg(long, value_enum, default_value = "memory")]
    pub sort: SortBy,
    /// Only these databases (repeatable).
    #[arg(long = "db")]
    pub dbs: Vec<u64>,
    /// Only these types: string, list, set, zset, hash, stream, module (repeatable).
    #[arg(long = "type")]
    pub types: Vec<String>,
    /// Only keys matching this Redis glob (as SCAN MATCH; bytes-safe).
    #[arg(long = "match")]
    pub pattern: Option<String>,
    /// Only keys starting with this prefix.
    #[arg(long)]
    pub prefix: Option<String>,
    /// Namespace separator.
    #[arg(long, default_value = ":")]
    pub separator: String,
    /// Namespace levels aggregated (1-4).
    #[arg(long, default_value_t = 2)]
    pub depth: usize,
    /// A redis.conf whose encoding limits apply (e.g. hash-max-listpack-entries).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Server to estimate memory for, e.g. redis-7.2, valkey-8.1 (default: the writer of the file).
    #[arg(long)]
    pub target: Option<String>,
    /// jemalloc quantum of the target: 8 (bundled jemalloc) or 16 (distro libjemalloc).
    #[arg(long, value_parser = ["8", "16"])]
    pub jemalloc_quantum: Option<String>,
    /// Reference time for TTLs: unix seconds or ms (default: the snapshot's ctime).
    #[arg(long)]
    pub now: Option<i64>,
    /// Expiry histogram bucket: 1s, 1m, 1h, 1d or auto.
    #[arg(long, default_value = "auto")]
    pub bucket: String,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Write the report here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Sections to show (comma-separated): bigkeys,encodings,ttl,expiry,keys,prefixes,slots,access,findings.
    #[arg(long, value_delimiter = ',')]
    pub section: Vec<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_kind(s: &str) -> Result<TypeKind> {
    Ok(match s {
        "string" => TypeKind::String,
        "list" => TypeKind::List,
        "set" => TypeKind::Set,
        "zset" => TypeKind::ZSet,
        "hash" => TypeKind::Hash,
        "stream" => TypeKind::Stream,
        "module" => TypeKind::Module,
        "array" => TypeKind::Array,
        other => {
            bail!("unknown type '{other}' (expected string, list, set, zset, hash, stream, module, array)")
        }
    })
}

fn parse_bucket(s: &str) -> Result<Option<i64>> {
    Ok(match s {
        "auto" => None,
        "1s" => Some(1_000),
        "1m" => Some(60_000),
        "1h" => Some(3_600_000),
        "1d" => Some(86_400_000),
        other => bail!("unknown bucket '{other}' (expected 1s, 1m, 1h, 1d or auto)"),
    })
}

/// Reads `name value` lines of a redis.conf; limits are applied, the rest kept for the audit.
pub fn read_config(path: &PathBuf) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, value) = l.split_once(char::is_whitespace)?;
            Some((
                name.to_ascii_lowercase(),
                value.trim().trim_matches('"').to_string(),
            ))
        })
        .collect())
}

pub fn options(args: &ReportArgs) -> Result<Options> {
    let separator = match args.separator.as_bytes() {
        [b] => *b,
        _ => bail!("--separator must be a single byte, got {:?}", args.separator),
    };
    if !(1..=4).contains(&args.depth) {
        bail!("--depth must be 1-4, got {}", args.depth);
    }
    let profile = match &args.target {
        Some(t) => Some(
            Profile::parse_target(t)
                .map_err(anyhow::Error::msg)
                .context("--target")?,
        ),
        None => None,
    };
    let config = match &args.config {
        Some(path) => read_config(path)?,
        None => Vec::new(),
    };
    let now_ms = args.now.map(|n| if n < 100_000_000_000 { n * 1000 } else { n });
    Ok(Options {
        threads: args.threads,
        top: args.top,
        separator,
        prefix_depth: args.depth,
        now_ms,
        profile,
        quantum: args.jemalloc_quantum.as_deref().and_then(|q| q.parse().ok()),
        config,
        filter: KeyFilter {
            dbs: args.dbs.clone(),
            kinds: args.types.iter().map(|t| parse_kind(t)).collect::<Result<_>>()?,
            pattern: args.pattern.as_ref().map(|p| p.as_bytes().to_vec()),
            prefix: args.prefix.as_ref().map(|p| p.as_bytes().to_vec()),
        },
        ..Options::default()
    })
}

/// Analyses every file; the summaries merge into one.
pub fn analyze_files(files: &[PathBuf], opts: &Options) -> Result<Summary> {
    let mut merged: Option<Summary> = None;
    for path in files {
        let file = RdbFile::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        let summary = analyze_bytes(file.bytes(), &path.display().to_string(), opts)
            .with_context(|| path.display().to_string())?;
        match &mut merged {
            None => merged = Some(summary),
            Some(m) => m.merge(summary).map_err(anyhow::Error::msg)?,
        }
    }
    merged.context("no input files")
}

pub fn report_options(args: &ReportArgs, to_terminal: bool) -> Result<ReportOptions> {
    let mut sections = Vec::new();
    for s in &args.section {
        sections.push(Section::parse(s).with_context(|| {
            format!(
                "unknown section '{s}' (expected {})",
                Section::ALL.map(|s| s.name()).join(",")
            )
        })?);
    }
    if sections.is_empty() {
        sections = Section::ALL.to_vec();
    }
    let width = to_terminal.then(|| terminal_width().unwrap_or(120));
    Ok(ReportOptions {
        sections,
        top: args.top,
        bucket_ms: parse_bucket(&args.bucket)?,
        width,
        sort: match args.sort {
            SortBy::Memory => rdblens_report::SortBy::Memory,
            SortBy::Serialized => rdblens_report::SortBy::Serialized,
            SortBy::Elements => rdblens_report::SortBy::Elements,
        },
        ..ReportOptions::default()
    })
}

fn terminal_width() -> Option<u16> {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok())
}

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &ReportArgs) -> Result<(Options, ReportOptions)> {
    Ok((options(args)?, report_options(args, false)?))
}

/// Runs the command; returns the summary for exit-code decisions.
pub fn run(args: &ReportArgs, opts: &Options, report_opts: ReportOptions) -> Result<Summary> {
    let summary = analyze_files(&args.files, opts)?;
    let stdout_tty = args.output.is_none() && std::io::stdout().is_terminal();
    let format = args.format.unwrap_or(Format::Table);
    let report_opts = ReportOptions {
        width: stdout_tty.then(|| terminal_width().unwrap_or(120)),
        ..report_opts
    };
    let text = match format {
        Format::Json => rdblens_report::to_json(&summary, &report_opts)?,
        Format::Table => rdblens_report::to_table(&summary, &report_opts),
    };
    match &args.output {
        Some(path) => std::fs::write(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                out.write_all(b"\n")?;
            }
        }
    }
    Ok(summary)
}
