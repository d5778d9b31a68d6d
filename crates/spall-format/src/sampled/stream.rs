//! A profile decoded as its bytes arrive (a browser's worker reading a file in chunks), so
//! neither the file nor its text is held whole.
//!
//! `perf script` text and collapsed stacks: only the bytes since the last run. Once the
//! bytes held reach the target, they are cut where a record starts (a `perf script` header
//! line, a collapsed stack's line) and what comes before is decoded as one run, with the
//! file's offsets, into the one sink every run goes to; the records are independent, so the
//! runs' samples, in file order, are a whole-file decode's. A piece of at least the target
//! is read where it lies, not copied: only its last record is held.
//!
//! A `.cpuprofile` whose first key is `nodes` (what V8 writes): read into its call tree,
//! samples and times as the bytes arrive (`cpuprofile::stream`), the samples handed over
//! at the end, into one sink (they refer to the tree and are put in time order). Where
//! that reader gives up, [`finish`](ProfileStream::finish) says to decode the file again,
//! whole. speedscope's format and Gecko profiles are walked (`walk`): a speedscope
//! profile's samples handed over as the profile ends, a Gecko thread as it ends, each into
//! a sink of its own; their readers give up as the `.cpuprofile`'s does. pprof's fields are
//! read as they complete (`pprof_read`), its samples kept in short until the end, since
//! they refer to tables that may come last, and handed over then, into one sink.

use super::cpuprofile::Reader;
use super::pprof_read::Reading;
use super::walk::Walked;
use super::{collapsed, gecko_stream, perf, pprof, speedscope, ProfileFormat};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::EventSink;
use crate::parallel::CHUNK_BYTES;
use crate::{detect, Detected, Format, Summary};

/// A JSON profile's reader.
enum Json {
    Speedscope(Box<speedscope::Stream>),
    Gecko(Box<gecko_stream::Stream>),
}

/// A sampling profile's decode fed chunk by chunk: [`push`](Self::push) the
/// file's bytes in order, then [`finish`](Self::finish).
pub struct ProfileStream<S> {
    format: ProfileFormat,
    /// The bytes not decoded yet, from the start of a record.
    window: Vec<u8>,
    /// The file's offset of `window[0]`.
    at: u64,
    /// A run is decoded once the window holds this many bytes.
    target: usize,
    /// Whether a run's text was not UTF-8 (warned about once, as a whole-file decode does).
    warned_utf8: bool,
    /// `perf script`'s call tree, for every run (they go to one sink).
    tree: perf::Tree,
    diags: Diagnostics,
    sinks: Vec<S>,
    samples: u64,
    /// A `.cpuprofile`'s reader.
    cpu: Option<Box<Reader>>,
    /// A speedscope file's or Gecko profile's reader.
    json: Option<Json>,
    /// A pprof profile's reader.
    pprof: Option<Box<Reading>>,
    read: u64,
    new_sink: Box<dyn Fn() -> S>,
}

