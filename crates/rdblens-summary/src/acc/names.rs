//! Key-name lengths and the naming problems of the design rules
//! (key-long, key-chars, key-braces, key-no-namespace).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::hist::Histogram;
use super::top::{Metric, TopKeys};
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyshape::{bad_braces, KeyShape};

/// Examples kept per problem.
const EXAMPLES: usize = 5;

/// A naming problem of the design rules (serialized kebab-case: `key-long`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameProblem {
    /// Longer than 128 bytes.
    KeyLong,
    /// Longer than 30 bytes (statistics only).
    KeyOver30,
    /// Space, tab, newline, other control bytes, quotes, backslash, glob or paren characters.
    KeyChars,
    /// Braces that are not a hash tag, or an empty hash tag.
    KeyBraces,
    /// No namespace separator.
    KeyNoNamespace,
    /// Not valid UTF-8.
    KeyNotUtf8,
}

impl NameProblem {
    /// Every problem, in declaration order (the order of [`KeyNames::problems`]).
    pub const ALL: [NameProblem; 6] = [
        NameProblem::KeyLong,
        NameProblem::KeyOver30,
        NameProblem::KeyChars,
        NameProblem::KeyBraces,
        NameProblem::KeyNoNamespace,
        NameProblem::KeyNotUtf8,
    ];
}

/// The naming problems of `key`, with `separator` as the namespace separator.
pub fn problems(key: &[u8], separator: u8) -> impl Iterator<Item = NameProblem> {
    problems_shaped(key, &KeyShape::of(key, separator))
}

/// [`problems`] for a key whose shape is known: exact byte checks only run
/// for the rare keys whose shape shows a suspect byte.
pub fn problems_shaped(key: &[u8], shape: &KeyShape) -> impl Iterator<Item = NameProblem> {
    let checks = [
        (NameProblem::KeyLong, key.len() > 128),
        (NameProblem::KeyOver30, key.len() > 30),
        (NameProblem::KeyChars, shape.has_bad_chars()),
        (NameProblem::KeyBraces, shape.has_braces() && bad_braces(key)),
        (NameProblem::KeyNoNamespace, shape.first_separator.is_none()),
        (
            NameProblem::KeyNotUtf8,
            !shape.is_ascii() && std::str::from_utf8(key).is_err(),
        ),
    ];
    checks.into_iter().filter_map(|(p, hit)| hit.then_some(p))
}

/// Keys with one naming problem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemCount {
    /// Keys with the problem.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
    /// The first keys in (db, key) order, for examples.
    pub examples: TopKeys,
}

/// Key-name lengths and naming problems.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyNames {
    /// Namespace separator, for [`NameProblem::KeyNoNamespace`].
    pub separator: u8,
    /// Key-name lengths in bytes.
    pub lengths: Histogram,
    /// Keys per naming problem; a problem no key has is absent.
    pub problems: BTreeMap<NameProblem, ProblemCount>,
}

impl KeyNames {
    /// Empty, with `separator` as the namespace separator.
    pub fn new(separator: u8) -> Self {
        KeyNames {
            separator,
            lengths: Histogram::default(),
            problems: BTreeMap::new(),
        }
    }
}

impl KeyNames {
    /// [`Accumulate::add`] for a key whose shape is known.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        self.lengths.add(f.key.len() as u64);
        for p in problems_shaped(f.key, shape) {
            let c = self.problems.entry(p).or_insert_with(|| ProblemCount {
                keys: 0,
                memory: 0,
                examples: TopKeys::new(Metric::KeyOrder, EXAMPLES),
            });
            c.keys += 1;
            c.memory += f.memory;
            c.examples.add(f);
        }
    }
}

impl Accumulate for KeyNames {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_shaped(f, &KeyShape::of(f.key, self.separator))
    }

    fn finish(&mut self) {
        self.problems.values_mut().for_each(|c| c.examples.finish());
    }

    fn merge(&mut self, other: Self) {
        self.lengths.merge(other.lengths);
        for (p, c) in other.problems {
            match self.problems.get_mut(&p) {
                Some(mine) => {
                    mine.keys = mine.keys.saturating_add(c.keys);
                    mine.memory = mine.memory.saturating_add(c.memory);
                    mine.examples.merge(c.examples);
                }
                None => {
                    self.problems.insert(p, c);
                }
            }
        }
    }
}
