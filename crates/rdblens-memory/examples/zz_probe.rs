use rdblens_memory::{estimate, Profile};
use rdblens_parser::{Rdb, Scratch};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).unwrap();
    let mut p = Profile::parse_target(&args[2]).unwrap();
    if args.len() > 3 { p.quantum = args[3].parse().unwrap(); }
    let rdb = Rdb::new(&data).unwrap();
    let mut s = Scratch::new();
    for e in rdb.entries() {
        let e = e.unwrap();
        let est = estimate(&e, &p, &mut s).unwrap();
        let k = e.key_bytes().unwrap();
        println!("{}\t{}\t{}\t{:?}", e.db, String::from_utf8_lossy(&k).replace('\t', "\\t").replace('\n', "\\n"), est.encoding, est.memory);
    }
}
