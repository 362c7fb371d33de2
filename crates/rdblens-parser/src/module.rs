//! Module values: the 64-bit module type id and the self-describing opcode
//! stream every type-7 value, MODULE_AUX body and KEY_META value is written in.

use crate::error::{ErrorKind, Result};
use crate::reader::Reader;

const CHARSET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A module data type: 9-character name and encoding version, packed in 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModuleId(pub u64);

impl ModuleId {
    /// The 9-character type name (e.g. `vectorset`, `ReJSON-RL`).
    pub fn name(self) -> String {
        self.name_bytes().iter().map(|&c| c as char).collect()
    }

    /// The name without allocating.
    pub fn name_bytes(self) -> [u8; 9] {
        let mut out = [0u8; 9];
        for (i, c) in out.iter_mut().enumerate() {
            *c = CHARSET[((self.0 >> (58 - 6 * i)) & 63) as usize];
        }
        out
    }

    /// The encoding version the module saved the value with (0-1023).
    pub fn encver(self) -> u32 {
        (self.0 & 1023) as u32
    }
}

/// One item of a module's opcode stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModuleItem<'a> {
    /// Opcode 1: a signed integer.
    SignedInt(i64),
    /// Opcode 2: an unsigned integer.
    UnsignedInt(u64),
    /// Opcode 3: a 4-byte float.
    Float(f32),
    /// Opcode 4: an 8-byte double.
    Double(f64),
    /// Opcode 5: a string.
    String(crate::RdbString<'a>),
}

/// A module value (type 7): its id and the raw opcode stream, walked lazily.
#[derive(Clone, Copy, Debug)]
pub struct ModuleValue<'a> {
    /// The module data type that wrote the value.
    pub id: ModuleId,
    /// The opcode stream including its terminating EOF opcode.
    pub body: &'a [u8],
    pub(crate) body_offset: u64,
}

impl<'a> ModuleValue<'a> {
    /// Serialized size of the module's data (excluding the 64-bit id).
    pub fn len(&self) -> usize {
        self.body.len()
    }

    /// True when the module saved no items (the body is only the EOF opcode).
    pub fn is_empty(&self) -> bool {
        self.body.len() <= 1
    }

    /// The element count for module types whose layout is known: Redis 8
    /// vector sets save the dimension, then the element count (VCARD).
    pub fn element_count(&self) -> Option<u64> {
        if &self.id.name_bytes() != b"vectorset" {
            return None;
        }
        match self.items().nth(1) {
            Some(Ok(ModuleItem::UnsignedInt(n))) => Some(n),
            _ => None,
        }
    }

    /// The items the module saved, in order.
    pub fn items(&self) -> ModuleItems<'a> {
        ModuleItems {
            r: Reader::new(self.body, self.body_offset),
            done: false,
        }
    }
}

/// Items of a module opcode stream in order, up to its EOF opcode. After an error it yields nothing more.
pub struct ModuleItems<'a> {
    r: Reader<'a>,
    done: bool,
}

impl<'a> Iterator for ModuleItems<'a> {
    type Item = Result<ModuleItem<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match read_item(&mut self.r) {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

fn read_item<'a>(r: &mut Reader<'a>) -> Result<Option<ModuleItem<'a>>> {
    let at = r.pos();
    let op = r.length("module opcode")?;
    Ok(Some(match op {
        0 => return Ok(None),
        1 => ModuleItem::SignedInt(r.length("module signed int")? as i64),
        2 => ModuleItem::UnsignedInt(r.length("module unsigned int")?),
        3 => ModuleItem::Float(f32::from_le_bytes(r.array("module float")?)),
        4 => ModuleItem::Double(f64::from_le_bytes(r.array("module double")?)),
        5 => ModuleItem::String(r.string("module string")?),
        _ => {
            return Err(r.err_at(
                at,
                ErrorKind::BadModule(format!("unknown module opcode {op} (expected 0-5)")),
            ))
        }
    }))
}

/// Skips an opcode stream up to and including its EOF opcode.
pub(crate) fn skip_opcodes(r: &mut Reader<'_>) -> Result<()> {
    while read_item(r)?.is_some() {}
    Ok(())
}
