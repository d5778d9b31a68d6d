//! The Firefox profile's tables, read alike in both of its forms (rows through a `schema`
//! in the raw format, one array per column in the processed one) straight into typed
//! columns: indexes as `u32`, times and weights as `f64`, lines as `Option<u32>`, marker
//! payloads as JSON objects; no JSON value per row or cell. The whole decode
//! ([`gecko`](super::gecko)) feeds a [`TableBuilder`] a table's members whole, the
//! stream ([`gecko_stream`](super::gecko_stream)) a row or a cell at a time, through the
//! same seeds, so both read a table alike.
//!
//! A cell keeps what its readers asked of the JSON value: an index is an unsigned integer
//! (else none), a time any number, a line an unsigned integer that fits `u32`. A table's
//! length is its rows (raw), or its `length` but never past its longest array (processed);
//! a column shorter than that has no value past its end.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A visitor's scalar visits, each giving `$v`: strings too, unless `numbers` (bools and
/// null with the numbers).
macro_rules! scalars {
    (numbers $v:expr) => {
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v)
        }

        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
    ($v:expr) => {
        scalars!(numbers $v);

        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

pub(super) use scalars;

/// An index cell that is null, absent or not an unsigned integer.
const NONE: u32 = u32::MAX;
/// An index past any table (none has this many rows: each would take 4 GiB a column).
const FAR: u32 = u32::MAX - 1;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Index,
    Num,
    Line,
    Json,
}

/// The columns a table's readers look at, by name.
pub(super) type Spec = &'static [(&'static str, Kind)];

pub(super) const SAMPLES: Spec = &[
    ("stack", Kind::Index),
    ("time", Kind::Num),
    ("timeDeltas", Kind::Num),
    ("weight", Kind::Num),
];
pub(super) const STACKS: Spec = &[("frame", Kind::Index), ("prefix", Kind::Index)];
pub(super) const FRAMES: Spec = &[
    ("location", Kind::Index),
    ("func", Kind::Index),
    ("line", Kind::Line),
];
pub(super) const FUNCS: Spec = &[
    ("name", Kind::Index),
    ("fileName", Kind::Index),
    ("lineNumber", Kind::Line),
];
pub(super) const MARKERS: Spec = &[
    ("name", Kind::Index),
    ("startTime", Kind::Num),
    ("endTime", Kind::Num),
    ("phase", Kind::Index),
    ("category", Kind::Index),
    ("data", Kind::Json),
    ("time", Kind::Num),
];

/// A thread's table's columns, by its member's name.
pub(super) fn thread_table(key: &str) -> Option<Spec> {
    Some(match key {
        "samples" => SAMPLES,
        "stackTable" => STACKS,
        "frameTable" => FRAMES,
        "funcTable" => FUNCS,
        "markers" => MARKERS,
        _ => return None,
    })
}

#[derive(Debug)]
enum Col {
    Index(Vec<u32>),
    Num(Vec<f64>),
    Line(Vec<Option<u32>>),
    Json(Vec<Option<Value>>),
}

impl Col {
    fn new(kind: Kind) -> Col {
        match kind {
            Kind::Index => Col::Index(Vec::new()),
            Kind::Num => Col::Num(Vec::new()),
            Kind::Line => Col::Line(Vec::new()),
            Kind::Json => Col::Json(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Col::Index(v) => v.len(),
            Col::Num(v) => v.len(),
            Col::Line(v) => v.len(),
            Col::Json(v) => v.len(),
        }
    }

    /// Adds a cell (a payload is taken out of `s`).
    fn push(&mut self, s: &mut Scalar) {
        match self {
            Col::Index(v) => v.push(match *s {
                Scalar::U(n) => u32::try_from(n).map_or(FAR, |n| n.min(FAR)),
                _ => NONE,
            }),
            Col::Num(v) => v.push(match *s {
                Scalar::U(n) => n as f64,
                Scalar::I(n) => n as f64,
                Scalar::F(x) => x,
                Scalar::Null => f64::NAN,
                // Not a number, yet there: told from null by its sign.
                _ => -f64::NAN,
            }),
            Col::Line(v) => v.push(match *s {
                Scalar::U(n) => u32::try_from(n).ok(),
                _ => None,
            }),
            Col::Json(v) => v.push(match std::mem::replace(s, Scalar::Other) {
                Scalar::Obj(o) => Some(o),
                _ => None,
            }),
        }
    }

    fn push_none(&mut self) {
        self.push(&mut Scalar::Null);
    }
}

/// A column of indexes.
#[derive(Clone, Copy)]
pub(super) struct Ix<'t>(&'t [u32]);

