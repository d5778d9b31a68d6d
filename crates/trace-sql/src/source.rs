//! What every table is, as plain Rust over a [`Trace`]: a [`Source`] of rows numbered by
//! id, which plans the ids a query's constraints can match (the pushdown) and produces one
//! column of one row on demand. The slice tables are in `slices.rs`, the others in
//! `tables.rs`; `vtab.rs` adapts them to SQLite virtual tables.

use std::ops::Range;

use rusqlite::types::Value;
use trace_model::{ExtId, Trace};

/// A comparison SQLite offers to push into a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    pub(crate) fn code(self) -> char {
        match self {
            Op::Eq => '=',
            Op::Gt => '>',
            Op::Ge => 'g',
            Op::Lt => '<',
            Op::Le => 'l',
        }
    }

    pub(crate) fn from_code(c: char) -> Option<Op> {
        Some(match c {
            '=' => Op::Eq,
            '>' => Op::Gt,
            'g' => Op::Ge,
            '<' => Op::Lt,
            'l' => Op::Le,
            _ => return None,
        })
    }
}

/// A constraint on column `col` with its value.
#[derive(Clone, Debug)]
pub(crate) struct Constraint {
    pub col: usize,
    pub op: Op,
    pub value: Value,
}

/// Inclusive integer bounds from the constraints on one column (a superset: SQLite checks
/// every constraint again, so a bound that cannot be expressed is just left out).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub lo: i64,
    pub hi: i64,
}

impl Bounds {
    pub(crate) fn of(cons: &[Constraint], col: usize) -> Bounds {
        let mut b = Bounds {
            lo: i64::MIN,
            hi: i64::MAX,
        };
        for c in cons.iter().filter(|c| c.col == col) {
            let (lo, hi) = match c.value {
                Value::Integer(v) => (v, v),
                Value::Real(f) if f.is_finite() => (f.ceil() as i64, f.floor() as i64),
                // Nothing compares true with NULL: no row (a join on a NULL arg_set_id
                // would otherwise read every row once per outer row).
                Value::Null => (i64::MAX, i64::MIN),
                _ => continue,
            };
            match c.op {
                Op::Eq => {
                    b.lo = b.lo.max(lo);
                    b.hi = b.hi.min(hi);
                }
                Op::Gt => b.lo = b.lo.max(if lo == hi { lo.saturating_add(1) } else { lo }),
                Op::Ge => b.lo = b.lo.max(lo),
                Op::Lt => b.hi = b.hi.min(if lo == hi { hi.saturating_sub(1) } else { hi }),
                Op::Le => b.hi = b.hi.min(hi),
            }
        }
        b
    }

    /// The part of `0..len` inside the bounds.
    pub(crate) fn clamp(self, len: usize) -> Range<usize> {
        let lo = self.lo.clamp(0, len as i64) as usize;
        let hi = self.hi.saturating_add(1).clamp(0, len as i64) as usize;
        lo..hi.max(lo)
    }
}

/// A table-valued function's argument in column `col`: the id of a constraint `col = id`.
pub(crate) fn argument(cons: &[Constraint], col: usize) -> Option<u64> {
    let b = Bounds::of(cons, col);
    (b.lo == b.hi && b.lo >= 0).then_some(b.lo as u64)
}

/// A table-valued function's estimate: a few rows given its argument in column `col`,
/// none to plan without it.
pub(crate) fn argument_estimate(cons: &[(usize, Op)], col: usize) -> f64 {
    if cons.iter().any(|&(c, op)| c == col && op == Op::Eq) {
        10.0
    } else {
        1e18
    }
}

/// One table: rows numbered `0..len`, planned and read column by column.
pub(crate) trait Source: Send + Sync {
    /// The `CREATE TABLE x(...)` SQLite is given.
    fn schema(&self) -> String;
    /// Columns whose constraints `plan` narrows by (others are filtered by SQLite).
    fn pushable(&self, col: usize) -> bool;
    /// Columns whose constraints `plan` applies exactly, so SQLite need not check them
    /// (a table-valued function's hidden argument, which no row holds).
    fn exact(&self, _col: usize) -> bool {
        false
    }
    /// Row ids that may satisfy the constraints, as ascending ranges.
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>>;
    /// Whether `grouped` can deliver rows ordered by `col` (so that an ORDER BY or
    /// GROUP BY on it needs no sort).
    fn groupable(&self, _col: usize) -> bool {
        false
    }
    /// The planned rows ordered by `col` (descending if `desc`).
    fn grouped(&self, cons: &[Constraint], _col: usize, _desc: bool) -> RowIter {
        plain(self.plan(cons))
    }
    /// A cheap check of one planned row against the constraints (false skips it).
    fn keep(&self, _row: u64, _cons: &[Constraint]) -> bool {
        true
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_>;
    /// Rows that are expanded into several (`args`: one per key); `None` for one row each.
    fn sub_rows(&self, _row: u64) -> Option<Vec<Vec<Value>>> {
        None
    }
    /// About how many rows a plan with these constraints reads.
    fn estimate(&self, cons: &[(usize, Op)]) -> f64;
}

/// One cell, borrowing text from the trace where it can (no allocation per row).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Owned(String),
}

impl rusqlite::ToSql for Cell<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Cell::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Cell::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Cell::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Cell::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Cell::Owned(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

/// Row ids as a cursor walks them, possibly with some columns already gathered.
pub(crate) trait Rows: Iterator<Item = u64> + Send {
    /// The current (last returned) row's value of `col`, if the iterator has it at hand.
    fn cached(&self, _col: usize) -> Option<Cell<'_>> {
        None
    }
}

/// Planned ranges, walked in order.
pub(crate) struct Plain(pub std::iter::Flatten<std::vec::IntoIter<Range<u64>>>);

impl Iterator for Plain {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0.next()
    }
}

impl Rows for Plain {}

pub(crate) type RowIter = Box<dyn Rows>;

pub(crate) fn plain(ranges: Vec<Range<u64>>) -> RowIter {
    Box::new(Plain(ranges.into_iter().flatten()))
}

/// One range of row ids.
pub(crate) fn only(lo: u64, hi: u64) -> Vec<Range<u64>> {
    std::iter::once(lo..hi.max(lo)).collect()
}

pub(crate) fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub(crate) fn opt_int<'a>(v: Option<i64>) -> Cell<'a> {
    v.map_or(Cell::Null, Cell::Int)
}

pub(crate) fn ext(t: &Trace, id: ExtId) -> Cell<'_> {
    match id {
        ExtId::Num(n) => Cell::Int(n),
        ExtId::Str(s) => Cell::Text(t.str(s)),
    }
}

pub(crate) fn args_id<'a>(a: trace_model::ArgsId) -> Cell<'a> {
    if a.0 == 0 {
        Cell::Null
    } else {
        Cell::Int(a.0 as i64)
    }
}
