//! `spall-cli export TRACE... OUTDIR [--jobs N]`: the SQL tables (docs/SQL.md) of many
//! traces as Parquet datasets, one directory per table (`OUTDIR/slice/`,
//! `OUTDIR/thread/`, ...), for DuckDB, Polars or Spark to query together (docs/FLEET.md).
//!
//! Each trace adds one file per table, `OUTDIR/TABLE/HASH.parquet`, named by the FNV-1a 64
//! hash of the trace file's bytes: exporting a trace again replaces its files, exporting
//! more traces adds files. Every row carries the trace's path as given (`trace`) and that
//! hash (`trace_fnv64`, hex). Each file is written to a hidden temporary name beside it and
//! renamed when complete, so the dataset only ever holds whole files. A trace that fails
//! to load is reported and skipped; the others are exported, and the exit code is 1.

mod parquet;
mod text;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::ValueEnum;
use trace_sql::arrow::{tables, Tables};

use crate::util::{load, Fatal};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Parquet,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Traces or profiles in any format spall reads, gzipped or not (told by content).
    #[arg(required = true, num_args = 1..)]
    pub trace: Vec<PathBuf>,
    /// The dataset directory (created if missing): OUTDIR/TABLE/HASH.parquet per trace and
    /// table.
    #[arg(required = true)]
    pub outdir: PathBuf,
    /// Traces exported at a time (memory: the largest traces in flight).
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    #[arg(long, value_enum, default_value_t = Format::Parquet)]
    pub format: Format,
}

/// The trace's identity: FNV-1a 64 over the file's bytes as they are on disk, taken as
/// little-endian 64-bit words (the last one padded with zeros), then its length in bytes
/// as one more word. Stable across platforms and versions, enough to tell traces apart,
/// and a word at a time: hashing byte by byte cost a third of the load of a 1 GB file.
pub fn trace_hash(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    const PRIME: u64 = 0x100_0000_01b3;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut h, mut len, mut fill) = (0xcbf2_9ce4_8422_2325u64, 0u64, 0usize);
    loop {
        let n = match f.read(&mut buf[fill..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n as u64;
        fill += n;
        // Whole words only, but for the end of the file.
        let whole = if n == 0 {
            let padded = fill.div_ceil(8) * 8;
            buf[fill..padded].fill(0);
            padded
        } else {
            fill / 8 * 8
        };
        for w in buf[..whole].chunks_exact(8) {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            h = (h ^ w).wrapping_mul(PRIME);
        }
        if n == 0 {
            return Ok((h ^ len).wrapping_mul(PRIME));
        }
        buf.copy_within(whole..fill, 0);
        fill -= whole;
    }
}

/// What one trace's export wrote.
struct Done {
    slices: u64,
    rows: u64,
    bytes: u64,
    load_s: f64,
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    let (outdir, traces) = (&a.outdir, &a.trace);
    if traces.iter().any(|t| t.as_os_str() == "-") {
        // A trace's id is the hash of its file, read again beside the load.
        return Err(Fatal(
            "export reads each trace's file twice (its id is the file's hash): save standard input to a file first".into(),
        ));
    }
    for table in tables() {
        let dir = outdir.join(table);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Fatal(format!("{}: cannot create: {e}", dir.display())))?;
    }
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let slices = AtomicUsize::new(0);
    let jobs = a.jobs.clamp(1, traces.len());
    // Each trace's files are encoded on its share of the cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (cores / jobs).max(1);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(trace) = traces.get(i) else {
                    return;
                };
                let t0 = Instant::now();
                let r = export_one(trace, outdir, threads);
                let k = finished.fetch_add(1, Ordering::Relaxed) + 1;
                let n = traces.len();
                match r {
                    Ok(d) => {
                        slices.fetch_add(d.slices as usize, Ordering::Relaxed);
                        eprintln!(
                            "spall-cli: [{k}/{n}] {}: {} slices, {} rows, {} in {:.2} s (load {:.2} s)",
                            trace.display(),
                            d.slices,
                            d.rows,
                            spall_util::human_bytes(d.bytes),
                            t0.elapsed().as_secs_f64(),
                            d.load_s
                        );
                    }
                    Err(Fatal(e)) => {
                        eprintln!("spall-cli: [{k}/{n}] {}: skipped: {e}", trace.display());
                        failed.lock().unwrap_or_else(|p| p.into_inner()).push(i);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap_or_else(|p| p.into_inner());
    let secs = start.elapsed().as_secs_f64();
    let slices = slices.into_inner();
    eprintln!(
        "spall-cli: exported {} of {} traces to {} ({slices} slices in {secs:.2} s, {:.2}M slices/s)",
        traces.len() - failed.len(),
        traces.len(),
        outdir.display(),
        slices as f64 / secs.max(1e-9) / 1e6
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Loads `trace` (hashing its bytes at the same time) and writes its files.
fn export_one(trace: &Path, outdir: &Path, threads: usize) -> Result<Done, Fatal> {
    let (hash, loaded) = std::thread::scope(|s| {
        let hash = s.spawn(|| trace_hash(trace));
        let loaded = load(trace);
        (hash.join(), loaded)
    });
    let (model, load_s) = loaded?;
    let hash = match hash {
        Ok(Ok(h)) => format!("{h:016x}"),
        Ok(Err(e)) => return Err(Fatal(format!("{}: {e}", trace.display()))),
        Err(_) => return Err(Fatal(format!("{}: hashing failed", trace.display()))),
    };
    let tag = parquet::Tag {
        trace: trace.display().to_string(),
        hash,
    };
    let model = Tables::new(Arc::new(model));
    let mut done = Done {
        slices: 0,
        rows: 0,
        bytes: 0,
        load_s,
    };
    for &table in tables() {
        let out = outdir.join(table).join(format!("{}.parquet", tag.hash));
        let w = parquet::write(&model, table, &tag, &out, threads)?;
        if table == "slice" {
            done.slices = w.rows;
        }
        done.rows += w.rows;
        done.bytes += w.bytes;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values an independent implementation (Python, from the definition) gives.
    #[test]
    fn trace_hash_is_fnv1a_over_words_then_length() {
        let dir = std::env::temp_dir().join(format!("spall-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t");
        let mut big: Vec<u8> = (0..(1u32 << 20) + 13)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        for (bytes, want) in [
            (&b""[..], 0xaf63bd4c8601b7df_u64),
            (b"abcdefghij", 0x85ffa9277bd88eaf),
            (b"abcdefghij\0", 0x85ffa8277bd88cfc),
        ] {
            std::fs::write(&f, bytes).unwrap();
            assert_eq!(trace_hash(&f).unwrap(), want, "{bytes:?}");
        }
        // Across read blocks (1 MiB), and a zero more is another trace.
        std::fs::write(&f, &big).unwrap();
        let a = trace_hash(&f).unwrap();
        assert_eq!(a, 0x2742e0e9731efaee);
        big.push(0);
        std::fs::write(&f, &big).unwrap();
        assert_ne!(trace_hash(&f).unwrap(), a);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