impl Ix<'_> {
    #[inline]
    pub(super) fn get(self, i: usize) -> Option<u64> {
        self.0.get(i).filter(|&&v| v != NONE).map(|&v| u64::from(v))
    }
}

/// A column of numbers.
#[derive(Clone, Copy)]
pub(super) struct Num<'t>(&'t [f64]);

impl Num<'_> {
    #[inline]
    pub(super) fn get(self, i: usize) -> Option<f64> {
        self.0.get(i).copied().filter(|v| !v.is_nan())
    }

    /// Whether the cell is there (not null), a number or not.
    #[inline]
    pub(super) fn has(self, i: usize) -> bool {
        self.0
            .get(i)
            .is_some_and(|v| !v.is_nan() || v.is_sign_negative())
    }
}

/// A column of lines.
#[derive(Clone, Copy)]
pub(super) struct Lines<'t>(&'t [Option<u32>]);

impl Lines<'_> {
    #[inline]
    pub(super) fn get(self, i: usize) -> Option<u32> {
        self.0.get(i).copied().flatten()
    }
}

/// A column of payloads (objects).
#[derive(Clone, Copy)]
pub(super) struct Json<'t>(&'t [Option<Value>]);

impl<'t> Json<'t> {
    #[inline]
    pub(super) fn get(self, i: usize) -> Option<&'t Value> {
        self.0.get(i)?.as_ref()
    }
}

/// A table read into its [`Spec`]'s columns.
#[derive(Debug)]
pub(super) struct Table {
    spec: Spec,
    len: usize,
    cols: Vec<Col>,
    /// The samples table's `weightType`.
    pub(super) weight_type: Option<String>,
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn col(&self, name: &str) -> Option<&Col> {
        let i = self.spec.iter().position(|(n, _)| *n == name)?;
        self.cols.get(i)
    }

    pub(super) fn ix(&self, name: &str) -> Ix<'_> {
        match self.col(name) {
            Some(Col::Index(v)) => Ix(v),
            _ => Ix(&[]),
        }
    }

    pub(super) fn num(&self, name: &str) -> Num<'_> {
        match self.col(name) {
            Some(Col::Num(v)) => Num(v),
            _ => Num(&[]),
        }
    }

    pub(super) fn lines(&self, name: &str) -> Lines<'_> {
        match self.col(name) {
            Some(Col::Line(v)) => Lines(v),
            _ => Lines(&[]),
        }
    }

    pub(super) fn json(&self, name: &str) -> Json<'_> {
        match self.col(name) {
            Some(Col::Json(v)) => Json(v),
            _ => Json(&[]),
        }
    }

    /// A table given whole (the whole decode), as its members: `None` if it has a schema
    /// and no `data` array. A member given twice counts by its last value, as serde_json's
    /// map keeps it.
    pub(super) fn of_members(spec: Spec, m: &Members<'_>) -> Option<Table> {
        let mut b = TableBuilder::new(spec);
        b.weight_type(m.get("weightType").map(value).as_ref());
        let schema = m.get("schema").map(value);
        if schema.as_ref().is_some_and(Value::is_object) {
            b.schema(schema.as_ref()?).ok()?;
            let data = m.get("data").filter(|d| d.get().starts_with('['))?;
            b.rows(data).ok()?;
        } else {
            for (k, v) in m.unique() {
                if v.get().starts_with('[') {
                    b.column(k, v).ok()?;
                } else if k == "length" {
                    b.member(k, &value(v));
                }
            }
        }
        b.finish()
    }
}

