//! The glue: each [`Source`] as an eponymous SQLite virtual table (its module name is its
//! table name, so no `CREATE VIRTUAL TABLE` is needed), with `xBestIndex` handing the
//! constraints a source can use to its `plan`.

#![allow(unsafe_code)] // rusqlite's VTab traits are unsafe to implement (see SAFETY below).

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::ffi;
use rusqlite::types::Value;
use rusqlite::vtab::{
    eponymous_only_module, Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConnection,
    VTabCursor,
};
use rusqlite::{Connection, Result};

use crate::source::{plain, Constraint, Op, RowIter, Source};

/// `idx_num` bits: deliver rows ordered by the column in the plan's `G` token, descending.
const GROUPED: c_int = 1;
const DESC: c_int = 2;

/// Registers `source` as the table (or table-valued function) `name`.
pub(crate) fn register(db: &Connection, name: &str, source: Arc<dyn Source>) -> Result<()> {
    db.create_module(name, eponymous_only_module::<Table>(), Some(source))
}

// SAFETY (both types): `#[repr(C)]` with SQLite's base struct first, as rusqlite requires.
#[repr(C)]
struct Table {
    base: ffi::sqlite3_vtab,
    source: Arc<dyn Source>,
}

#[repr(C)]
struct Cursor {
    base: ffi::sqlite3_vtab_cursor,
    source: Arc<dyn Source>,
    cons: Vec<Constraint>,
    rows: RowIter,
    /// The current row; `None` past the end.
    row: Option<u64>,
    /// Rows of an expanded row (`args`), and which one is current.
    sub: Vec<Vec<Value>>,
    sub_i: usize,
}

fn op(o: IndexConstraintOp) -> Option<Op> {
    Some(match o {
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => Op::Eq,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => Op::Gt,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => Op::Ge,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => Op::Lt,
        IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => Op::Le,
        _ => return None,
    })
}

unsafe impl<'vtab> VTab<'vtab> for Table {
    type Aux = Arc<dyn Source>;
    type Cursor = Cursor;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Arc<dyn Source>>,
        _args: &[&[u8]],
    ) -> Result<(String, Table)> {
        let source = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("no trace attached".into()))?;
        Ok((
            source.schema(),
            Table {
                base: ffi::sqlite3_vtab::default(),
                source,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<()> {
        // Every usable constraint on a pushable column goes to `filter` in order, encoded in
        // idx_str as "column op" pairs; SQLite still checks each row (omit stays false).
        let mut used = Vec::new();
        for (i, c) in info.constraints().enumerate() {
            let col = c.column();
            if !c.is_usable() || col < 0 || !self.source.pushable(col as usize) {
                continue;
            }
            if let Some(o) = op(c.operator()) {
                used.push((i, col as usize, o));
            }
        }
        let mut plan = String::new();
        for (n, &(i, col, o)) in used.iter().enumerate() {
            let mut u = info.constraint_usage(i);
            u.set_argv_index(n as c_int + 1);
            u.set_omit(self.source.exact(col));
            plan.push_str(&format!("{col}{} ", o.code()));
        }
        // An ORDER BY (or GROUP BY) on one column the source can order by: delivered in
        // that order, SQLite aggregates as rows stream by instead of sorting them all.
        let order: Vec<(c_int, bool)> = info
            .order_bys()
            .map(|o| (o.column(), o.is_order_by_desc()))
            .collect();
        if let [(col, desc)] = order[..] {
            if col >= 0 && self.source.groupable(col as usize) {
                info.set_order_by_consumed(true);
                info.set_idx_num(GROUPED | if desc { DESC } else { 0 });
                plan.push_str(&format!("{col}G "));
            }
        }
        let cons: Vec<(usize, Op)> = used.iter().map(|&(_, c, o)| (c, o)).collect();
        let est = self.source.estimate(&cons);
        info.set_estimated_cost(est);
        info.set_estimated_rows(est.min(i64::MAX as f64) as i64);
        info.set_idx_str(&plan);
        Ok(())
    }

    fn open(&'vtab mut self) -> Result<Cursor> {
        Ok(Cursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            source: self.source.clone(),
            cons: Vec::new(),
            rows: plain(Vec::new()),
            row: None,
            sub: Vec::new(),
            sub_i: 0,
        })
    }
}

impl Cursor {
    /// Moves to the next row `keep` accepts, expanding it if the source expands rows.
    fn advance(&mut self) {
        self.sub.clear();
        for row in self.rows.by_ref() {
            if !self.cons.is_empty() && !self.source.keep(row, &self.cons) {
                continue;
            }
            match self.source.sub_rows(row) {
                None => {
                    self.row = Some(row);
                    return;
                }
                Some(rows) if !rows.is_empty() => {
                    self.sub = rows;
                    self.sub_i = 0;
                    self.row = Some(row);
                    return;
                }
                Some(_) => {}
            }
        }
        self.row = None;
    }
}

unsafe impl VTabCursor for Cursor {
    fn filter(&mut self, idx_num: c_int, idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        self.cons.clear();
        let mut group = None;
        let mut n = 0;
        for tok in idx_str.unwrap_or("").split_whitespace() {
            let (col, code) = tok.split_at(tok.len() - 1);
            let Ok(col) = col.parse::<usize>() else {
                continue;
            };
            if code == "G" {
                group = Some(col);
                continue;
            }
            let value: Value = args.get(n)?;
            n += 1;
            if let Some(op) = code.chars().next().and_then(Op::from_code) {
                self.cons.push(Constraint { col, op, value });
            }
        }
        self.rows = match group {
            Some(col) if idx_num & GROUPED != 0 => {
                self.source.grouped(&self.cons, col, idx_num & DESC != 0)
            }
            _ => plain(self.source.plan(&self.cons)),
        };
        self.advance();
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.sub_i + 1 < self.sub.len() {
            self.sub_i += 1;
            return Ok(());
        }
        self.advance();
        Ok(())
    }

    fn eof(&self) -> bool {
        self.row.is_none()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> Result<()> {
        let i = i.max(0) as usize;
        if let Some(row) = self.sub.get(self.sub_i) {
            return ctx.set_result(&row.get(i).cloned().unwrap_or(Value::Null));
        }
        if let Some(c) = self.rows.cached(i) {
            return ctx.set_result(&c);
        }
        ctx.set_result(&self.source.column(self.row.unwrap_or(0), i))
    }

    fn rowid(&self) -> Result<i64> {
        Ok(self.row.unwrap_or(0) as i64)
    }
}