impl<S> std::fmt::Debug for ProfileStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileStream")
            .field("format", &self.format)
            .field("read", &self.read)
            .field("held", &self.window.len())
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl<S: EventSink> ProfileStream<S> {
    /// The profile format of a file whose first bytes are `head`, if it is one this
    /// streams: `perf script` text or collapsed stacks, in UTF-8 (UTF-16 is gathered), a
    /// `.cpuprofile` whose first key is `nodes` (not the older `head` form), speedscope's
    /// format, a Gecko profile, or pprof.
    pub fn accepts(head: &[u8]) -> Option<ProfileFormat> {
        match detect(head) {
            Detected::Profile(
                f @ (ProfileFormat::Perf
                | ProfileFormat::Collapsed
                | ProfileFormat::Speedscope
                | ProfileFormat::Gecko
                | ProfileFormat::Pprof),
            ) => Some(f),
            Detected::Profile(f @ ProfileFormat::CpuProfile) => {
                let rest = head.trim_ascii_start().strip_prefix(b"{")?;
                rest.trim_ascii_start()
                    .starts_with(b"\"nodes\"")
                    .then_some(f)
            }
            _ => None,
        }
    }

    /// A stream of `format` whose runs of about `target` bytes each go to a new sink from
    /// `new_sink`.
    pub fn with_target(
        format: ProfileFormat,
        target: usize,
        new_sink: impl Fn() -> S + 'static,
    ) -> Self {
        ProfileStream {
            format,
            window: Vec::new(),
            at: 0,
            target: target.max(1),
            warned_utf8: false,
            tree: perf::Tree::default(),
            diags: Diagnostics::default(),
            sinks: Vec::new(),
            samples: 0,
            cpu: (format == ProfileFormat::CpuProfile).then(Box::default),
            json: match format {
                ProfileFormat::Speedscope => Some(Json::Speedscope(Box::default())),
                ProfileFormat::Gecko => Some(Json::Gecko(Box::default())),
                _ => None,
            },
            pprof: (format == ProfileFormat::Pprof).then(Box::default),
            read: 0,
            new_sink: Box::new(new_sink),
        }
    }

    /// A stream with the parallel decoder's runs.
    pub fn new(format: ProfileFormat, new_sink: impl Fn() -> S + 'static) -> Self {
        ProfileStream::with_target(format, CHUNK_BYTES, new_sink)
    }

    /// `(read, decoded)`: bytes pushed so far, and bytes decoded of them.
    pub fn progress(&self) -> (u64, u64) {
        match (&self.cpu, &self.json) {
            (Some(r), _) => (self.read, r.consumed()),
            (_, Some(Json::Speedscope(r))) => (self.read, r.consumed()),
            (_, Some(Json::Gecko(r))) => (self.read, r.consumed()),
            _ => match &self.pprof {
                Some(r) => (self.read, r.decoded()),
                None => (self.read, self.at),
            },
        }
    }

    /// The next bytes of the file: once the window reaches the target, its whole records
    /// are decoded as a run.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.read += chunk.len() as u64;
        if let Some(r) = &mut self.cpu {
            // A reader that gave up waits for the finish, which says so.
            let _ = r.push(chunk);
            return Ok(());
        }
        if self.json.is_some() {
            self.push_json(false, chunk);
            return Ok(());
        }
        if let Some(r) = &mut self.pprof {
            return r.push(chunk, &mut self.diags);
        }
        let mut rest = chunk;
        // A piece of a run's size is read in place, not copied into the window: the
        // window's last record is finished by the piece's lines up to its first record
        // and decoded alone, then the piece's whole records; its last one is kept.
        if !self.window.is_empty() && rest.len() >= self.target {
            let ends_line = self.window.last() == Some(&b'\n');
            if let Some(p) = record_start(self.format, ends_line, rest) {
                self.window.extend_from_slice(&rest[..p]);
                self.decode_run(self.window.len());
                rest = &rest[p..];
            }
        }
        if self.window.is_empty() && rest.len() >= self.target {
            if let Some(end) = run_end(self.format, rest).filter(|&e| e > 0) {
                self.decode_bytes(&rest[..end]);
                rest = &rest[end..];
            }
        }
        self.window.extend_from_slice(rest);
        if self.window.len() >= self.target {
            if let Some(end) = run_end(self.format, &self.window).filter(|&e| e > 0) {
                self.decode_run(end);
            }
        }
        Ok(())
    }

    /// Pushes a chunk to the JSON reader (`last`: the end); its samples so far, or `None`
    /// once it gave up.
    fn push_json(&mut self, last: bool, chunk: &[u8]) -> Option<u64> {
        let (sinks, new_sink, d) = (&mut self.sinks, &*self.new_sink, &mut self.diags);
        match self.json.as_mut()? {
            Json::Speedscope(r) => r.push(last, chunk, sinks, new_sink, d).then_some(r.n),
            Json::Gecko(r) => r.push(last, chunk, sinks, new_sink, d).then_some(r.n),
        }
    }

    /// Decodes `window[..end]` into the stream's sink and drops those bytes. Every run goes
    /// to one sink: its records are independent and come in file order, so one builder
    /// gives the trace the parallel decode's chunk builders, merged, give, without a
    /// builder a run whose frames and names are interned again and then merged (a third
    /// of a deep `perf script` file's streamed decode).
    fn decode_run(&mut self, end: usize) {
        let window = std::mem::take(&mut self.window);
        self.decode_bytes(&window[..end]);
        self.window = window;
        self.window.drain(..end);
    }

    /// Decodes `b`, whole records from the file's offset `at`, as a run.
    fn decode_bytes(&mut self, b: &[u8]) {
        let mut sink = self.sinks.pop().unwrap_or_else(|| (self.new_sink)());
        let total = self.read;
        let d = &mut self.diags;
        self.samples += match self.format {
            ProfileFormat::Perf => {
                let (w, tree) = (&mut self.warned_utf8, &mut self.tree);
                perf::decode_run(b, self.at, total, &mut sink, d, w, tree)
            }
            _ => collapsed::decode_run(b, self.at, total, &mut sink, d),
        };
        self.sinks.push(sink);
        self.at += b.len() as u64;
    }

    /// Whether the stream gave up, so far: [`finish`](Self::finish) will say to decode
    /// the file again, whole.
    pub fn gave_up(&self) -> Option<&'static str> {
        match &self.json {
            Some(Json::Speedscope(r)) if r.failed() => {
                return Some("a speedscope file the streamed reader does not take")
            }
            Some(Json::Gecko(r)) if r.failed() => {
                return Some("a Gecko profile the streamed reader does not take")
            }
            _ => {}
        }
        (self.cpu.as_ref().is_some_and(|r| r.failed()))
            .then_some("a .cpuprofile the streamed reader does not take")
    }

    /// Decodes what is left and returns the summary and the sinks, in file order, or
    /// `None` when the file must be decoded again, whole (a `.cpuprofile` whose reader gave
    /// up).
    #[allow(clippy::type_complexity)]
    pub fn finish(mut self) -> Result<Option<(Summary, Vec<S>)>, Error> {
        if let Some(r) = self.cpu.take() {
            let mut sink = (self.new_sink)();
            match r.finish(&mut sink, &mut self.diags) {
                Some(n) => self.samples = n,
                None => return Ok(None),
            }
            self.sinks.push(sink);
        } else if let Some(mut r) = self.pprof.take() {
            let mut sink = (self.new_sink)();
            r.end(&mut self.diags)?;
            self.samples = pprof::hand_over(&r, &mut sink, &mut self.diags)?;
            self.sinks.push(sink);
        } else if self.json.is_some() {
            match self.push_json(true, &[]) {
                Some(n) => self.samples = n,
                None => return Ok(None),
            }
        } else if !self.window.is_empty() || self.sinks.is_empty() {
            self.decode_run(self.window.len());
        }
        let summary = Summary {
            format: Format::Profile(self.format),
            gzip: false,
            input_bytes: self.read,
            decoded_bytes: self.read,
            parsed_bytes: self.read,
            events: self.samples,
            diagnostics: self.diags,
            spall: None,
            json: None,
        };
        Ok(Some((summary, self.sinks)))
    }
}

