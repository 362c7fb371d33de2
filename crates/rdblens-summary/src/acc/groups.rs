//! Values by a short name (a type, an encoding, an on-disk type), for the
//! handful of names every key is counted under.
//!
//! Written by hand rather than kept in a `BTreeMap<String, _>`: four sorted
//! maps cost a string comparison per tree level per key (4% of a report).
//! The names are nearly always `&'static str`, so a lookup compares
//! pointers first and compares text only for a name seen the first time
//! (or an owned one, such as a module type). Readers and the summary file
//! see the names sorted, as a map.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Values by short name, kept in insertion order and read sorted by name.
#[derive(Clone, Debug)]
pub struct Groups<V> {
    entries: Vec<(Cow<'static, str>, V)>,
}

impl<V> Default for Groups<V> {
    fn default() -> Self {
        Groups { entries: Vec::new() }
    }
}

impl<V: Default> Groups<V> {
    /// The value of a name that lives for the whole program: found by
    /// address after its first insertion.
    #[inline]
    pub fn slot_static(&mut self, name: &'static str) -> &mut V {
        self.slot_static_or(name, V::default)
    }

    /// The value of any name, compared as text.
    pub fn slot(&mut self, name: &str) -> &mut V {
        let i = self.find_or_insert(name, || Cow::Owned(name.to_string()));
        &mut self.entries[i].1
    }

    fn find_or_insert(&mut self, name: &str, owned: impl FnOnce() -> Cow<'static, str>) -> usize {
        self.find_or_insert_with(name, owned, V::default)
    }

    /// Adds `other`'s values into this one's, name by name.
    pub fn merge_with(&mut self, other: Groups<V>, mut merge: impl FnMut(&mut V, V)) {
        for (name, v) in other.entries {
            let i = self.find_or_insert(&name, || name.clone());
            merge(&mut self.entries[i].1, v);
        }
    }
}

impl<V> Groups<V> {
    /// [`Groups::slot_static`] for values without a default: a name seen
    /// the first time starts at `make()`.
    #[inline]
    pub fn slot_static_or(&mut self, name: &'static str, make: impl FnOnce() -> V) -> &mut V {
        let found = self
            .entries
            .iter()
            .position(|(n, _)| std::ptr::eq(n.as_ptr(), name.as_ptr()) && n.len() == name.len());
        let i = match found {
            Some(i) => i,
            None => self.find_or_insert_with(name, || Cow::Borrowed(name), make),
        };
        &mut self.entries[i].1
    }

    /// Adds `other`'s values into this one's, name by name; a name this
    /// one lacks starts at `make()`.
    pub fn merge_or(&mut self, other: Groups<V>, make: impl Fn() -> V, mut merge: impl FnMut(&mut V, V)) {
        for (name, v) in other.entries {
            let i = self.find_or_insert_with(&name, || name.clone(), &make);
            merge(&mut self.entries[i].1, v);
        }
    }

    fn find_or_insert_with(
        &mut self,
        name: &str,
        owned: impl FnOnce() -> Cow<'static, str>,
        make: impl FnOnce() -> V,
    ) -> usize {
        match self.entries.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.entries.push((owned(), make()));
                self.entries.len() - 1
            }
        }
    }

    /// The values, in insertion order, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// Names and values, sorted by name.
    pub fn iter(&self) -> std::vec::IntoIter<(&str, &V)> {
        let mut sorted: Vec<(&str, &V)> = self.entries.iter().map(|(n, v)| (n.as_ref(), v)).collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        sorted.into_iter()
    }

    /// The values, in insertion order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The value of `name`; `None` when nothing was counted under it.
    pub fn get(&self, name: &str) -> Option<&V> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V: Clone> Groups<V> {
    /// A sorted map of the same names and values.
    pub fn to_map(&self) -> BTreeMap<String, V> {
        self.iter().map(|(n, v)| (n.to_string(), v.clone())).collect()
    }
}

impl<'g, V> IntoIterator for &'g Groups<V> {
    type Item = (&'g str, &'g V);
    type IntoIter = std::vec::IntoIter<(&'g str, &'g V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Equal when they hold the same names with equal values, whatever the
/// order the names were first seen in.
impl<V: PartialEq> PartialEq for Groups<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<V: Eq> Eq for Groups<V> {}

impl<V: Serialize> Serialize for Groups<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Groups<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, V>::deserialize(d)?;
        Ok(Groups {
            entries: map.into_iter().map(|(n, v)| (Cow::Owned(n), v)).collect(),
        })
    }
}

impl<V> FromIterator<(String, V)> for Groups<V> {
    /// Later values of a repeated name replace earlier ones, as in a map.
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let map: BTreeMap<String, V> = iter.into_iter().collect();
        Groups {
            entries: map.into_iter().map(|(n, v)| (Cow::Owned(n), v)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_and_owned_names_meet_in_one_entry() {
        let mut g: Groups<u64> = Groups::default();
        *g.slot_static("hash") += 1;
        *g.slot("hash") += 2;
        let owned = String::from("hash");
        *g.slot(&owned) += 4;
        *g.slot_static("set") += 8;
        assert_eq!(g.len(), 2);
        assert_eq!(g.get("hash"), Some(&7));
        // Sorted for readers, whatever the insertion order.
        let names: Vec<&str> = g.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["hash", "set"]);
    }

    #[test]
    fn an_owned_first_name_is_still_found_by_a_static_one() {
        let mut g: Groups<u64> = Groups::default();
        *g.slot(&String::from("zset")) += 1;
        *g.slot_static("zset") += 1;
        assert_eq!(g.len(), 1);
        assert_eq!(g.get("zset"), Some(&2));
    }

    #[test]
    fn serializes_as_a_sorted_map_and_reads_back_equal() {
        let mut g: Groups<u64> = Groups::default();
        *g.slot_static("string") = 3;
        *g.slot_static("hash") = 5;
        let json = serde_json::to_string(&g).unwrap(); // ok: unit test
        assert_eq!(json, r#"{"hash":5,"string":3}"#);
        let back: Groups<u64> = serde_json::from_str(&json).unwrap(); // ok: unit test
        assert_eq!(back, g);
        let mut other: Groups<u64> = Groups::default();
        *other.slot_static("hash") = 5;
        assert_ne!(other, g);
    }

    #[test]
    fn merge_adds_by_name() {
        let mut a: Groups<u64> = Groups::default();
        *a.slot_static("list") = 1;
        let mut b: Groups<u64> = Groups::default();
        *b.slot_static("set") = 2;
        *b.slot_static("list") = 3;
        a.merge_with(b, |x, y| *x += y);
        assert_eq!(
            a.to_map(),
            BTreeMap::from([("list".into(), 4), ("set".into(), 2)])
        );
    }
}