/// A cell as its readers see it.
enum Scalar {
    U(u64),
    I(i64),
    F(f64),
    /// An object, kept only for a payload column.
    Obj(Value),
    Null,
    Other,
}

/// One cell; `json`: an object is kept.
#[derive(Clone, Copy)]
struct CellSeed {
    json: bool,
}

impl<'de> DeserializeSeed<'de> for CellSeed {
    type Value = Scalar;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CellSeed {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a cell")
    }

    fn visit_u64<E>(self, n: u64) -> Result<Scalar, E> {
        Ok(Scalar::U(n))
    }

    // As serde_json's `Number` keeps an `i64`: unsigned unless negative.
    fn visit_i64<E>(self, n: i64) -> Result<Scalar, E> {
        Ok(u64::try_from(n).map_or(Scalar::I(n), Scalar::U))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Scalar, E> {
        Ok(Scalar::F(x))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }

    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Scalar, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Scalar, A::Error> {
        if self.json {
            let v = Value::deserialize(de::value::MapAccessDeserializer::new(m))?;
            return Ok(Scalar::Obj(v));
        }
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

/// A table being read: its schema and rows (raw), or its columns (processed).
#[derive(Debug)]
pub(super) struct TableBuilder {
    spec: Spec,
    cols: Vec<Col>,
    /// Each column's place in a row, once a schema (an object) is read.
    schema: Option<Vec<Option<u64>>>,
    /// Rows read, once `data` is read through the schema.
    rows: Option<usize>,
    /// `data` read as a column, before any schema.
    data_column: bool,
    /// The column being read a cell at a time, and its cells so far.
    at: Option<usize>,
    cells: usize,
    longest: usize,
    length: Option<u64>,
    weight_type: Option<String>,
}

impl TableBuilder {
    pub(super) fn new(spec: Spec) -> TableBuilder {
        TableBuilder {
            spec,
            cols: spec.iter().map(|&(_, k)| Col::new(k)).collect(),
            schema: None,
            rows: None,
            data_column: false,
            at: None,
            cells: 0,
            longest: 0,
            length: None,
            weight_type: None,
        }
    }

    /// Whether `data` is read as rows through a schema.
    pub(super) fn has_schema(&self) -> bool {
        self.schema.is_some()
    }

    /// The `schema` member: an object makes the table rows (an error after `data` was
    /// read as a column, which the whole decode never does); an array counts as a column.
    pub(super) fn schema(&mut self, v: &Value) -> Result<(), ()> {
        match v {
            Value::Object(o) if !self.data_column && self.rows.is_none() => {
                let at = |n: &str| o.get(n).and_then(Value::as_u64);
                self.schema = Some(self.spec.iter().map(|(n, _)| at(n)).collect());
                Ok(())
            }
            Value::Object(_) => Err(()),
            Value::Array(a) => {
                self.longest = self.longest.max(a.len());
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A member that is not an array (nor `schema`).
    pub(super) fn member(&mut self, key: &str, v: &Value) {
        match key {
            "length" => self.length = v.as_u64(),
            "weightType" => self.weight_type(Some(v)),
            _ => {}
        }
    }

    fn weight_type(&mut self, v: Option<&Value>) {
        self.weight_type = v.and_then(Value::as_str).map(String::from);
    }

    /// Every row of `data` (the whole decode).
    fn rows(&mut self, data: &RawValue) -> serde_json::Result<()> {
        let mut d = serde_json::Deserializer::from_str(data.get());
        d.deserialize_seq(Each {
            b: self,
            rows: true,
        })
    }

    /// One row of `data` (the stream).
    pub(super) fn row(&mut self, b: &[u8]) -> Result<(), ()> {
        let mut d = serde_json::Deserializer::from_slice(b);
        RowSeed(self).deserialize(&mut d).map_err(drop)?;
        d.end().map_err(drop)
    }

    /// A column, whole (the whole decode).
    fn column(&mut self, key: &str, col: &RawValue) -> serde_json::Result<()> {
        self.column_start(key);
        let mut d = serde_json::Deserializer::from_str(col.get());
        d.deserialize_seq(Each {
            b: self,
            rows: false,
        })?;
        self.column_end();
        Ok(())
    }

    /// A column read a cell at a time (the stream) starts.
    pub(super) fn column_start(&mut self, key: &str) {
        self.data_column |= key == "data";
        self.at = self.spec.iter().position(|(n, _)| *n == key);
        self.cells = 0;
    }

    /// One cell of the column started.
    pub(super) fn cell(&mut self, b: &[u8]) -> Result<(), ()> {
        let mut d = serde_json::Deserializer::from_slice(b);
        self.cell_from(&mut d).map_err(drop)?;
        d.end().map_err(drop)
    }

    fn cell_from<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        let col = self.at.and_then(|i| self.cols.get_mut(i));
        let json = col.as_ref().is_some_and(|c| matches!(c, Col::Json(_)));
        let mut s = CellSeed { json }.deserialize(d)?;
        if let Some(c) = col {
            c.push(&mut s);
        }
        self.cells += 1;
        Ok(())
    }

    /// The column started ends.
    pub(super) fn column_end(&mut self) {
        self.longest = self.longest.max(self.cells);
        self.at = None;
    }

    /// The table, if it is one: rows through a schema, or columns.
    pub(super) fn finish(self) -> Option<Table> {
        let len = match (&self.schema, self.rows) {
            (Some(_), rows) => rows?,
            (None, _) => {
                let n = self
                    .length
                    .map_or(self.longest as u64, |n| n.min(self.longest as u64));
                n as usize
            }
        };
        Some(Table {
            spec: self.spec,
            len,
            cols: self.cols,
            weight_type: self.weight_type,
        })
    }
}

/// Every row of `data` (`rows`), or every cell of a column.
struct Each<'b> {
    b: &'b mut TableBuilder,
    rows: bool,
}

impl<'de> Visitor<'de> for Each<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        if self.rows {
            while s.next_element_seed(RowSeed(self.b))?.is_some() {}
        } else {
            while s.next_element_seed(CellIn(self.b))?.is_some() {}
        }
        Ok(())
    }
}

/// One cell into the column started.
struct CellIn<'b>(&'b mut TableBuilder);

impl<'de> DeserializeSeed<'de> for CellIn<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.cell_from(d)
    }
}

