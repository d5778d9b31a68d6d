//! What spall's tests share, so each crate's single test binary (`tests/<crate>/main.rs`)
//! and its unit tests write it once:
//!
//! - the repository's files: [`fixture`], [`fixture_bytes`], [`doc`], [`corpus`];
//! - scratch space: [`scratch_dir`], a fresh directory per tag and process;
//! - running a program: [`run`], [`run_ok`], [`piped`];
//! - protobuf written by hand: [`varint`], [`field`];
//! - skip switches: [`available`], which skips a test whose prerequisite is missing,
//!   saying so, unless the environment variable CI sets for it (`SPALL_REQUIRE_*`,
//!   `SPALL_WINDOW_TEST`) turns the skip into a failure.
//!
//! Only std: it is a dev-dependency, and must pull nothing (no window system, no GL) into
//! the crates that use it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's root (this crate is `crates/test-support`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file (or directory) under `tests/fixtures`.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(rel)
}

/// The bytes of a file under `tests/fixtures`; a missing one fails naming it.
pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("tests/fixtures/{rel}: {e}"))
}

/// A document of `docs/`, as text.
pub fn doc(name: &str) -> String {
    let p = repo_root().join("docs").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The shared corpus of real traces, `../shared/corpus` beside the checkout, when it is
/// there; `None` (after saying `test` skips) when it is not, which `SPALL_REQUIRE_CORPUS`
/// (set by `.ci/run`) turns into a failure.
#[track_caller]
pub fn corpus(test: &str) -> Option<PathBuf> {
    let root = repo_root().join("../shared/corpus");
    available(
        root.exists(),
        "SPALL_REQUIRE_CORPUS",
        &format!("{test}: {} is missing", root.display()),
    )
    .then_some(root)
}

/// Whether a test's prerequisite is there. When it is not (`ok` false), a test skips:
/// this says so on stderr (`SKIPPED: what`) and returns false, unless `require` (an
/// environment variable CI sets, such as `SPALL_REQUIRE_PYTHON`) is set, which makes the
/// skip a failure.
#[track_caller]
pub fn available(ok: bool, require: &str, what: &str) -> bool {
    if !ok {
        assert!(
            std::env::var_os(require).is_none(),
            "{require} is set, so this must run, but {what}"
        );
        eprintln!("SKIPPED: {what} (set {require}=1 to make this a failure)");
    }
    ok
}

/// A fresh, empty directory `spall-TAG-PID` in the system's temporary directory: tags
/// must differ between the tests of one binary, which share the process id.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

/// Runs `exe ARGS` to its end: its exit status and output, whatever they are.
pub fn run(exe: impl AsRef<Path>, args: &[&str]) -> Output {
    let exe = exe.as_ref();
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()))
}

/// Runs `exe ARGS`, which must exit 0; its output.
pub fn run_ok(exe: impl AsRef<Path>, args: &[&str]) -> Output {
    let o = run(exe, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Runs `exe ARGS` with `input` on its standard input; its exit status and output.
pub fn piped(exe: impl AsRef<Path>, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(exe.as_ref())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Written from another thread: the program may fill its stdout before reading all.
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        // The program may exit without reading everything (an error): that is its answer.
        let _ = stdin.write_all(&input);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    o
}

/// `n` one-microsecond `X` events on thread `tid` of process `pid`, one after the other,
/// as Chrome JSON array entries (each ends with a comma).
pub fn json_spans(pid: u32, tid: u32, n: u32) -> String {
    (0..n)
        .map(|i| format!(r#"{{"ph":"X","name":"s","ts":{i},"dur":1,"pid":{pid},"tid":{tid}}},"#))
        .collect()
}

/// A Chrome JSON metadata (`M`) event with `args` as JSON members (ends with a comma).
pub fn json_meta(name: &str, pid: u32, tid: u32, args: &str) -> String {
    format!(r#"{{"ph":"M","name":"{name}","pid":{pid},"tid":{tid},"args":{{{args}}}}},"#)
}

/// Array entries as [`json_spans`] and [`json_meta`] write them, as one JSON array.
pub fn json_array(entries: &str) -> String {
    format!("[{}]", entries.trim_end_matches(','))
}

/// Appends `v` as a protobuf varint.
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a protobuf length-delimited field (wire type 2): its tag, length and payload.
pub fn field(num: u64, payload: &[u8], out: &mut Vec<u8>) {
    varint(num << 3 | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A Perfetto trace of one compact_sched bundle of `cpu`: its intern table `comms`, then
/// each column packed as given (times as deltas).
pub fn compact_sched_trace(cpu: u64, comms: &[&str], cols: &[(u64, &[u64])]) -> Vec<u8> {
    let mut cs = Vec::new();
    for c in comms {
        field(5, c.as_bytes(), &mut cs);
    }
    for (num, values) in cols {
        let mut packed = Vec::new();
        values.iter().for_each(|&v| varint(v, &mut packed));
        field(*num, &packed, &mut cs);
    }
    let mut bundle = vec![0x08];
    varint(cpu, &mut bundle);
    field(4, &cs, &mut bundle);
    let mut packet = Vec::new();
    field(1, &bundle, &mut packet);
    let mut trace = Vec::new();
    field(1, &packet, &mut trace);
    trace
}

/// A Perfetto system trace of `cpus` CPUs, two compact_sched bundles a CPU of `n` switches
/// and `n` wakings each, their records interleaved in time across the CPUs: 50 tasks
/// switching in every end state (the kernel's bits 0, 1, 2, 0x40, 0x100), wakings of them
/// with irq flags; from a fixed seed.
pub fn compact_sched_cpus(cpus: u64, n: u64) -> Vec<u8> {
    let mut trace = Vec::new();
    for cpu in 0..cpus {
        for half in 0..2u64 {
            let mut x = cpu * 7 + half + 1;
            let mut next = || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                x >> 33
            };
            let first = 1_000 + cpu * 3 + half * 10_000_000;
            let col = |f: &mut dyn FnMut(u64) -> u64| (0..n).map(f).collect::<Vec<_>>();
            let ts = col(&mut |i| if i == 0 { first } else { 40 + next() % 400 });
            let state = col(&mut |_| [0, 1, 2, 0x100, 0x40][next() as usize % 5]);
            let pid = col(&mut |_| next() % 50);
            let prio = col(&mut |_| 100 + next() % 40);
            let comm = col(&mut |_| next() % 3);
            let wts = col(&mut |i| if i == 0 { first + 7 } else { 40 + next() % 400 });
            let wpid = col(&mut |_| 1 + next() % 50);
            let wcpu = col(&mut |_| next() % cpus);
            let flags = col(&mut |_| [0, 0x8, 0x10][next() as usize % 3]);
            trace.extend(compact_sched_trace(
                cpu,
                &["a", "b", "c"],
                &[
                    (1, &ts),
                    (2, &state),
                    (3, &pid),
                    (4, &prio),
                    (6, &comm),
                    (7, &wts),
                    (8, &wpid),
                    (9, &wcpu),
                    (10, &prio),
                    (11, &comm),
                    (12, &flags),
                ],
            ));
        }
    }
    trace
}

/// `f` of each of `items`, the items shared among a thread a core (a test's fixtures, which
/// one core took a minute over); the results in the items' order.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break mine };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        (handles.into_iter())
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}
