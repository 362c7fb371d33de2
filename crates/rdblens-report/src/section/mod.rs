//! The registry of report sections: one list, `report_sections!` below,
//! from which [`Section`] (its variants, `--section` names, help, the
//! default set and the accumulators each reads) is generated, and the
//! models of the sections defined in a file of their own
//! ([`RegisteredModels`]).
//!
//! A section defined in its own file (`section/NAME.rs`) implements
//! [`SectionModel`]: how its model is built from a summary (serialized as
//! its JSON field) and how it reads as a [`SectionView`] (headings, text,
//! lists of keys, tables), which the terminal table renderer and the HTML
//! page both draw; it needs no code in either. Adding one is that file and
//! one entry in the list (plus its accumulator, if it needs a new one:
//! `rdblens_summary::acc`), as docs/architecture.md describes.

mod composition;
mod hot_and_big;

use rdblens_summary::acc::top::SharedRecord;
use rdblens_summary::{Accumulators, Summary};
use serde::Serialize;

/// What a section's model is built from besides the summary (the report's
/// options a section may read; kept narrow so that a section's file
/// depends on this module only).
pub struct BuildContext {
    /// Rows per list (`--top`).
    pub top: usize,
}

/// A section defined in its own file: its model and its view.
pub trait SectionModel<'s>: Serialize + Sized {
    /// The model of the section for `s`; `None` when there is nothing to
    /// show (the JSON then has no field, the tables and page no section).
    fn build(s: &'s Summary, cx: &BuildContext) -> Option<Self>;

    /// What the table renderer and the HTML page show of it.
    fn view(&self) -> SectionView<'_>;
}

/// A section as the renderers draw it.
pub struct SectionView<'v> {
    /// The section's name (its `--section` name): the page's anchor.
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// One line saying what it shows.
    pub intro: String,
    /// What follows, in order.
    pub parts: Vec<ViewPart<'v>>,
}

/// A part of a [`SectionView`].
pub enum ViewPart<'v> {
    /// A paragraph.
    Text(String),
    /// Key records, as the big-key tables show them (name, type, memory...).
    Keys {
        /// The table's id in the page.
        id: &'static str,
        /// Its heading.
        title: &'static str,
        /// The records, in order.
        keys: &'v [SharedRecord],
    },
    /// A table of figures.
    Table {
        /// The table's id in the page.
        id: &'static str,
        /// Its heading.
        title: &'static str,
        /// The columns.
        columns: &'static [Column],
        /// The rows, one cell per column.
        rows: Vec<Vec<ViewCell>>,
    },
}

/// A column of a [`ViewPart::Table`].
pub struct Column {
    /// Its label.
    pub title: &'static str,
    /// Whether it holds numbers (right-aligned, sorted by value).
    pub numeric: bool,
}

/// A cell of a [`ViewPart::Table`].
pub enum ViewCell {
    /// Text, shown as it is.
    Text(String),
    /// A count, shown with thousands separators.
    Count(u64),
    /// Bytes, shown in binary units.
    Bytes(u64),
}

/// Declares [`Section`] and [`RegisteredModels`] from the list of sections:
/// `Variant = "name", default: bool, reads: [accumulator flags], help;`,
/// and `model: field: Type` for a section defined in its own file.
macro_rules! report_sections {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal, default: $default:literal,
        reads: [$($acc:ident),*], help: $help:literal
        $(, model: $field:ident: $model:ty)?;
    )*) => {
        /// Report sections, selectable with `--section`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Section {
            $( $(#[$doc])* $variant, )*
        }

        impl Section {
            /// Every section, in the order they are shown.
            pub const EVERY: &'static [Section] = &[$(Section::$variant),*];

            /// Whether a report shows it when `--section` is not given.
            pub const fn is_default(self) -> bool {
                match self { $( Section::$variant => $default, )* }
            }

            /// The name `--section` takes.
            pub fn name(self) -> &'static str {
                match self { $( Section::$variant => $name, )* }
            }

            /// What it shows, in a few words (the `--section` help).
            pub fn help(self) -> &'static str {
                match self { $( Section::$variant => $help, )* }
            }

            /// The accumulators the model reads to build this section (the
            /// figures every report shows come on top).
            pub fn accumulators(self) -> Accumulators {
                match self {
                    $( Section::$variant => Accumulators {
                        $( $acc: true, )*
                        ..Accumulators::NONE
                    }, )*
                }
            }
        }

        /// The models of the sections defined in their own file, each
        /// present when its section is shown and has something to show
        /// (flattened into the report's JSON).
        #[derive(Serialize)]
        pub struct RegisteredModels<'s> {
            $($(
                #[allow(missing_docs)]
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $field: Option<$model>,
            )?)*
        }

        impl<'s> RegisteredModels<'s> {
            /// The models of the sections `shown` names.
            pub(crate) fn build(s: &'s Summary, shown: &[Section], cx: &BuildContext) -> Self {
                RegisteredModels {
                    $($(
                        $field: shown
                            .contains(&Section::$variant)
                            .then(|| <$model as SectionModel>::build(s, cx))
                            .flatten(),
                    )?)*
                }
            }

            /// Their views, in the order of the list.
            pub fn views(&self) -> Vec<SectionView<'_>> {
                #[allow(unused_mut)]
                let mut views = Vec::new();
                $($(
                    if let Some(m) = &self.$field {
                        views.push(m.view());
                    }
                )?)*
                views
            }
        }
    };
}

