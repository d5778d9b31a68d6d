//! Decoding a step at a time, for a caller that may not block and has no threads: a
//! browser's main thread yields between steps so the page stays responsive and its progress
//! bar moves.
//!
//! The steps are the chunks of [`Input::decode_parallel`](crate::Input::decode_parallel)
//! taken one after another: gzip in slices of output, `.spall` v3 in runs of whole buffers,
//! the JSON event array in runs of elements. The sinks come out in file order, so replaying
//! them gives exactly the events of a sequential [`decode`](crate::decode), and the summary
//! (format, counts, warnings) is the one the parallel decode reports.
//!
//! ```
//! use spall_format::{Collect, DecodeOptions, Steps};
//!
//! let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#.to_vec();
//! let mut steps = Steps::new(json, &DecodeOptions::default(), Collect::default);
//! while !steps.step().unwrap() {
//!     let (_done, _total) = steps.progress();
//!     // yield to the event loop here
//! }
//! let done = steps.finish().unwrap();
//! assert_eq!(done.summary.events, 1);
//! ```

use std::io::Cursor;

use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::EventSink;
use crate::input::{gzip_capacity, gzip_error, gzip_limit, Gunzip, GZIP_LEVELS};
use crate::json::{self, LoopState, Stop};
use crate::parallel::{CHUNK_BYTES, PARALLEL_MIN};
use crate::spall::{self, SpallHeader};
use crate::time::TickScale;
use crate::{decode_plain, detect, Bytes, DecodeOptions, Detected, Format, Input, Summary};
use spall_util::LimitSource;

/// How much gzip output one step produces.
const GZIP_STEP: usize = 8 << 20;

enum Phase {
    Gunzip {
        g: Box<Gunzip<Cursor<Vec<u8>>>>,
        compressed: u64,
        level: usize,
    },
    /// The bytes are ready: choose how to cut them.
    Plan,
    /// Small inputs and `.spall` v1, in one step.
    Whole,
    Spall {
        header: SpallHeader,
        scale: TickScale,
        chunks: Vec<(usize, usize)>,
        next: usize,
    },
    /// Find where the JSON event array starts.
    JsonFind {
        utf8: bool,
    },
    JsonRuns {
        utf8: bool,
        pos: usize,
        state: LoopState,
    },
    /// The array is parsed (it ended at `end.0`; `end.1`: unterminated): the top level.
    JsonTop {
        utf8: bool,
        end: (usize, bool),
    },
    Done,
}

/// What the steps produced.
#[derive(Debug)]
pub struct Decoded<S> {
    /// What the decode found: format, sizes, event count, warnings.
    pub summary: Summary,
    /// One sink per chunk, in file order.
    pub sinks: Vec<S>,
    /// The decoded bytes (decompressed if they were gzip), for a second, sequential decode.
    pub input: Input,
}

/// A decode run one step at a time: call [`step`](Self::step) until it returns `true`, then
/// [`finish`](Self::finish).
pub struct Steps<S> {
    phase: Phase,
    bytes: Vec<u8>,
    input_bytes: u64,
    gzip: bool,
    opts: DecodeOptions,
    memory: Option<(u64, LimitSource)>,
    diags: Diagnostics,
    /// The decompression warnings alone (what a second decode of the bytes starts from).
    input_diags: Diagnostics,
    /// The warnings of the JSON runs, merged into `diags` where the top level meets the array.
    run_diags: Diagnostics,
    sinks: Vec<S>,
    events: u64,
    format: Option<(Format, Option<SpallHeader>, Option<json::JsonInfo>)>,
    new_sink: Box<dyn Fn() -> S>,
}

impl<S> std::fmt::Debug for Steps<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Steps")
            .field("bytes", &self.bytes.len())
            .field("sinks", &self.sinks.len())
            .field("events", &self.events)
            .finish()
    }
}

impl<S: EventSink> Steps<S> {
    /// Prepares to decode `bytes` (any supported format, gzip included); nothing is
    /// decoded until the first step.
    pub fn new(bytes: Vec<u8>, opts: &DecodeOptions, new_sink: impl Fn() -> S + 'static) -> Self {
        let input_bytes = bytes.len() as u64;
        let (limit, memory) = gzip_limit(&bytes, opts);
        let (phase, bytes) = if detect(&bytes) == Detected::Gzip {
            (gunzip_phase(bytes, limit, 1), Vec::new())
        } else {
            (Phase::Plan, bytes)
        };
        Steps {
            phase,
            bytes,
            input_bytes,
            gzip: false,
            opts: opts.clone(),
            memory,
            diags: Diagnostics::default(),
            input_diags: Diagnostics::default(),
            run_diags: Diagnostics::default(),
            sinks: Vec::new(),
            events: 0,
            format: None,
            new_sink: Box::new(new_sink),
        }
    }

