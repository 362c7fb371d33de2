//! Key bytes kept in a summary: stored as they are, serialized as UTF-8 text
//! when valid and as hex otherwise, so summaries round-trip through JSON.

use serde::{Deserialize, Serialize};

/// A key's bytes as kept in a summary; any bytes, not necessarily UTF-8.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct KeyName(pub Box<[u8]>);

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum KeyRepr {
    Key(String),
    KeyHex(String),
}

impl KeyName {
    /// A copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        KeyName(bytes.into())
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::borrow::Borrow<[u8]> for KeyName {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl Serialize for KeyName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => KeyRepr::Key(text.to_owned()),
            Err(_) => KeyRepr::KeyHex(self.0.iter().map(|b| format!("{b:02x}")).collect()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match KeyRepr::deserialize(d)? {
            KeyRepr::Key(text) => Ok(KeyName(text.into_bytes().into())),
            KeyRepr::KeyHex(hex) => {
                if hex.len() % 2 != 0 {
                    return Err(serde::de::Error::custom("odd-length key_hex"));
                }
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map(|b| KeyName(b.into()))
                    .map_err(serde::de::Error::custom)
            }
        }
    }
}

/// Serializes a map keyed by [`KeyName`] as a list of `[key, value]` pairs
/// (JSON object keys must be strings; key names may not be UTF-8).
pub mod as_pairs {
    use std::collections::HashMap;
    use std::hash::BuildHasher;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::KeyName;

    /// Sorted by name, so the output does not depend on hashing.
    pub fn serialize<V: Serialize, H, S: Serializer>(
        map: &HashMap<KeyName, V, H>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut pairs: Vec<(&KeyName, &V)> = map.iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        s.collect_seq(pairs)
    }

    pub fn deserialize<'de, V: Deserialize<'de>, H: BuildHasher + Default, D: Deserializer<'de>>(
        d: D,
    ) -> Result<HashMap<KeyName, V, H>, D::Error> {
        Ok(Vec::<(KeyName, V)>::deserialize(d)?.into_iter().collect())
    }
}
