//! Deterministic synthetic traces for benchmarks and tests.
//!
//! [`Synth`] produces nested spans on many threads (a random walk over call depth, with
//! realistic `namespace::Type::method` names), and writes the same spans as Chrome JSON, as
//! `.spall` version 3 or 1, or as Perfetto protobuf (`write_proto`). The same seed always
//! gives the same bytes.

use std::io::{self, Write};

use crate::SpallWriter;

/// What to generate.
#[derive(Clone, Debug)]
pub struct Synth {
    /// Seeds the random walk and the names: the same seed gives the same bytes.
    pub seed: u64,
    /// How many processes (pids 1, 2, ...).
    pub processes: u32,
    /// Threads per process.
    pub threads: u32,
    /// Total spans to generate, spread over all threads.
    pub spans: u64,
    /// Deepest nesting.
    pub max_depth: u32,
    /// Distinct span names.
    pub names: usize,
    /// Mix in names with quotes, backslashes, control characters and non-ASCII text.
    pub exotic_names: bool,
}

impl Default for Synth {
    fn default() -> Self {
        Synth {
            seed: 1,
            processes: 2,
            threads: 8,
            spans: 100_000,
            max_depth: 24,
            names: 2000,
            exotic_names: false,
        }
    }
}

/// One generated span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The process id, from 1.
    pub pid: u32,
    /// The thread id: `1000 * pid` plus the thread's number in its process.
    pub tid: u32,
    /// Index into [`Synth::name_table`].
    pub name: u32,
    /// Start time, in nanoseconds.
    pub start_ns: u64,
    /// End time, in nanoseconds (0 while the span is still open).
    pub end_ns: u64,
    /// Nesting depth on its thread, 0 at the top.
    pub depth: u32,
}

/// A splitmix64 stream: deterministic pseudo-random numbers for generators and tests.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next number of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

const PARTS: [&str; 24] = [
    "render", "update", "physics", "audio", "layout", "parse", "compile", "schedule", "draw",
    "submit", "upload", "resolve", "visit", "emit", "lower", "encode", "decode", "hash", "sort",
    "merge", "flush", "poll", "wait", "tick",
];
const TYPES: [&str; 12] = [
    "Scene", "Mesh", "Shader", "Queue", "Parser", "Lexer", "Graph", "Buffer", "World", "Frame",
    "Module", "Pass",
];
const SPACES: [&str; 6] = ["engine", "gfx", "core", "net", "io", "sema"];

impl Synth {
    /// The name table: `names` distinct names of realistic length (about 20 to 40 bytes).
    pub fn name_table(&self) -> Vec<String> {
        let mut rng = Rng(self.seed ^ 0x5EED);
        (0..self.names)
            .map(|i| {
                let s = SPACES[rng.below(SPACES.len() as u64) as usize];
                let t = TYPES[rng.below(TYPES.len() as u64) as usize];
                let a = PARTS[rng.below(PARTS.len() as u64) as usize];
                let b = PARTS[rng.below(PARTS.len() as u64) as usize];
                if self.exotic_names && i % 3 == 1 {
                    const ODD: [&str; 6] = [
                        "\"quoted\"",
                        "back\\slash",
                        "été",
                        "日本語",
                        "tab\there",
                        "😀",
                    ];
                    format!("{s}::{}_{i}", ODD[(i / 3) % ODD.len()])
                } else {
                    format!("{s}::{t}::{a}_{b}_{i}")
                }
            })
            .collect()
    }

    /// Each thread's `(pid, tid)`, in the order [`walk`](Self::walk) goes through them: pids
    /// from 1, tids `1000 * pid` plus the thread's number in its process.
    pub fn thread_ids(&self) -> impl Iterator<Item = (u32, u32)> {
        let threads = self.threads.max(1);
        (1..=self.processes.max(1)).flat_map(move |p| (0..threads).map(move |t| (p, 1000 * p + t)))
    }

    /// Calls `f` twice for every span, thread by thread: with [`Step::Open`] when the span
    /// begins (its `end_ns` is not known yet) and with [`Step::Close`] when it ends. Within a
    /// thread, spans nest properly and steps come in time order.
    pub fn walk(&self, mut f: impl FnMut(Step, &Span)) {
        let mut rng = Rng(self.seed);
        let nthreads = (self.processes.max(1) * self.threads.max(1)) as u64;
        let per_thread = self.spans / nthreads;
        let extra = self.spans % nthreads;
        let mut stack: Vec<Span> = Vec::new();
        for (index, (pid, tid)) in self.thread_ids().enumerate() {
            let n = per_thread + u64::from((index as u64) < extra);
            let mut now = 1_000_000 + rng.below(10_000);
            for _ in 0..n {
                // Close a few open spans; always close at the depth limit. Closing a bit
                // more often the deeper we are gives the roughly geometric depth profile
                // of real traces (most spans a few levels deep, a long tail below).
                while let Some(top) = stack.last() {
                    let p_close = 50 + 3 * stack.len() as u64; // percent
                    if stack.len() as u32 >= self.max_depth.max(1) || rng.below(100) < p_close {
                        let mut s = *top;
                        now += 1 + rng.below(500);
                        s.end_ns = now;
                        stack.pop();
                        f(Step::Close, &s);
                    } else {
                        break;
                    }
                }
                now += rng.below(200);
                let s = Span {
                    pid,
                    tid,
                    name: rng.below(self.names.max(1) as u64) as u32,
                    start_ns: now,
                    end_ns: 0,
                    depth: stack.len() as u32,
                };
                f(Step::Open, &s);
                stack.push(s);
            }
            while let Some(mut s) = stack.pop() {
                now += 1 + rng.below(500);
                s.end_ns = now;
                f(Step::Close, &s);
            }
        }
    }