    /// `(done, total)`: compressed bytes read while decompressing, then decoded bytes.
    pub fn progress(&self) -> (u64, u64) {
        let total = self.bytes.len() as u64;
        match &self.phase {
            Phase::Gunzip { g, compressed, .. } => (g.reader().position(), *compressed),
            Phase::Plan | Phase::JsonFind { .. } => (0, total),
            Phase::Spall { chunks, next, .. } => {
                (chunks.get(*next).map_or(total, |c| c.0 as u64), total)
            }
            Phase::JsonRuns { pos, .. } => (*pos as u64, total),
            Phase::Whole | Phase::JsonTop { .. } | Phase::Done => (total, total),
        }
    }

    /// The bytes being decoded, once decompressed (`None` while gzip is decompressing).
    pub fn decoded(&self) -> Option<&[u8]> {
        (!self.decompressing()).then_some(&self.bytes[..])
    }

    /// Whether the bytes are still being decompressed.
    pub fn decompressing(&self) -> bool {
        matches!(self.phase, Phase::Gunzip { .. })
    }

    /// Does one step of work (a few megabytes); `Ok(true)` when everything is decoded.
    /// After an error, the decode is over.
    pub fn step(&mut self) -> Result<bool, Error> {
        let r = self.step_inner();
        if r.is_err() {
            self.phase = Phase::Done;
        }
        r.map(|()| matches!(self.phase, Phase::Done))
    }

    fn step_inner(&mut self) -> Result<(), Error> {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Gunzip {
                g,
                compressed,
                level,
            } => self.gunzip(g, compressed, level)?,
            Phase::Plan => {
                self.input_diags = self.diags.clone();
                plan(&self.bytes, &mut self.diags)?
            }
            Phase::Whole => self.whole()?,
            Phase::Spall {
                header,
                scale,
                chunks,
                next,
            } => self.spall_chunk(header, scale, chunks, next),
            Phase::JsonFind { utf8 } => self.json_find(utf8)?,
            Phase::JsonRuns { utf8, pos, state } => self.json_run(utf8, pos, state),
            Phase::JsonTop { utf8, end } => self.json_top(utf8, end)?,
            Phase::Done => Phase::Done,
        };
        Ok(())
    }

    /// Decompresses the next slice; once done, plans the output (or unwraps another
    /// level of gzip).
    fn gunzip(
        &mut self,
        mut g: Box<Gunzip<Cursor<Vec<u8>>>>,
        compressed: u64,
        level: usize,
    ) -> Result<Phase, Error> {
        self.gzip = true;
        let done = g.step(GZIP_STEP, &mut self.diags);
        let done = done.map_err(|e| gzip_error(e, self.memory, &self.opts))?;
        if !done {
            return Ok(Phase::Gunzip {
                g,
                compressed,
                level,
            });
        }
        let out = std::mem::take(&mut g.out);
        Ok(if detect(&out) != Detected::Gzip {
            self.bytes = out;
            Phase::Plan
        } else if level < GZIP_LEVELS {
            let (limit, _) = gzip_limit(&out, &self.opts);
            gunzip_phase(out, limit.min(self.opts.max_decompressed), level + 1)
        } else {
            // Deeper nesting: the sequential decode reports it.
            self.bytes = out;
            Phase::Whole
        })
    }

    /// The whole input in one step, sequentially.
    fn whole(&mut self) -> Result<Phase, Error> {
        let mut sink = (self.new_sink)();
        let diags = std::mem::take(&mut self.diags);
        let limit = self.opts.max_decompressed;
        let b = &self.bytes;
        let s = decode_plain(b, self.gzip, self.input_bytes, diags, limit, &mut sink)?;
        self.diags = s.diagnostics;
        self.events = s.events;
        self.format = Some((s.format, s.spall, s.json));
        self.sinks.push(sink);
        Ok(Phase::Done)
    }

    /// The `.spall` v3 chunk `next`, or, after the last, the end.
    fn spall_chunk(
        &mut self,
        header: SpallHeader,
        scale: TickScale,
        chunks: Vec<(usize, usize)>,
        next: usize,
    ) -> Phase {
        let Some(&range) = chunks.get(next) else {
            self.format = Some((Format::SpallV3, Some(header), None));
            return Phase::Done;
        };
        let mut sink = (self.new_sink)();
        let mut d = Diagnostics::default();
        self.events += spall::decode_chunk(&self.bytes, 3, range, 0, &scale, &mut sink, &mut d);
        self.diags.merge(d);
        self.sinks.push(sink);
        Phase::Spall {
            header,
            scale,
            chunks,
            next: next + 1,
        }
    }

    /// Finds where the JSON event array starts.
    fn json_find(&mut self, utf8: bool) -> Result<Phase, Error> {
        // The top level up to the array, with its warnings thrown away: they are counted
        // when the top level is parsed for real, after the array.
        let b = &self.bytes;
        let mut start = None;
        let mut hook = |i: usize, _: &mut Diagnostics| {
            start = Some(i);
            (b.len(), false)
        };
        let (mut sink, mut d) = ((self.new_sink)(), Diagnostics::default());
        let known = utf8.then(|| text(b));
        json::decode_hooked(b, known, &mut sink, &mut d, Some(&mut hook))?;
        Ok(match start {
            Some(pos) => Phase::JsonRuns {
                utf8,
                pos,
                state: LoopState::default(),
            },
            // No event array: nothing worth cutting.
            None => Phase::Whole,
        })
    }

    /// The next run of the event array's elements.
    fn json_run(&mut self, utf8: bool, pos: usize, state: LoopState) -> Phase {
        let b = &self.bytes;
        let text = if utf8 { text(b) } else { "" };
        let mut sink = (self.new_sink)();
        let stop = pos.saturating_add(CHUNK_BYTES);
        let (end, state, n) =
            json::parse_run(text, b, pos, stop, state, &mut sink, &mut self.run_diags);
        self.events += n;
        self.sinks.push(sink);
        match end {
            Stop::At(pos) => Phase::JsonRuns { utf8, pos, state },
            Stop::Closed(e) => Phase::JsonTop {
                utf8,
                end: (e, false),
            },
            Stop::Eof => Phase::JsonTop {
                utf8,
                end: (b.len(), true),
            },
        }
    }

    /// The top level around the event array (which ended at `end.0`; `end.1`:
    /// unterminated), its sink first.
    fn json_top(&mut self, utf8: bool, end: (usize, bool)) -> Result<Phase, Error> {
        let b = &self.bytes;
        let mut runs = std::mem::take(&mut self.run_diags);
        let mut hook = |_: usize, d: &mut Diagnostics| {
            d.merge(std::mem::take(&mut runs));
            end
        };
        let mut top = (self.new_sink)();
        let known = utf8.then(|| text(b));
        let (info, n) = json::decode_hooked(b, known, &mut top, &mut self.diags, Some(&mut hook))?;
        self.events += n;
        self.sinks.insert(0, top);
        self.format = Some((Format::Json, None, Some(info)));
        Ok(Phase::Done)
    }

    /// The summary and the sinks, once [`step`](Self::step) has returned `true`.
    pub fn finish(self) -> Result<Decoded<S>, Error> {
        let Some((format, spall, json)) = self.format else {
            return Err(Error::new(
                crate::ErrorKind::Io(std::io::Error::other("the decode was not finished")),
                0,
            ));
        };
        let decoded_bytes = self.bytes.len() as u64;
        let summary = Summary {
            format,
            gzip: self.gzip,
            input_bytes: self.input_bytes,
            decoded_bytes,
            parsed_bytes: decoded_bytes,
            events: self.events,
            diagnostics: self.diags.clone(),
            spall,
            json,
        };
        let input = Input::from_parts(
            Bytes::Owned(self.bytes),
            self.gzip,
            self.input_bytes,
            self.input_diags,
            self.opts.max_decompressed,
        );
        Ok(Decoded {
            summary,
            sinks: self.sinks,
            input,
        })
    }
}