/// One row through the schema: each column's cell from its place (none if the row is not
/// an array or too short).
struct RowSeed<'b>(&'b mut TableBuilder);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let b = self.0;
        let n = b.rows.unwrap_or(0);
        d.deserialize_any(RowSeed(&mut *b))?;
        for (c, at) in b.cols.iter_mut().zip(b.schema.iter().flatten()) {
            if at.is_some() && c.len() == n {
                c.push_none();
            }
        }
        b.rows = Some(n + 1);
        Ok(())
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    scalars!(());

    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        let b = self.0;
        let Some(schema) = &b.schema else {
            return Ok(());
        };
        let mut pos = 0u64;
        loop {
            let here = |c: &Option<u64>| *c == Some(pos);
            let json = (schema.iter().zip(b.spec)).any(|(c, (_, k))| here(c) && *k == Kind::Json);
            let Some(mut cell) = s.next_element_seed(CellSeed { json })? else {
                return Ok(());
            };
            for (c, at) in b.cols.iter_mut().zip(schema) {
                if here(at) {
                    c.push(&mut cell);
                }
            }
            pos += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// A string table: each entry a string, or none.
#[derive(Debug, Default)]
pub(super) struct Strings(Vec<Option<Box<str>>>);

impl Strings {
    pub(super) fn get(&self, i: u64) -> Option<&str> {
        self.0.get(usize::try_from(i).ok()?)?.as_deref()
    }

    /// A string table given whole, if it is an array.
    pub(super) fn of_raw(raw: &RawValue) -> Option<Strings> {
        let mut s = Strings::default();
        let mut d = serde_json::Deserializer::from_str(raw.get());
        d.deserialize_any(StringsIn(&mut s)).ok()?.then_some(s)
    }

    /// A string table read from `d`: `None` if it is not an array.
    pub(super) fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Strings>, D::Error> {
        let mut s = Strings::default();
        Ok(d.deserialize_any(StringsIn(&mut s))?.then_some(s))
    }

    /// One entry (the stream).
    pub(super) fn push(&mut self, b: &[u8]) -> Result<(), ()> {
        let mut d = serde_json::Deserializer::from_slice(b);
        let s = StrSeed.deserialize(&mut d).map_err(drop)?;
        d.end().map_err(drop)?;
        self.0.push(s);
        Ok(())
    }

    /// `shared.stringArray`, from the `shared` member's text.
    pub(super) fn shared(raw: &RawValue) -> Option<Strings> {
        Strings::of_raw(Members::of(raw).get("stringArray")?)
    }
}

/// A string table's entries; whether it was an array.
struct StringsIn<'s>(&'s mut Strings);