/// Where a run of whole records may end in `b`, a text profile's bytes from a record's
/// start (see [`perf::run_end`]).
fn run_end(format: ProfileFormat, b: &[u8]) -> Option<usize> {
    match format {
        ProfileFormat::Perf => perf::run_end(b),
        _ => memchr::memrchr(b'\n', b).map(|i| i + 1),
    }
}

/// Where the first record starts in `b`, bytes that follow a record (`ends_line`: whose
/// last byte ended a line), if one starts before its end.
fn record_start(format: ProfileFormat, ends_line: bool, b: &[u8]) -> Option<usize> {
    let starts = |p: usize| match format {
        ProfileFormat::Perf => {
            !matches!(b.get(p), None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'#'))
        }
        _ => p < b.len(),
    };
    if ends_line && starts(0) {
        return Some(0);
    }
    memchr::memchr_iter(b'\n', b)
        .map(|i| i + 1)
        .find(|&p| starts(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampled::tests::Samples;

    /// A decode's result as text to compare: its warnings by offset (a run's warning that
    /// the text is not UTF-8 comes in the run's turn, a whole decode's first).
    fn text(sum: Summary, samples: &[crate::sampled::tests::Owned]) -> String {
        let d = &sum.diagnostics;
        let mut ex: Vec<_> = d.examples().iter().map(|w| format!("{w:?}")).collect();
        ex.sort();
        format!("{} {} {ex:?} {samples:?}", sum.events, d.total())
    }

    /// What a whole-file decode gives, as text to compare.
    fn whole(b: &[u8]) -> String {
        let mut s = Samples::default();
        match crate::decode(b, &mut s) {
            Ok(sum) => text(sum, &s.0),
            Err(e) => format!("error {e}"),
        }
    }

    /// The same, streamed in pieces of `piece` bytes, runs of `target`; "decode again"
    /// where the stream says so.
    fn streamed(b: &[u8], piece: usize, target: usize) -> String {
        let f = ProfileStream::<Samples>::accepts(b).expect("a streamed profile");
        let mut s = ProfileStream::with_target(f, target, Samples::default);
        for p in b.chunks(piece.max(1)) {
            s.push(p).unwrap();
        }
        let Some((sum, sinks)) = s.finish().unwrap() else {
            return "decode again".into();
        };
        assert_eq!(sum.input_bytes, b.len() as u64);
        let all: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
        text(sum, &all)
    }

    /// A real `node --cpu-prof` profile, and V8's own order of its fields in many shapes:
    /// streamed in any pieces it is the whole decode, never held whole.
    #[test]
    fn real_cpuprofile_in_any_pieces_is_the_whole_decode() {
        let b = spall_test_support::fixture_bytes("real/profiles/work.cpuprofile");
        let want = whole(&b);
        assert!(want.starts_with("208 0 "), "{}", &want[..200]);
        for piece in [b.len(), 8_191, 97, 1] {
            assert!(streamed(&b, piece, 1) == want, "pieces of {piece}");
        }
    }

    /// Pieces larger than what finishes an incomplete node first (64 KiB): nodes of 180 KB
    /// (children) and 160 KB (ticks) that a piece's head does not finish, and small ones
    /// that each piece's head does, the rest of the piece read in place.
    #[test]
    fn cpuprofile_items_across_large_pieces_are_the_whole_decode() {
        let n = 30_000;
        let kids: Vec<String> = (2..n + 2).map(|k| k.to_string()).collect();
        let mut b = format!(
            r#"{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"hitCount":0,"children":[{}]}}"#,
            kids.join(",")
        );
        // Every 3,000th node has 160 KB of ticks.
        let ticks = vec![r#"{"line":1,"ticks":1}"#; 7_500].join(",");
        for k in 2..n + 2 {
            b += &format!(
                r#",{{"id":{k},"callFrame":{{"functionName":"f{}","scriptId":"1","url":"file:///s{}.js","lineNumber":{k},"columnNumber":3}},"hitCount":1"#,
                k % 97,
                k % 5
            );
            b += &match k % 3_000 {
                0 => format!(r#","positionTicks":[{ticks}]}}"#),
                _ => "}".into(),
            };
        }
        let samples: Vec<String> = (0..n).map(|i| (2 + i * 7 % n).to_string()).collect();
        let deltas: Vec<String> = (0..n).map(|i| (i % 13).to_string()).collect();
        b += &format!(
            r#"],"startTime":5,"endTime":900000,"samples":[{}],"timeDeltas":[{}]}}"#,
            samples.join(","),
            deltas.join(",")
        );
        let want = whole(b.as_bytes());
        assert!(want.starts_with(&format!("{n} 0 ")), "{}", &want[..100]);
        for piece in [65_537, 100_003, 250_000, 7_000] {
            assert!(
                streamed(b.as_bytes(), piece, 1) == want,
                "pieces of {piece}"
            );
        }
    }

    /// Hostile and unusual `.cpuprofile`s, cut at every byte: the stream gives the whole
    /// decode's samples and warnings, or says to decode the file again (never another
    /// result, never a panic).
    #[test]
    fn hostile_cpuprofiles_at_every_cut_are_the_whole_decode_or_decoded_again() {
        let streamed_ok = [
            // Escapes, null fields, unknown fields of every kind, floats, a parent loop, a
            // missing node, more samples than deltas, whitespace everywhere.
            &br#" { "nodes" : [ {"id":1,"callFrame":{"functionName":"a\"b\u00e9","url":null,"lineNumber":null,"x":[1,{"y":true}]},"hitCount":3},
              {"id":2,"parent":1,"callFrame":{"functionName":"ete","url":"u.js","lineNumber":4}},
              {"id":3,"children":[2],"callFrame":null},{"id":4,"parent":5},{"id":5,"parent":4}] ,
             "x": {"a": [1.5e3, -0, "s"]}, "startTime": 1.25e3, "endTime": 9000,
             "samples": [2, 3, 4, 9, 2], "timeDeltas": [10, -5, 2.5, 0.001], "title": "t\n" }
"#[..],
            br#"{"nodes":[{"id":7,"callFrame":{"functionName":"(root)"}},{"id":8,"parent":7,"callFrame":{"functionName":"f"}},{"id":8,"parent":7,"callFrame":{"functionName":"g"}}],"samples":[8,8],"timestamps":[5,3],"timeDeltas":null}"#,
            // V8's own layout of a call frame, and layouts that differ from it at each key:
            // an escape, a null, a float, a key after its last, a space; numbers of every form.
            br#"{"nodes":[{"id":1,"callFrame":{"functionName":"f","scriptId":"1","url":"u.js","lineNumber":2,"columnNumber":3}},
              {"id":2,"parent":1,"callFrame":{"functionName":"a\"b","scriptId":"1","url":"u\u0041.js","lineNumber":-1,"columnNumber":-1}},
              {"id":3,"parent":1,"callFrame":{"functionName":null,"scriptId":"1","url":"u.js","lineNumber":2,"columnNumber":3}},
              {"id":4,"parent":1,"callFrame":{"functionName":"g","scriptId":1,"url":"v.js","lineNumber":null,"columnNumber":3}},
              {"id":5,"parent":1,"callFrame":{"functionName":"h","scriptId":"1","url":"u.js","lineNumber":7,"columnNumber":1.5}},
              {"id":6,"parent":1,"callFrame":{"functionName":"i","scriptId":"1","url":"u.js","lineNumber":8,"columnNumber":3,"x":0}},
              {"id":7,"parent":1,"callFrame":{"functionName":"j","scriptId":"1","url":"u.js","lineNumber":9, "columnNumber":3 }},
              {"id":-8,"parent":1,"callFrame":{"url":"u.js","functionName":"k","lineNumber":0,"columnNumber":0}},
              {"id":9}, {"id":10 ,"callFrame":null}, {"id":11,"callFrame" :{}}, { "id":12,"parent":1},
              {"id":13,"callFrame":{},"hitCount":1,"children":[],"positionTicks":[]},
              {"id":14,"callFrame":{},"hitCount":1.5,"children":[15],"positionTicks":[{"line":1,"ticks":2}]},
              {"id":15,"callFrame":{},"hitCount":2,"children":[16],"positionTicks":[{"ticks":2,"line":1}]},
              {"id":16,"callFrame":{},"hitCount":2,"positionTicks":[{"line":1,"ticks":2,"x":3}],"parent":15},
              {"id":17,"callFrame":{},"hitCount":2,"children":[ 18 ],"positionTicks":[ {"line":1,"ticks":2} ]}],
             "samples":[1,2,3,4,5,6,7,-8,0],"timeDeltas":[-0,0,10,1e2,2.5E1,-3,123456789012345678,1234567890123456789,0.0]}"#,
        ];
        let given_up = [
            // A duplicate field, a key with an escape, a float id, a null children, text
            // after the object, a cut file, the wrong type, an id too long to be sure of.
            &br#"{"nodes":[],"nodes":[]}"#[..],
            br#"{"nodes":[{"i\u0064":1}]}"#,
            br#"{"nodes":[{"id":1.0}]}"#,
            br#"{"nodes":[{"id":1,"children":null}]}"#,
            br#"{"nodes":[]} x"#,
            br#"{"nodes":[{"id":1}],"samples":[1"#,
            br#"{"nodes":{}}"#,
            br#"{"nodes":[{"id":1234567890123456789}]}"#,
            b"{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"\xff\"}}]}",
            b"{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"\xff\",\"scriptId\":\"1\",\"url\":\"u\",\"lineNumber\":1,\"columnNumber\":1}}]}",
            br#"{"nodes":[{"id":1,"callFrame":{"functionName":"f","scriptId":"1","url":"u","lineNumber":01,"columnNumber":1}}]}"#,
            br#"{"nodes":[{"id":1}],"samples":[01]}"#,
            br#"{"nodes":[{"id":1}],"samples":[-]}"#,
            br#"{"nodes":[{"id":1,}]}"#,
            br#"{"nodes":[{"id":1,"callFrame":{},"hitCount":1,"children":[2,]}]}"#,
            br#"{"nodes":[{"id":1,"callFrame":{},"hitCount":1,"children":[02]}]}"#,
            br#"{"nodes":[{"id":1,"callFrame":{},"hitCount":1,"positionTicks":[{"line":1,"ticks":1},]}]}"#,
            br#"{"nodes":[{"id":1,"callFrame":{},"hitCount":1,"children":[2],"children":[3]}]}"#,
            br#"{"nodes":[{"id":1,"callFrame":{"functionName":"f","scriptId":"1","url":"u","lineNumber":1,"columnNumber":1},}]}"#,
        ];
        for (ok, files) in [(true, &streamed_ok[..]), (false, &given_up[..])] {
            for b in files {
                let want = whole(b);
                for cut in 0..=b.len() {
                    let mut s =
                        ProfileStream::with_target(ProfileFormat::CpuProfile, 1, Samples::default);
                    s.push(&b[..cut]).unwrap();
                    s.push(&b[cut..]).unwrap();
                    let got = match s.finish().unwrap() {
                        Some((sum, sinks)) => {
                            let all: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                            text(sum, &all)
                        }
                        None => "decode again".into(),
                    };
                    let b = String::from_utf8_lossy(b);
                    if ok {
                        assert!(got == want, "{b} cut at {cut}\n{got}\n{want}");
                    } else {
                        assert_eq!(got, "decode again", "{b} cut at {cut}");
                    }
                }
            }
        }
    }

    #[test]
    fn real_perf_script_in_any_pieces_is_the_whole_decode() {
        for name in ["spin.perf", "spin_fields.perf"] {
            let b = spall_test_support::fixture_bytes(&format!("real/profiles/{name}"));
            let want = whole(&b);
            assert!(want.len() > 1000, "{name}: {want}");
            // Pieces larger than runs too, as the page's (read in place).
            let sizes = [(b.len(), 1 << 20), (4_099, 10_000), (97, 300), (1, 1)];
            for (piece, target) in sizes.into_iter().chain([(4_099, 1_000), (65_536, 4_096)]) {
                let got = streamed(&b, piece, target);
                assert!(got == want, "{name}: pieces of {piece}, runs of {target}");
            }
        }
    }

    #[test]
    fn hostile_text_at_every_cut_is_the_whole_decode() {
        // A record cut by a comment line, frames with no header, a bad header, CRLF, text
        // that is not UTF-8 in two runs (warned once), a blank line of spaces.
        let perf = b"# header\nmain 1/1 [000] 1.5: 10 cycles:u:\n\tffff a (b)\n# x\n\
            \tffff b (c)\n\n\tdead orphan (x)\nnot a header\r\nmain 1/1 [000] 1.6: cycles:\n\
            \tffff \xff (b)\n  \nmain 1/2 [001] 1.7: 5 cycles:\n\tffff c\xfe (d)\n";
        let folded = b"# c\r\nmain;a 3\r\n\r\nno weight\nmain;\xffb 4\nmain;c 5";
        for b in [&perf[..], &folded[..]] {
            let want = whole(b);
            for target in [1, 16, 1 << 20] {
                for cut in 0..=b.len() {
                    let f = ProfileStream::<Samples>::accepts(b).unwrap();
                    let mut s = ProfileStream::with_target(f, target, Samples::default);
                    s.push(&b[..cut]).unwrap();
                    s.push(&b[cut..]).unwrap();
                    let (sum, sinks) = s.finish().unwrap().unwrap();
                    let all: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                    let got = text(sum, &all);
                    assert!(got == want, "cut at {cut}, runs of {target}\n{got}\n{want}");
                }
            }
        }
    }

    /// One result of a speedscope stream fed `b` in two pieces, cut at `cut`.
    fn cut_at(b: &[u8], cut: usize) -> String {
        let mut s = ProfileStream::with_target(ProfileFormat::Speedscope, 1, Samples::default);
        s.push(&b[..cut]).unwrap();
        s.push(&b[cut..]).unwrap();
        match s.finish().unwrap() {
            Some((sum, sinks)) => {
                let all: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                text(sum, &all)
            }
            None => "decode again".into(),
        }
    }

    /// A speedscope file of every kind of profile speedscope writes, with 300 samples.
    fn speedscope_file() -> Vec<u8> {
        let frames: Vec<_> = (0..40)
            .map(|i| {
                format!(
                    r#"{{"name":"f{i} \"q\" \u00e9","file":"m{}.c","line":{i}}}"#,
                    i % 3
                )
            })
            .collect();
        let stacks: Vec<_> = (0..300)
            .map(|i| format!("[0,{},{}]", 1 + i % 7, 8 + i % 31))
            .collect();
        let weights: Vec<_> = (0..300).map(|i| format!("{}.25", 1 + i % 4)).collect();
        format!(
            r#"{{"exporter":"speedscope@1.25.0","name":"x","activeProfileIndex":0,"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{}]}},"profiles":[{{"type":"sampled","name":"cpu","unit":"microseconds","startValue":10,"endValue":999,"samples":[{}],"weights":[{}]}},{{"type":"sampled","name":"heap","unit":"bytes","startValue":0,"endValue":9,"samples":[[0,1],[0,2,39]],"weights":[4096,512]}},{{"type":"evented","name":"ev","unit":"milliseconds","startValue":0,"endValue":9,"events":[{{"type":"O","frame":0,"at":0}},{{"type":"O","frame":5,"at":1.5}},{{"type":"C","frame":5,"at":4}},{{"type":"C","frame":0,"at":9}}]}}]}}"#,
            frames.join(","),
            stacks.join(","),
            weights.join(",")
        )
        .into_bytes()
    }

    /// speedscope's format, streamed in any pieces, is the whole decode; never held whole.
    #[test]
    fn speedscope_in_any_pieces_is_the_whole_decode() {
        let b = speedscope_file();
        let want = whole(&b);
        assert!(want.starts_with("306 0 "), "{}", &want[..100]);
        for piece in [b.len(), 4_099, 97, 1] {
            assert!(streamed(&b, piece, 1) == want, "pieces of {piece}");
        }
        let f = ProfileStream::<Samples>::accepts(&b).unwrap();
        let mut s = ProfileStream::with_target(f, 1, Samples::default);
        for p in b.chunks(64) {
            s.push(p).unwrap();
            let (read, done) = s.progress();
            assert!(read - done < 1_000, "{read} read, {done} decoded");
        }
    }

    /// Hostile and unusual speedscope files, cut at every byte: the stream gives the whole
    /// decode's samples and warnings, or says to decode the file again (a cut file, the
    /// wrong types where it descends, what it does not read alike), never another result.
    #[test]
    fn hostile_speedscope_at_every_cut_is_the_whole_decode_or_decoded_again() {
        let streamed_ok = [
            // Whitespace everywhere, unknown keys of every kind, null and odd fields, bad
            // frames and weights, more bad events than a warning shows, a bad unit and type.
            &br#" { "shared" : { "x" : [ {"a":[1,{"b":null}]} ] , "frames" : [ {"name":null,"line":-1}, {"name":"b","file":7,"line":4294967296}, 3 ] } ,
              "profiles" : [ {"type":"sampled","unit":"seconds","samples":[[0,1],[1,2.0,-1,9],5,[],[ ],[ 1 ,0 ],[10]],"weights":[1e-3,"w",null],"startValue":"s","name":5},
                {"type":"evented","unit":"nanoseconds","name":"e","events":[1,{"type":"O"},{"type":"O","frame":0,"at":1},{"type":"X","frame":0,"at":1},[],null,{"type":"C","frame":9,"at":2},{"type":"C","frame":0,"at":3}]},
                {"type":"sampled","unit":"parsecs","samples":[[0]]}, {"samples":[[0]]}, {"type":"sampled","samples":{"a":1},"weights":3,"events":"e"} ] , "z": -0.5e-3 }
"#[..],
            br#"{"shared":{"frames":[]},"profiles":[]}"#,
        ];
        let given_up = [
            // profiles first, a duplicate key, a key with an escape, a profile that is not
            // an object, frames not an array, no profiles, a cut file, text after it, a
            // skipped value that is not JSON, nesting too deep.
            &br#"{"profiles":[],"shared":{"frames":[]}}"#[..],
            br#"{"shared":{"frames":[]},"shared":{"frames":[]},"profiles":[]}"#,
            br#"{"sh\u0061red":{"frames":[]},"profiles":[]}"#,
            br#"{"shared":{"frames":[]},"profiles":[5]}"#,
            br#"{"shared":{"frames":{}},"profiles":[]}"#,
            br#"{"shared":{"frames":[]}}"#,
            br#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","samples":[[0"#,
            br#"{"shared":{"frames":[]},"profiles":[]} x"#,
            br#"{"shared":{"frames":[]},"profiles":[],"x":[1,]}"#,
            br#"{"shared":{"frames":[{}]},"profiles":[{"samples":[[0,01]]}]}"#,
            b"{\"shared\":{\"frames\":[{}]},\"profiles\":[{\"samples\":[[\x0c]]}]}",
            b"{\"shared\":{\"frames\":[{\"name\":\"\xff\"}]},\"profiles\":[]}",
        ];
        let deep = format!(
            r#"{{"shared":{{"frames":[]}},"profiles":[],"x":{}{}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        let given_up: Vec<&[u8]> = given_up.into_iter().chain([deep.as_bytes()]).collect();
        for (ok, files) in [(true, &streamed_ok[..]), (false, &given_up[..])] {
            for b in files {
                let want = whole(b);
                for cut in 0..=b.len() {
                    let got = cut_at(b, cut);
                    let b = String::from_utf8_lossy(b);
                    if ok {
                        assert!(got == want, "{b} cut at {cut}\n{got}\n{want}");
                    } else {
                        assert_eq!(got, "decode again", "{b} cut at {cut}");
                    }
                }
            }
        }
    }

    /// A Gecko stream fed `b` in pieces of `piece` (or cut once at `cut`): samples and
    /// events (markers, names) as text, or "decode again".
    fn gecko(b: &[u8], piece: usize, cut: Option<usize>) -> String {
        let pieces: Vec<&[u8]> = match cut {
            Some(c) => vec![&b[..c], &b[c..]],
            None => b.chunks(piece.max(1)).collect(),
        };
        let mut s = ProfileStream::with_target(ProfileFormat::Gecko, 1, Samples::default);
        let mut e = ProfileStream::with_target(ProfileFormat::Gecko, 1, crate::Collect::default);
        for p in pieces {
            s.push(p).unwrap();
            e.push(p).unwrap();
        }
        match (s.finish().unwrap(), e.finish().unwrap()) {
            (Some((sum, sinks)), Some((_, ev))) => {
                let all: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                let ev: Vec<_> = ev.into_iter().flat_map(|s| s.0).collect();
                format!("{} {ev:?}", text(sum, &all))
            }
            (None, None) => "decode again".into(),
            _ => panic!("one sink gave up, the other did not"),
        }
    }

    /// What the whole decode gives of a Gecko profile, as [`gecko`] gives it.
    fn gecko_whole(b: &[u8]) -> String {
        let mut s = Samples::default();
        let mut c = crate::Collect::default();
        match (crate::decode(b, &mut s), crate::decode(b, &mut c)) {
            (Ok(sum), Ok(_)) => format!("{} {:?}", text(sum, &s.0), c.0),
            (Err(e), _) | (_, Err(e)) => format!("error {e}"),
        }
    }

    /// Real Firefox profiles (raw, a subprocess, markers), a DevTools recording, and the
    /// processed format, streamed in any pieces: the whole decode's samples, markers and
    /// warnings, never the file held.
    #[test]
    fn gecko_in_any_pieces_is_the_whole_decode() {
        let mut files: Vec<Vec<u8>> = ["firefox_page.json.gz", "firefox_markers.json.gz"]
            .iter()
            .map(|f| {
                let gz = spall_test_support::fixture_bytes(&format!("real/profiles/{f}"));
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut out)
                    .unwrap();
                out
            })
            .collect();
        let recording = format!(
            r#"{{"systemHost":{{"name":"Firefox"}},"profile":{}}}"#,
            super::super::gecko::tests::RAW
        );
        files.extend(
            [
                super::super::gecko::tests::PROCESSED,
                super::super::gecko_markers::tests::RAW,
                &recording,
            ]
            .map(|s| s.as_bytes().to_vec()),
        );
        for b in &files {
            let want = gecko_whole(b);
            assert!(
                !want.starts_with("0 ") && !want.starts_with("error"),
                "{want:.200}"
            );
            for piece in [b.len(), 65_537, 4_099, 97] {
                assert!(
                    gecko(b, piece, None) == want,
                    "pieces of {piece}: {want:.200}"
                );
            }
        }
        let b = &files[0];
        let mut s = ProfileStream::with_target(ProfileFormat::Gecko, 1, Samples::default);
        let mut held = 0;
        for p in b.chunks(4_099) {
            s.push(p).unwrap();
            let (read, done) = s.progress();
            held = held.max(read - done);
        }
        assert!(
            held < b.len() as u64 / 10,
            "{held} of {} bytes held",
            b.len()
        );
    }

    /// Hostile and unusual Gecko profiles, cut at every byte: the whole decode's result,
    /// or "decode again" (never another result, never a panic).
    #[test]
    fn hostile_gecko_at_every_cut_is_the_whole_decode_or_decoded_again() {
        let streamed_ok = [
            // Threads of the wrong types and as text, a thread of markers alone, a table
            // with no schema, unknown keys, a subprocess as text that is not JSON.
            &br#" {"meta":{"interval":1,"startTime":1,"x":[{}]} , "libs":[{"a":[1,[2]]}],
              "threads":[5,"not json","{\"name\":\"T\",\"samples\":{}}",{"name":"M","markers":{"data":[]}},
                {"samples":{"schema":{"stack":0},"data":[[0],[9],[null],"x"]},"stackTable":{"schema":{"frame":1,"prefix":0},"data":[[null,0],[0,5]]},"frameTable":{"data":[]},"stringTable":[]},{}],
              "processes":["{",{"meta":{"startTime":3},"threads":[]},{"threads":[{"samples":{"data":[]}}]}], "z":null }"#[..],
            br#"{"systemHost":{},"profile":{"meta":{"interval":1,"stackwalk":1},"threads":[]},"x":1}"#,
        ];
        let given_up = [
            // threads before meta, processes before threads, a processed profile's threads
            // before its strings, a recording beside the root's keys, no threads, threads
            // not an array, a duplicate key, a cut file, meta not an object.
            &br#"{"threads":[],"meta":{"interval":1,"stackwalk":1}}"#[..],
            br#"{"meta":{"interval":1,"stackwalk":1},"processes":[],"threads":[]}"#,
            br#"{"meta":{"interval":1,"preprocessedProfileVersion":50},"threads":[],"shared":{"stringArray":[]}}"#,
            br#"{"meta":{"interval":1,"stackwalk":1},"profile":{"meta":{"interval":1},"threads":[]},"threads":[]}"#,
            br#"{"meta":{"interval":1,"stackwalk":1}}"#,
            br#"{"meta":{"interval":1,"stackwalk":1},"threads":{}}"#,
            br#"{"meta":{"interval":1,"stackwalk":1},"threads":[{"name":"a","name":"b"}]}"#,
            br#"{"meta":{"interval":1,"stackwalk":1},"threads":[{"samples":{"data":[[0,1"#,
            br#"{"meta":5,"threads":[]}"#,
        ];
        for (ok, files) in [(true, &streamed_ok[..]), (false, &given_up[..])] {
            for b in files {
                let want = gecko_whole(b);
                for cut in 0..=b.len() {
                    let got = gecko(b, 0, Some(cut));
                    let b = String::from_utf8_lossy(b);
                    if ok {
                        assert!(got == want, "{b} cut at {cut}\n{got}\n{want}");
                    } else {
                        assert_eq!(got, "decode again", "{b} cut at {cut}");
                    }
                }
            }
        }
    }
}
