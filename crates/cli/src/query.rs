//! `spall-cli query`: SQL over a trace (trace-sql's tables, Perfetto's names), from the
//! command line, a file, or an interactive shell.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::ValueEnum;
use serde_json::Value;
use trace_sql::{Event, TraceDb};

use crate::stats::csv_field;
use crate::util::{load, Fatal};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns (the first 10,000 rows measure the widths).
    Table,
    /// `{"columns": [...], "rows": [[...], ...]}` per statement that returns columns.
    Json,
    /// RFC 4180, a header line first.
    Csv,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A trace or profile in any format spall reads (listed under `spall-cli --help`),
    /// gzipped or not, told by its content; `-` reads it from standard input.
    pub trace: PathBuf,
    /// The SQL (several statements separated by `;`: each one's rows are printed). With
    /// neither SQL nor -f, an interactive shell.
    pub sql: Option<String>,
    /// Read the SQL from this file (`-` for stdin).
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE.sql",
        conflicts_with = "sql"
    )]
    pub file: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    let piped_sql = a
        .file
        .as_deref()
        .map_or(a.sql.is_none(), |f| f.as_os_str() == "-");
    if a.trace.as_os_str() == "-" && piped_sql {
        return Err(Fatal(
            "the trace comes from standard input, so the SQL cannot: give it as an argument or with -f FILE.sql".into(),
        ));
    }
    let sql = match (&a.sql, &a.file) {
        (Some(s), _) => Some(s.clone()),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            io::Read::read_to_string(&mut io::stdin(), &mut s)?;
            Some(s)
        }
        (None, Some(p)) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| Fatal(format!("{}: cannot read the SQL: {e}", p.display())))?,
        ),
        (None, None) => None,
    };
    let (trace, _) = load(&a.trace)?;
    let db = TraceDb::new(Arc::new(trace)).map_err(|e| Fatal(e.message))?;
    match sql {
        Some(sql) => {
            let mut out = io::BufWriter::new(io::stdout().lock());
            match print(&db, &sql, a.format, &mut out) {
                Ok(()) => {}
                Err(Failure::Sql(e)) => return Err(Fatal(describe(&sql, &e))),
                Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => {}
                Err(Failure::Io(e)) => return Err(Fatal(format!("cannot write: {e}"))),
            }
            let _ = out.flush();
            Ok(ExitCode::SUCCESS)
        }
        None => shell(&db, a.format),
    }
}