    /// Writes Chrome JSON. With `mix_be`, about a third of the spans are B/E pairs and the
    /// rest X events (written when they close, children first, as clang does); a span that
    /// starts with its parent is of its parent's kind, since trace_processor would put an
    /// `X` there around the `B`. Returns the number of spans written.
    pub fn write_json<W: Write>(&self, out: W, mix_be: bool) -> io::Result<u64> {
        let names = self.name_table();
        let mut w = io::BufWriter::with_capacity(1 << 20, out);
        w.write_all(b"{\"traceEvents\":[\n")?;
        let mut first = true;
        let mut count = 0u64;
        let mut result = Ok(());
        let mixed = |s: &Span| mix_be && (s.start_ns / 7 + s.name as u64).is_multiple_of(3);
        // Each open span's start and whether it is B/E.
        let mut open: Vec<(u64, bool)> = Vec::new();
        let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
        self.walk(|step, s| {
            if result.is_err() {
                return;
            }
            let be = match step {
                Step::Open => {
                    let be = match open.last() {
                        Some(&(t, b)) if t == s.start_ns => b,
                        _ => mixed(s),
                    };
                    open.push((s.start_ns, be));
                    be
                }
                Step::Close => open.pop().is_some_and(|(_, b)| b),
            };
            let line = match step {
                Step::Open if be => format!(
                    "{{\"name\":{},\"cat\":\"synth\",\"ph\":\"B\",\"ts\":{},\"pid\":{},\"tid\":{}}}",
                    json_str(&names[s.name as usize]),
                    us(s.start_ns),
                    s.pid,
                    s.tid
                ),
                Step::Open => return,
                Step::Close if be => format!(
                    "{{\"ph\":\"E\",\"ts\":{},\"pid\":{},\"tid\":{}}}",
                    us(s.end_ns),
                    s.pid,
                    s.tid
                ),
                Step::Close => format!(
                    "{{\"name\":{},\"cat\":\"synth\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},\"args\":{{\"depth\":{}}}}}",
                    json_str(&names[s.name as usize]),
                    us(s.start_ns),
                    us(s.end_ns - s.start_ns),
                    s.pid,
                    s.tid,
                    s.depth
                ),
            };
            if step == Step::Close {
                count += 1;
            }
            let sep: &[u8] = if first { b"" } else { b",\n" };
            first = false;
            result = w.write_all(sep).and_then(|()| w.write_all(line.as_bytes()));
        });
        result?;
        w.write_all(b"\n]}\n")?;
        w.flush()?;
        Ok(count)
    }

    /// Writes `.spall` version 3 at 1 ns per tick. Returns the number of spans written.
    pub fn write_spall<W: Write>(&self, out: W) -> io::Result<u64> {
        let names = self.name_table();
        let mut w = SpallWriter::new(io::BufWriter::with_capacity(1 << 20, out), 1.0)?;
        let mut count = 0u64;
        let mut result = Ok(());
        let mut named = std::collections::HashSet::new();
        self.walk(|step, s| {
            if result.is_err() {
                return;
            }
            result = match step {
                Step::Open => {
                    if named.insert((s.pid, s.tid)) {
                        if let Err(e) = w.name_thread(s.pid, s.tid, &format!("worker-{}", s.tid)) {
                            result = Err(e);
                            return;
                        }
                    }
                    w.begin(s.pid, s.tid, s.start_ns, &names[s.name as usize], "")
                }
                Step::Close => {
                    count += 1;
                    w.end(s.pid, s.tid, s.end_ns)
                }
            };
        });
        result?;
        w.finish()?.flush()?;
        Ok(count)
    }
}

impl Synth {
    /// Writes `.spall` version 1 (every event carries its pid and tid; `f64` ticks of 1 ns,
    /// declared as 0.001 µs per tick). Returns the number of spans written.
    pub fn write_spall_v1<W: Write>(&self, out: W) -> io::Result<u64> {
        let names = self.name_table();
        let mut w = io::BufWriter::with_capacity(1 << 20, out);
        let mut h = [0u8; 32];
        h[0..8].copy_from_slice(&crate::spall::MAGIC.to_le_bytes());
        h[8..16].copy_from_slice(&1u64.to_le_bytes());
        h[16..24].copy_from_slice(&0.001f64.to_le_bytes());
        w.write_all(&h)?;
        let mut count = 0u64;
        let mut result = Ok(());
        self.walk(|step, s| {
            if result.is_err() {
                return;
            }
            let mut rec = Vec::with_capacity(64);
            match step {
                Step::Open => {
                    let name = names[s.name as usize].as_bytes();
                    let name = &name[..name.len().min(255)];
                    rec.extend_from_slice(&[3, 0]);
                    rec.extend_from_slice(&s.pid.to_le_bytes());
                    rec.extend_from_slice(&s.tid.to_le_bytes());
                    rec.extend_from_slice(&(s.start_ns as f64).to_le_bytes());
                    rec.extend_from_slice(&[name.len() as u8, 0]);
                    rec.extend_from_slice(name);
                }
                Step::Close => {
                    count += 1;
                    rec.push(4);
                    rec.extend_from_slice(&s.pid.to_le_bytes());
                    rec.extend_from_slice(&s.tid.to_le_bytes());
                    rec.extend_from_slice(&(s.end_ns as f64).to_le_bytes());
                }
            }
            result = w.write_all(&rec);
        });
        result?;
        w.flush()?;
        Ok(count)
    }
}

/// Whether a [`Synth::walk`] step opens or closes its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The span starts ([`Span::end_ns`] is not yet known).
    Open,
    /// The span ends.
    Close,
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}