impl<'de> Visitor<'de> for StringsIn<'_> {
    scalars!(false);

    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
        while let Some(v) = s.next_element_seed(StrSeed)? {
            self.0 .0.push(v);
        }
        Ok(true)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<bool, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

/// A string, or none for any other value.
struct StrSeed;

impl<'de> DeserializeSeed<'de> for StrSeed {
    type Value = Option<Box<str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrSeed {
    scalars!(numbers None);

    type Value = Option<Box<str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(s.into()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Some(s.into_boxed_str()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// An object's members, each as its text (the whole decode reads only what it needs of
/// them); a key given twice counts by its last value, as serde_json's map keeps it.
#[derive(Debug, Default)]
pub(super) struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    pub(super) fn new(m: Vec<(Cow<'a, str>, &'a RawValue)>) -> Members<'a> {
        Members(m)
    }

    /// The members of JSON text that is an object; `None` if it is other JSON.
    pub(super) fn parse(text: &'a [u8]) -> serde_json::Result<Option<Members<'a>>> {
        serde_json::from_slice::<MaybeMembers<'a>>(text).map(|m| m.0)
    }

    /// The members of a value (none if it is not an object).
    pub(super) fn of(raw: &'a RawValue) -> Members<'a> {
        Members::parse(raw.get().as_bytes())
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// A member's last value.
    pub(super) fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// Each key's last member, in order.
    fn unique(&self) -> impl Iterator<Item = (&str, &'a RawValue)> {
        let m = &self.0;
        (m.iter().enumerate())
            .filter(|(i, (k, _))| !m[i + 1..].iter().any(|(l, _)| l == k))
            .map(|(_, (k, v))| (&**k, *v))
    }
}

/// A value's JSON (already checked: null only past serde_json's nesting limit).
pub(super) fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// Parsed from any JSON: an object's members, or `None`.
struct MaybeMembers<'a>(Option<Members<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeMembers<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MembersIn(std::marker::PhantomData))
    }
}

struct MembersIn<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for MembersIn<'a> {
    scalars!(MaybeMembers(None));

    type Value = MaybeMembers<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Key(k)) = m.next_key()? {
            out.push((k, m.next_value::<&'de RawValue>()?));
        }
        Ok(MaybeMembers(Some(Members(out))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeMembers(None))
    }
}

/// A key, borrowed from the text unless it has an escape.
pub(super) struct Key<'a>(pub(super) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}