enum Failure {
    Sql(trace_sql::Error),
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

/// The error with the query and a caret under the position SQLite reported.
pub fn describe(sql: &str, e: &trace_sql::Error) -> String {
    let Some(at) = e.offset.filter(|&o| o <= sql.len()) else {
        return format!("SQL error: {}\n  in: {}", e.message, sql.trim());
    };
    let line_start = sql[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = sql[at..].find('\n').map_or(sql.len(), |i| at + i);
    let line_no = sql[..at].matches('\n').count() + 1;
    let col = sql[line_start..at].chars().count();
    format!(
        "SQL error at line {line_no}, column {}: {}\n  {}\n  {}^",
        col + 1,
        e.message,
        &sql[line_start..line_end],
        " ".repeat(col)
    )
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Prints every statement's rows as `format`.
fn print(db: &TraceDb, sql: &str, format: Format, out: &mut dyn Write) -> Result<(), Failure> {
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut first_json = true;
    let mut failure: Option<io::Error> = None;
    // Table output needs widths; rows are held per statement for it (and for JSON's one
    // object per statement), streamed for CSV.
    let mut flush = |columns: &[String], rows: &mut Vec<Vec<Value>>, out: &mut dyn Write| {
        if columns.is_empty() {
            return Ok(());
        }
        match format {
            Format::Table => print_table(columns, rows, out),
            Format::Json => {
                if !first_json {
                    writeln!(out)?;
                }
                first_json = false;
                let v = serde_json::json!({"columns": columns, "rows": rows});
                serde_json::to_writer(&mut *out, &v)?;
                writeln!(out)
            }
            Format::Csv => Ok(()),
        }
    };
    let result = db.each_statement(sql, |e| {
        let r: io::Result<()> = (|| match e {
            Event::Columns(c) => {
                flush(&columns, &mut rows, out)?;
                rows.clear();
                columns = c.to_vec();
                if format == Format::Csv && !c.is_empty() {
                    let h: Vec<String> = c.iter().map(|s| csv_field(s)).collect();
                    writeln!(out, "{}", h.join(","))?;
                }
                Ok(())
            }
            Event::Row(r) => {
                if format == Format::Csv {
                    let f: Vec<String> = r
                        .iter()
                        .map(|v| match v {
                            Value::Null => String::new(),
                            v => csv_field(&cell(v)),
                        })
                        .collect();
                    writeln!(out, "{}", f.join(","))
                } else {
                    rows.push(r);
                    Ok(())
                }
            }
        })();
        r.map_err(|e| {
            failure = Some(e);
            trace_sql::Error {
                message: "output failed".into(),
                offset: None,
            }
        })
    });
    if let Some(e) = failure {
        return Err(Failure::Io(e));
    }
    result.map_err(Failure::Sql)?;
    flush(&columns, &mut rows, out)?;
    Ok(())
}

fn print_table(columns: &[String], rows: &[Vec<Value>], out: &mut dyn Write) -> io::Result<()> {
    const MAX_W: usize = 60;
    let mut w: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for r in rows.iter().take(10_000) {
        for (i, v) in r.iter().enumerate() {
            w[i] = w[i].max(cell(v).chars().count().min(MAX_W));
        }
    }
    let line = |cells: Vec<String>, out: &mut dyn Write| -> io::Result<()> {
        let padded: Vec<String> = cells
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let c: String = if c.chars().count() > MAX_W {
                    c.chars().take(MAX_W - 1).chain(['…']).collect()
                } else {
                    c
                };
                format!("{c:<width$}", width = w[i])
            })
            .collect();
        writeln!(out, "{}", padded.join("  ").trim_end())
    };
    line(columns.to_vec(), out)?;
    line(w.iter().map(|&n| "-".repeat(n)).collect(), out)?;
    for r in rows {
        line(r.iter().map(cell).collect(), out)?;
    }
    writeln!(
        out,
        "({} row{})",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    )
}

/// Where the interactive shell keeps its history: `query_history` in the config directory
/// the viewer uses (`$SPALL_CONFIG_DIR`, else the platform's), `None` where there is none.
pub fn history_path() -> Option<PathBuf> {
    spall_util::config_dir().map(|d| d.join("query_history"))
}

/// An interactive shell, as `trace_processor_shell` offers: line editing, history kept in
/// the config directory, `.help`, `.tables`, `.format`, `.quit`.
fn shell(db: &TraceDb, mut format: Format) -> Result<ExitCode, Fatal> {
    use rustyline::error::ReadlineError;
    if !io::stdin().is_terminal() {
        // Piped in: run it all as one script.
        let mut sql = String::new();
        io::Read::read_to_string(&mut io::stdin(), &mut sql)?;
        let mut out = io::stdout().lock();
        return match print(db, &sql, format, &mut out) {
            Err(Failure::Sql(e)) => Err(Fatal(describe(&sql, &e))),
            _ => Ok(ExitCode::SUCCESS),
        };
    }
    let mut rl = rustyline::DefaultEditor::new().map_err(|e| Fatal(e.to_string()))?;
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    eprintln!("spall-cli query: SQL over the trace. End statements with ';'. .help for help.");
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { "> " } else { "… " };
        let line = match rl.readline(prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Fatal(e.to_string())),
        };
        let t = line.trim();
        if pending.is_empty() && t.starts_with('.') {
            let _ = rl.add_history_entry(t);
            match t {
                ".quit" | ".exit" => break,
                ".tables" => println!("{}", TABLES),
                ".format table" => format = Format::Table,
                ".format json" => format = Format::Json,
                ".format csv" => format = Format::Csv,
                _ => println!("{SHELL_HELP}"),
            }
            continue;
        }
        pending.push_str(&line);
        pending.push('\n');
        if !t.ends_with(';') {
            continue;
        }
        let sql = std::mem::take(&mut pending);
        let _ = rl.add_history_entry(sql.trim());
        let mut out = io::stdout().lock();
        if let Err(Failure::Sql(e)) = print(db, &sql, format, &mut out) {
            eprintln!("{}", describe(&sql, &e));
        }
    }
    if let Some(h) = &history {
        if let Some(d) = h.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let _ = rl.save_history(h);
    }
    Ok(ExitCode::SUCCESS)
}

const TABLES: &str = "slice thread process track thread_track process_track counter_track counter instant flow args cpu_profile_stack_sample perf_sample stack_profile_callsite stack_profile_frame stack_profile_mapping spall_slice (view) thread_slice (view) ancestor_slice(id) descendant_slice(id) directly_connected_flow(id) following_flow(id) preceding_flow(id)";

const SHELL_HELP: &str = ".tables            the tables (columns: docs/SQL.md)
.format table|json|csv
.quit              (or Ctrl+D)
End a statement with ';' to run it. Ctrl+C clears the statement being typed.";
