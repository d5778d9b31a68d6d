//! The whole decode's one pass over a Gecko profile: the objects and arrays on the way to
//! a thread's tables (the root or a `profile`, `threads`, `processes`, a thread, a table)
//! read as their members and items, string tables as strings, anything else the decode
//! reads kept as its text ([`RawValue`]), so no part of the file is scanned more than
//! twice (once here, once where a table's rows are read into columns).

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::gecko_table::{scalars, thread_table, Key, Strings};

/// A value as far as it was read.
#[derive(Debug)]
pub(super) enum Node<'a> {
    Obj(Vec<(Cow<'a, str>, Node<'a>)>),
    Arr(Vec<Node<'a>>),
    /// A string (a thread or subprocess given as JSON text).
    Str(Cow<'a, str>),
    Text(&'a RawValue),
    /// A string table: `None` if not an array.
    Strings(Option<Strings>),
    /// Another scalar, or an array or object where the other was read.
    Other,
}

/// What a value is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    /// The file's top: a profile, or a recording with one under `profile`.
    Root,
    Profile,
    Threads,
    Processes,
    Thread,
    Table,
    Strings,
    Text,
}

impl Level {
    /// What a member of an object read as `self` is read as.
    fn member(self, key: &str) -> Level {
        match (self, key) {
            (Level::Root, "profile") => Level::Profile,
            (Level::Root | Level::Profile, "threads") => Level::Threads,
            (Level::Root | Level::Profile, "processes") => Level::Processes,
            (Level::Thread, "stringTable" | "stringArray") => Level::Strings,
            (Level::Thread, k) if thread_table(k).is_some() => Level::Table,
            _ => Level::Text,
        }
    }
}

impl<'a> Node<'a> {
    /// JSON text read as `level`.
    pub(super) fn parse(text: &'a [u8], level: Level) -> serde_json::Result<Node<'a>> {
        let mut d = serde_json::Deserializer::from_slice(text);
        let n = level.deserialize(&mut d)?;
        d.end()?;
        Ok(n)
    }

    /// An object's members (none for anything else).
    pub(super) fn members(&self) -> &[(Cow<'a, str>, Node<'a>)] {
        match self {
            Node::Obj(m) => m,
            _ => &[],
        }
    }

    /// A member's last value.
    pub(super) fn get(&self, key: &str) -> Option<&Node<'a>> {
        (self.members().iter().rev())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// A member's last value, taken out (the earlier ones dropped).
    pub(super) fn take(&mut self, key: &str) -> Option<Node<'a>> {
        let Node::Obj(m) = self else {
            return None;
        };
        let mut last = None;
        m.retain_mut(|(k, v)| {
            if k != key {
                return true;
            }
            last = Some(std::mem::replace(v, Node::Other));
            false
        });
        last
    }

    /// The text of a value kept as text.
    pub(super) fn text(&self) -> Option<&'a RawValue> {
        match self {
            Node::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        match self {
            Level::Text => Ok(Node::Text(<&RawValue>::deserialize(d)?)),
            Level::Strings => Ok(Node::Strings(Strings::read(d)?)),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Gecko profile's part")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Node<'de>, A::Error> {
        if matches!(self, Level::Threads | Level::Processes) {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Node::Other);
        }
        let mut out = Vec::new();
        while let Some(Key(k)) = m.next_key()? {
            let v = m.next_value_seed(self.member(&k))?;
            out.push((k, v));
        }
        Ok(Node::Obj(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Node<'de>, A::Error> {
        let item = match self {
            Level::Threads => Level::Thread,
            Level::Processes => Level::Profile,
            _ => {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(Node::Other);
            }
        };
        let mut out = Vec::new();
        while let Some(n) = s.next_element_seed(item)? {
            out.push(n);
        }
        Ok(Node::Arr(out))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(s.to_string())))
    }

    scalars!(numbers Node::Other);
}
