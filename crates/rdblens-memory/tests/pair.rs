//! The allocator detection estimates each sampled key for two builds of one
//! target at once (`Estimator::estimate_pair`): one collector rounds both
//! builds' allocations. Its two estimates must be exactly the ones each
//! build's own estimator gives, on every key of every fixture, for targets
//! of every era, with the writer's limits and with limits that make lists
//! compress and blobs convert, counting blobs by their header or not.

mod support;

use rdblens_memory::{Estimate, Estimator, Family, Profile, ServerVersion};
use rdblens_parser::{Rdb, Scratch, ValueVisitor};

struct Nothing;
impl ValueVisitor for Nothing {}

/// Targets of every era of the model (legacy dicts, 7.x listpacks, field
/// TTLs, 8.x key objects, Valkey's hashtables and embedded skiplist nodes).
fn targets() -> Vec<Profile> {
    [
        (Family::Redis, "3.2.13"),
        (Family::Redis, "5.0.14"),
        (Family::Redis, "6.2.14"),
        (Family::Redis, "7.0.15"),
        (Family::Redis, "7.2.4"),
        (Family::Redis, "7.4.5"),
        (Family::Redis, "8.4.0"),
        (Family::Valkey, "8.0.1"),
        (Family::Valkey, "8.1.1"),
        (Family::Valkey, "9.1.2"),
    ]
    .into_iter()
    .map(|(family, v)| Profile::new(family, ServerVersion::parse(v).expect("version"), 8)) // ok: test
    .collect()
}

/// `profile` with interior list nodes compressed and small entry limits,
/// so quicklist nodes carry LZF sizes and stored blobs convert on load.
fn squeezed(mut profile: Profile) -> Profile {
    for (name, value) in [
        ("list-compress-depth", "1"),
        ("hash-max-listpack-entries", "3"),
        ("set-max-intset-entries", "3"),
        ("set-max-listpack-entries", "3"),
        ("zset-max-listpack-entries", "3"),
        ("hash-max-listpack-value", "8"),
        ("list-max-listpack-size", "4"),
    ] {
        profile.limits.set(name, value).expect("limit parses"); // ok: test
    }
    profile
}

fn with_quantum(profile: &Profile, quantum: u64) -> Profile {
    let mut p = profile.clone();
    p.quantum = quantum;
    p
}

fn one(
    estimator: &Estimator<'_>,
    entry: &rdblens_parser::Entry<'_>,
    scratch: &mut Scratch,
) -> Option<Estimate> {
    estimator.estimate_with(entry, scratch, &mut Nothing).ok()
}

#[test]
fn one_visit_estimates_both_builds_as_each_build_alone() {
    let mut failures = Vec::new();
    let mut compared = 0u64;
    // Keys where the two builds' estimates differ: the pair is not
    // trivially one estimate twice.
    let mut builds_differ = 0u64;
    let mut scratch = Scratch::new();
    for file in support::fixture_files() {
        let data = std::fs::read(&file).expect("fixture reads"); // ok: test
        let rdb = Rdb::new(&data).expect("fixture parses"); // ok: test
        let entries: Vec<_> = rdb.entries().filter_map(Result::ok).collect();
        let mut profiles = vec![support::profile_for(&file)];
        profiles.extend(targets());
        let squeezed_too: Vec<Profile> = profiles.iter().cloned().map(squeezed).collect();
        profiles.extend(squeezed_too);
        for profile in &profiles {
            let (p8, p16) = (with_quantum(profile, 8), with_quantum(profile, 16));
            for header_counts in [false, true] {
                let e8 = Estimator::new(&p8).counting_by_header(header_counts);
                let e16 = Estimator::new(&p16).counting_by_header(header_counts);
                for entry in &entries {
                    let alone = (one(&e8, entry, &mut scratch), one(&e16, entry, &mut scratch));
                    let pair = e8.estimate_pair(&e16, entry, &mut scratch).ok();
                    let pair = pair.map_or((None, None), |p| (Some(p.0), Some(p.1)));
                    compared += 1;
                    builds_differ +=
                        u64::from(alone.0.as_ref().map(|e| e.memory) != alone.1.as_ref().map(|e| e.memory));
                    if pair != alone {
                        failures.push(format!(
                            "{} offset {} for {} (header counts {header_counts}): pair {pair:?}, alone {alone:?}",
                            file.display(),
                            entry.offset,
                            profile.name(),
                        ));
                    }
                }
            }
        }
    }
    // Two targets apart (no shared collector): each estimate its own too.
    let file = support::fixtures_dir().join("redis-7.4.5/all-types.rdb");
    let data = std::fs::read(&file).expect("fixture reads"); // ok: test
    let rdb = Rdb::new(&data).expect("fixture parses"); // ok: test
    let targets = targets();
    let (old, new) = (Estimator::new(&targets[1]), Estimator::new(&targets[9]));
    for entry in rdb.entries().filter_map(Result::ok) {
        let alone = (one(&old, &entry, &mut scratch), one(&new, &entry, &mut scratch));
        let pair = old.estimate_pair(&new, &entry, &mut scratch).ok();
        if pair.map_or((None, None), |p| (Some(p.0), Some(p.1))) != alone {
            failures.push(format!(
                "{} offset {}: 5.0 and Valkey 9.1 paired",
                file.display(),
                entry.offset
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} keys differ:\n{}",
        failures.len(),
        failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(compared > 100_000, "only {compared} keys compared");
    assert!(
        builds_differ > compared / 4,
        "builds differ on only {builds_differ} of {compared} keys"
    );
}
