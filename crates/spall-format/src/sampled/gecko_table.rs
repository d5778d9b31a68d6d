//! The Firefox profile's tables, read alike in both of its forms: rows through a `schema`
//! (the raw format) or one array per column (the processed format). The profile's threads
//! ([`gecko`](super::gecko)) and their markers ([`gecko_markers`](super::gecko_markers))
//! read their tables through it.

use serde_json::{Map, Value};

/// A table: rows read through a schema (raw), or columns (processed).
pub(super) enum Table<'v> {
    Rows {
        schema: &'v Map<String, Value>,
        data: &'v [Value],
    },
    Cols(&'v Map<String, Value>),
}

/// One column of a [`Table`].
pub(super) enum Column<'v> {
    Rows { data: &'v [Value], index: usize },
    Col(&'v [Value]),
    None,
}

impl<'v> Column<'v> {
    pub(super) fn get(&self, i: usize) -> Option<&'v Value> {
        let v = match self {
            Column::Rows { data, index } => data.get(i)?.as_array()?.get(*index)?,
            Column::Col(c) => c.get(i)?,
            Column::None => return None,
        };
        (!v.is_null()).then_some(v)
    }
}

impl<'v> Table<'v> {
    pub(super) fn of(v: Option<&'v Value>) -> Option<Table<'v>> {
        let o = v?.as_object()?;
        match (o.get("schema").and_then(Value::as_object), o.get("data")) {
            (Some(schema), Some(Value::Array(data))) => Some(Table::Rows { schema, data }),
            (Some(_), _) => None,
            (None, _) => Some(Table::Cols(o)),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Table::Rows { data, .. } => data.len(),
            // The length, never past the longest column.
            Table::Cols(o) => {
                let longest = (o.values().filter_map(Value::as_array).map(Vec::len))
                    .max()
                    .unwrap_or(0);
                let length = o.get("length").and_then(Value::as_u64);
                length.map_or(longest, |n| (n as usize).min(longest))
            }
        }
    }

    pub(super) fn col(&self, name: &str) -> Column<'v> {
        match self {
            Table::Rows { schema, data } => match schema.get(name).and_then(Value::as_u64) {
                Some(index) => Column::Rows {
                    data,
                    index: index as usize,
                },
                None => Column::None,
            },
            Table::Cols(o) => match o.get(name) {
                Some(Value::Array(c)) => Column::Col(c),
                _ => Column::None,
            },
        }
    }
}