/// How to cut decoded bytes: as the parallel decode does.
fn plan(b: &[u8], diags: &mut Diagnostics) -> Result<Phase, Error> {
    Ok(match detect(b) {
        _ if b.len() < PARALLEL_MIN => Phase::Whole,
        Detected::Spall => {
            // Version 1 is decoded whole, and warns about its header then.
            let mut d = Diagnostics::default();
            let (header, scale) = spall::prepare(b, &mut d)?;
            if header.version != 3 {
                Phase::Whole
            } else {
                diags.merge(d);
                Phase::Spall {
                    header,
                    scale,
                    chunks: spall::v3_chunks(b, CHUNK_BYTES),
                    next: 0,
                }
            }
        }
        Detected::Json => Phase::JsonFind {
            utf8: simdutf8::basic::from_utf8(b).is_ok(),
        },
        _ => Phase::Whole,
    })
}

fn gunzip_phase(bytes: Vec<u8>, limit: u64, level: usize) -> Phase {
    let compressed = bytes.len() as u64;
    let capacity = gzip_capacity(&bytes, limit);
    Phase::Gunzip {
        g: Box::new(Gunzip::with_capacity(Cursor::new(bytes), capacity, limit)),
        compressed,
        level,
    }
}

/// `b` as text; the caller checked it is UTF-8.
fn text(b: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(b).is_ok());
    // SAFETY: checked once in the plan step; the bytes are not changed after.
    #[allow(unsafe_code)]
    unsafe {
        std::str::from_utf8_unchecked(b)
    }
}