report_sections! {
    /// One row per input file, and how unevenly they are loaded.
    Shards = "shards", default: true, reads: [top, slots],
        help: "one row per input file and how unevenly they are loaded";
    /// The biggest keys, overall and per type.
    Bigkeys = "bigkeys", default: true, reads: [top],
        help: "the biggest keys, overall and per type";
    /// Memory per type and encoding, and the compact-encoding limits.
    Encodings = "encodings", default: true, reads: [limits],
        help: "memory per type and encoding, keys near or over the compact limits";
    /// Time to live.
    Ttl = "ttl", default: true, reads: [ttl], help: "keys by time to live";
    /// Expiry times and clusters (named from the namespace tree).
    Expiry = "expiry", default: true, reads: [expiry, prefixes],
        help: "expiry times and clusters";
    /// Key-name lengths and problems.
    Keys = "keys", default: true, reads: [key_names], help: "key-name lengths and problems";
    /// The namespace tree.
    Prefixes = "prefixes", default: true, reads: [prefixes], help: "memory per namespace";
    /// Cluster slots and hash tags.
    Slots = "slots", default: true, reads: [slots], help: "cluster slots and hash tags";
    /// Idle times and access frequencies (LRU/LFU dumps).
    Access = "access", default: true, reads: [access],
        help: "idle times and LFU counters (LRU/LFU dumps)";
    /// The keys both big and hot, and big and cold (LRU/LFU dumps).
    HotAndBig = "hot-and-big", default: true, reads: [heat],
        help: "the biggest hot keys and the biggest cold ones, memory to reclaim (LRU/LFU dumps)",
        model: hot_and_big: hot_and_big::HotAndBig<'s>;
    /// The design-rule audit (rdblens-audit): what it reads, the top lists
    /// by memory too (hashtag-skew names the big key that makes a slot
    /// hot from them), not the access lists or limit examples.
    Findings = "findings", default: true, reads: [top, rules, prefixes, ttl, expiry, slots],
        help: "the design-rule audit";
    /// What the biggest top-level namespaces are made of, by type and
    /// encoding; not in the default set.
    Composition = "composition", default: false, reads: [composition],
        help: "memory of the biggest namespaces by type and encoding, only when named",
        model: composition: composition::CompositionJson<'s>;
    /// Split plans (rdblens-advice); not in the default set, asked for
    /// with `--section plans` (or `rdblens advise`).
    Plans = "plans", default: false, reads: [top, rules, prefixes, ttl, expiry, slots],
        help: "split plans (docs/advisor.md), only when named";
}

pub use composition::{CompositionJson, MixJson, NamespaceMix, Totals};
pub use hot_and_big::{HeatGroupJson, HotAndBig};

/// The number of sections shown when `--section` is not given.
const DEFAULT_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < Section::EVERY.len() {
        if Section::EVERY[i].is_default() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The number of sections shown only when named.
const OPTIONAL_COUNT: usize = Section::EVERY.len() - DEFAULT_COUNT;

/// The sections for which `is_default` is `wanted`, in the list's order.
const fn pick<const N: usize>(wanted: bool) -> [Section; N] {
    let mut out = [Section::Shards; N];
    let (mut i, mut n) = (0, 0);
    while i < Section::EVERY.len() {
        if Section::EVERY[i].is_default() == wanted {
            out[n] = Section::EVERY[i];
            n += 1;
        }
        i += 1;
    }
    out
}

impl Section {
    /// The default sections, in the order they are shown.
    pub const ALL: [Section; DEFAULT_COUNT] = pick(true);

    /// Sections shown only when asked for.
    pub const OPTIONAL: [Section; OPTIONAL_COUNT] = pick(false);

    /// What `sections` need, together.
    pub fn accumulators_for(sections: &[Section]) -> Accumulators {
        sections
            .iter()
            .fold(Accumulators::NONE, |acc, s| acc.either(s.accumulators()))
    }

    /// The section named `s` (as [`Section::name`] spells it).
    pub fn parse(s: &str) -> Option<Section> {
        Section::EVERY.iter().copied().find(|sec| sec.name() == s)
    }
}
