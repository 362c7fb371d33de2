//! Where a dump's compact blobs are (listpacks, ziplists, intsets,
//! quicklist nodes), by RDB value type: how many, how many stored
//! LZF-compressed, and their bytes stored and decompressed. Compressed
//! blobs are what a report decompresses for its element-length figures
//! (docs/performance.md, "What costs what"):
//!
//!     cargo run --release -p rdblens-bench --bin blob-census -- FILE

use std::collections::BTreeMap;

use rdblens_parser::{NodeInfo, RdbFile, Scratch, ValueVisitor};

/// Blob counts and bytes of one value type.
#[derive(Default)]
struct Census {
    blobs: u64,
    bytes: u64,
    compressed: u64,
    compressed_stored: u64,
    compressed_bytes: u64,
}

impl Census {
    fn add(&mut self, o: &Census) {
        self.blobs += o.blobs;
        self.bytes += o.bytes;
        self.compressed += o.compressed;
        self.compressed_stored += o.compressed_stored;
        self.compressed_bytes += o.compressed_bytes;
    }
}

/// Collects the nodes of one value; element calls are summed away.
#[derive(Default)]
struct Nodes(Census);

impl ValueVisitor for Nodes {
    fn node(&mut self, node: &NodeInfo) {
        let c = &mut self.0;
        c.blobs += 1;
        c.bytes += node.len as u64;
        if node.compressed {
            c.compressed += 1;
            c.compressed_stored += node.stored_len as u64;
            c.compressed_bytes += node.len as u64;
        }
    }

    fn summary_only(&self) -> bool {
        true
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: blob-census FILE");
        std::process::exit(2);
    };
    let file = RdbFile::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let rdb = file.rdb().unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut by_type: BTreeMap<&'static str, Census> = BTreeMap::new();
    let mut scratch = Scratch::new();
    for entry in rdb.entries() {
        let entry = entry.unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut nodes = Nodes::default();
        entry
            .visit_with(&mut scratch, &mut nodes)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        if nodes.0.blobs == 0 {
            continue;
        }
        by_type.entry(entry.value_type.name()).or_default().add(&nodes.0);
    }
    println!("file: {path}");
    println!("| value type | blobs | MB | LZF-compressed blobs | their MB stored | their MB decompressed |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut total = Census::default();
    for (name, c) in &by_type {
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            c.blobs,
            mb(c.bytes),
            c.compressed,
            mb(c.compressed_stored),
            mb(c.compressed_bytes)
        );
        total.add(c);
    }
    println!(
        "| all | {} | {} | {} | {} | {} |",
        total.blobs,
        mb(total.bytes),
        total.compressed,
        mb(total.compressed_stored),
        mb(total.compressed_bytes)
    );
}
