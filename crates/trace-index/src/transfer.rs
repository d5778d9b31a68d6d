//! The index as one buffer and back, beside its trace's
//! ([`trace_model::Trace::to_transfer`]): a browser's worker builds both, and the page,
//! which draws, takes them with copies of their columns instead of building the index on
//! the thread that must draw.
//!
//! Reading checks the buffer against the trace it is for: one lane index per lane, each
//! pyramid level as long as the lane's span count makes it, stored levels ascending with
//! offsets and span indices in range. A damaged buffer is an error, never a panic later in
//! a query.
//!
//! ```
//! let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#;
//! let trace = trace_model::load_bytes(json).unwrap();
//! let index = trace_index::TraceIndex::build(&trace);
//! let back = trace_index::TraceIndex::from_transfer(&index.to_transfer(), &trace).unwrap();
//! assert_eq!(back.heap_bytes(), index.heap_bytes());
//! ```

use std::borrow::Cow;

use trace_model::{
    ArgsId, ColumnFill, ColumnSink, ColumnSource, Columns, Lane, StrId, Trace, TransferError,
    TransferReader, TransferWriter,
};

use crate::lane::LaneIndex;
use crate::levels::{LevelItem, Levels};
use crate::pyramid::{Blocks, Pyramid, FANOUT};
use crate::sample_stacks::SampleStacks;
use crate::{IndexLevels, TraceIndex};

type R<'a> = TransferReader<'a>;

impl TraceIndex {
    /// The index as one buffer for [`TraceIndex::from_transfer`] (about its heap size).
    pub fn to_transfer(&self) -> Vec<u8> {
        let mut w = TransferWriter::with_capacity(self.heap_bytes() + 64);
        w.list(&self.lanes(), |w, lanes| w.list(lanes, write_lane));
        w.list(&self.samples, write_stacks);
        w.into_bytes()
    }

    /// The index for a transfer in pieces, after its trace's
    /// ([`Trace::to_transfer_pieces`]): its head (returned), its columns to `sink`
    /// ([`IndexIn`] reads them back).
    pub fn to_transfer_pieces(&self, sink: &mut dyn ColumnSink) -> Vec<u8> {
        let mut w = TransferWriter::with_sink(sink);
        w.list(&self.lanes(), |w, lanes| w.list(lanes, write_lane));
        w.list(&self.samples, write_stacks);
        w.into_bytes()
    }

    /// Every lane's index as queries read it: its pyramid, with the levels set later
    /// ([`TraceIndex::set_levels`]) where they were.
    fn lanes(&self) -> Cow<'_, [Vec<LaneIndex>]> {
        let Some(later) = self.later.get() else {
            return Cow::Borrowed(&self.threads);
        };
        let lanes = |(a, b): (&Vec<LaneIndex>, &Vec<LaneIndex>)| {
            (a.iter().zip(b))
                .map(|(p, l)| LaneIndex {
                    pyramid: p.pyramid.clone(),
                    ..l.clone()
                })
                .collect()
        };
        Cow::Owned(self.threads.iter().zip(later).map(lanes).collect())
    }

    /// The index [`TraceIndex::to_transfer`] wrote for `trace`.
    pub fn from_transfer(bytes: &[u8], trace: &Trace) -> Result<TraceIndex, TransferError> {
        read(R::new(bytes), trace)
    }
}

impl IndexLevels {
    /// The stored levels for a transfer in pieces, as [`TraceIndex::to_transfer_pieces`]
    /// writes an index (every pyramid empty, no samples' stacks): its head (returned), its
    /// columns to `sink` ([`IndexIn::levels`] reads them back).
    pub fn to_transfer_pieces(&self, sink: &mut dyn ColumnSink) -> Vec<u8> {
        let mut w = TransferWriter::with_sink(sink);
        w.list(&self.0, |w, lanes| w.list(lanes, write_lane));
        w.list(&[], write_stacks);
        w.into_bytes()
    }
}

/// An index coming in pieces ([`TraceIndex::to_transfer_pieces`]): its head read, its
/// columns filled a step at a time.
#[derive(Debug)]
pub struct IndexIn {
    index: TraceIndex,
    fill: ColumnFill,
    filled: bool,
    /// An index's stored levels alone ([`IndexLevels::to_transfer_pieces`]), not an index.
    levels_only: bool,
}

impl IndexIn {
    /// Reads the head of `trace`'s index; the streams hold `lens` values (by
    /// [`trace_model::Stream`]) for it ([`trace_model::TraceIn::left`]), and no more.
    pub fn new(head: &[u8], lens: [u64; 3], trace: &Trace) -> Result<IndexIn, TransferError> {
        IndexIn::read(head, lens, trace, true)
    }

    /// Reads the head of `trace`'s index's stored levels, as
    /// [`IndexLevels::to_transfer_pieces`] wrote them, which the streams' `lens` values
    /// hold: [`finish_levels`](Self::finish_levels) gives them once filled.
    pub fn levels(head: &[u8], lens: [u64; 3], trace: &Trace) -> Result<IndexIn, TransferError> {
        IndexIn::read(head, lens, trace, false)
    }

    fn read(
        head: &[u8],
        lens: [u64; 3],
        trace: &Trace,
        pyramids: bool,
    ) -> Result<IndexIn, TransferError> {
        let mut r = R::with_pieces(head, lens);
        let index = read_in(&mut r, trace, pyramids)?;
        if r.pieces_left() != Some([0; 3]) {
            return Err(r.fail("the pieces' columns all read"));
        }
        Ok(IndexIn {
            index,
            fill: ColumnFill::with_zeros(r.col_lens().expect("pieces"), r.col_zeros()),
            filled: false,
            levels_only: !pyramids,
        })
    }

    /// Fills about `budget` bytes of the index's columns from `src`; true once all are.
    pub fn fill(
        &mut self,
        src: &mut dyn ColumnSource,
        budget: usize,
        trace: &Trace,
    ) -> Result<bool, TransferError> {
        let n_str = trace.strings().len() as u32;
        let mut c = self.fill.step(src, budget);
        let lanes = trace.threads().iter().flat_map(|t| &t.lanes);
        for (l, lane) in self.index.threads.iter_mut().flatten().zip(lanes) {
            fill_lane(&mut c, l, lane.len(), n_str);
        }
        for s in &mut self.index.samples {
            for lane in &mut s.lanes {
                c.i64s(&mut lane.start);
                c.i64s(&mut lane.dur);
                c.u32s_by(&mut lane.name, n_str, StrId);
            }
            for (l, n) in s.index.iter_mut().zip(s.lanes.iter().map(|l| l.cat.len())) {
                fill_lane(&mut c, l, n, n_str);
            }
        }
        let done = c.done().map_err(|expected| TransferError {
            offset: 0,
            expected,
        })?;
        self.filled = done;
        Ok(done)
    }

    /// The index, once [`fill`](Self::fill) said it is whole (`None` before, and for
    /// stored levels alone).
    pub fn finish(self) -> Option<TraceIndex> {
        (self.filled && !self.levels_only).then_some(self.index)
    }

    /// The stored levels [`levels`](Self::levels) began to read, once
    /// [`fill`](Self::fill) said they are whole (`None` before, and for an index).
    pub fn finish_levels(self) -> Option<IndexLevels> {
        (self.filled && self.levels_only).then_some(IndexLevels(self.index.threads))
    }
}

/// Fills the columns of `l`, the index of a lane of `n` spans.
fn fill_lane(c: &mut Columns<'_>, l: &mut LaneIndex, n: usize, n_str: u32) {
    for b in &mut l.pyramid.levels {
        c.i64s(&mut b.last_end);
        c.i64s(&mut b.busy);
        c.u32s(&mut b.max_dur);
        c.u32s(&mut b.max_gap);
        c.u32s_by(&mut b.name, n_str, StrId);
    }
    if let Some(v) = &mut l.levels {
        c.records(&mut v.items, |i64s, u32s| {
            let ok = (u32s[0] as usize) < n && u32s[3] < n_str;
            ok.then(|| item(i64s, u32s))
        });
        let items = u32::try_from(v.items.len()).unwrap_or(u32::MAX);
        c.u32s_by(&mut v.saturated, items, |i| i);
        c.i64s(&mut v.skip);
    }
}

fn read(mut r: R<'_>, trace: &Trace) -> Result<TraceIndex, TransferError> {
    let index = read_in(&mut r, trace, true)?;
    if !r.at_end() {
        return Err(r.fail("the end of the buffer"));
    }
    Ok(index)
}

/// The index in `r` (in pieces: its columns zeros, checked as they are filled); without
/// `pyramids`, stored levels alone: every lane's pyramid empty.
fn read_in(r: &mut R<'_>, trace: &Trace, pyramids: bool) -> Result<TraceIndex, TransferError> {
    let threads = r.list(|r| r.list(read_lane))?;
    let mut samples = r.list(read_stacks)?;
    let shape = threads.len() == trace.threads().len()
        && (threads.iter().zip(trace.threads())).all(|(l, t)| l.len() == t.lanes.len());
    if !shape {
        return Err(r.fail("one lane index per lane of the trace"));
    }
    // In pieces the columns are empty: their lengths are the head's, their values are
    // checked as they are filled.
    let mut pieces = r.col_lens().map(|l| l.iter().map(|&n| n as usize));
    for (lanes, t) in threads.iter().zip(trace.threads()) {
        for (l, lane) in lanes.iter().zip(&t.lanes) {
            let lens: Vec<usize> = match &mut pieces {
                Some(p) => p.by_ref().take(col_count(l)).collect(),
                None => col_lens(l),
            };
            check_lane(l, (lane.len(), pyramids), &lens, pieces.is_none())
                .map_err(|what| r.fail(what))?;
        }
    }
    if !(samples.is_empty() || samples.len() == trace.threads().len()) {
        return Err(r.fail("samples' stacks for every thread or none"));
    }
    for (t, s) in samples.iter_mut().enumerate() {
        check_stacks(s, t, trace, &mut pieces).map_err(|what| r.fail(what))?;
    }
    Ok(TraceIndex {
        threads,
        samples,
        later: Default::default(),
    })
}

/// Whether `s` is thread `t`'s samples' stacks: its own track's, an index a depth, the
/// lanes' columns of one length (in pieces, `pieces` gives the lengths of its columns, in
/// [`write_stacks`]'s order) and their names in range (in pieces, checked as filled); the
/// columns every box has alike are made.
fn check_stacks(
    s: &mut SampleStacks,
    t: usize,
    trace: &Trace,
    pieces: &mut Option<impl Iterator<Item = usize>>,
) -> Result<(), &'static str> {
    let own = (trace.samples().get(s.track as usize)).is_some_and(|st| st.thread as usize == t);
    if !(own || s.lanes.is_empty()) || s.lanes.len() != s.index.len() {
        return Err("samples' stacks of the thread's own track, an index a depth");
    }
    let n_str = trace.strings().len() as u32;
    for lane in &mut s.lanes {
        let lens: Vec<usize> = match pieces {
            Some(p) => p.by_ref().take(3).collect(),
            None => vec![lane.start.len(), lane.dur.len(), lane.name.len()],
        };
        if lens.len() != 3 || lens[1] != lens[0] || lens[2] != lens[0] {
            return Err("a stack lane's columns of one length");
        }
        if lane.name.iter().any(|n| n.0 >= n_str) {
            return Err("a stack lane's names in range");
        }
        let n = lens[0];
        lane.cat = vec![StrId::EMPTY; n];
        lane.args = vec![ArgsId::NONE; n];
        lane.flags = vec![0; n];
    }
    for (l, lane) in s.index.iter().zip(&s.lanes) {
        let lens: Vec<usize> = match pieces {
            Some(p) => p.by_ref().take(col_count(l)).collect(),
            None => col_lens(l),
        };
        check_lane(l, (lane.cat.len(), true), &lens, pieces.is_none())?;
    }
    Ok(())
}

/// A thread's samples' stacks: its track, its lanes' own columns (the others are alike in
/// every box), then their indices.
fn write_stacks(w: &mut TransferWriter<'_>, s: &SampleStacks) {
    w.u32(s.track);
    w.list(&s.lanes, |w, l| {
        w.col_i64s(&l.start);
        w.col_i64s(&l.dur);
        w.col_u32s_by(&l.name, |s| s.0);
    });
    w.list(&s.index, write_lane);
}

fn read_stacks(r: &mut R<'_>) -> Result<SampleStacks, TransferError> {
    let track = r.u32()?;
    let lanes = r.list(|r| {
        Ok(Lane {
            start: r.col_i64s()?,
            dur: r.col_i64s()?,
            name: r.col_u32s_by(StrId)?,
            ..Lane::default()
        })
    })?;
    let index = r.list(read_lane)?;
    Ok(SampleStacks {
        track,
        lanes,
        index,
    })
}

/// A lane index's large columns, as [`write_lane`] writes them.
fn col_count(l: &LaneIndex) -> usize {
    l.pyramid.levels.len() * 5 + if l.levels.is_some() { 3 } else { 0 }
}

/// The lengths of a lane index's large columns, in [`write_lane`]'s order.
fn col_lens(l: &LaneIndex) -> Vec<usize> {
    let mut lens = Vec::with_capacity(col_count(l));
    for b in &l.pyramid.levels {
        lens.extend([b.last_end.len(), b.busy.len(), b.max_dur.len()]);
        lens.extend([b.max_gap.len(), b.name.len()]);
    }
    if let Some(v) = &l.levels {
        lens.extend([v.items.len(), v.saturated.len(), v.skip.len()]);
    }
    lens
}

fn write_lane(w: &mut TransferWriter<'_>, l: &LaneIndex) {
    w.list(&l.pyramid.levels, |w, b| {
        w.col_i64s(&b.last_end);
        w.col_i64s(&b.busy);
        w.col_u32s(&b.max_dur);
        w.col_u32s(&b.max_gap);
        w.col_u32s_by(&b.name, |s| s.0);
    });
    w.u8(l.pyramid.sums_fit as u8);
    w.u8(l.levels.is_some() as u8);
    if let Some(v) = &l.levels {
        w.bytes(&v.ks);
        w.u32s(&v.offs);
        w.col_records(&v.items, |it| {
            let u32s = [it.first, it.busy, it.longest, it.name.0];
            ([it.start, it.end], u32s)
        });
        w.col_u32s(&v.saturated);
        w.col_i64s(&v.skip);
        w.u32s(&v.skip_offs);
    }
}

fn read_lane(r: &mut R<'_>) -> Result<LaneIndex, TransferError> {
    let levels = r.list(|r| {
        Ok(Blocks {
            last_end: r.col_i64s()?,
            busy: r.col_i64s()?,
            max_dur: r.col_u32s_by(|v| v)?,
            max_gap: r.col_u32s_by(|v| v)?,
            name: r.col_u32s_by(StrId)?,
        })
    })?;
    let pyramid = Pyramid {
        levels,
        sums_fit: r.bool()?,
    };
    let levels = match r.bool()? {
        false => None,
        true => Some(Box::new(Levels {
            ks: r.take_len(1, "level numbers")?.to_vec(),
            offs: r.u32s()?,
            items: r.col_records(item)?,
            saturated: r.col_u32s_by(|v| v)?,
            skip: r.col_i64s()?,
            skip_offs: r.u32s()?,
        })),
    };
    let ks = levels.as_ref().map_or(&[][..], |l| &l.ks[..]);
    if ks.iter().any(|&k| k >= 128) {
        return Err(r.fail("level numbers below 128"));
    }
    let stored = ks.iter().fold(0u128, |m, &k| m | 1 << k);
    Ok(LaneIndex {
        pyramid,
        levels,
        stored,
    })
}

/// A level item from its numbers, as `write_lane` writes them.
fn item([start, end]: [i64; 2], [first, busy, longest, name]: [u32; 4]) -> LevelItem {
    LevelItem {
        start,
        end,
        first,
        busy,
        longest,
        name: StrId(name),
    }
}

/// Whether `l`, its large columns `lens` long, has the shape an index of a lane of `n` spans has (see
/// the module's overview), its pyramid too where `pyramid` (else it has none: stored levels
/// alone); with `content`, its columns' values too (in pieces they are checked as they are
/// filled).
fn check_lane(
    l: &LaneIndex,
    (n, pyramid): (usize, bool),
    lens: &[usize],
    content: bool,
) -> Result<(), &'static str> {
    let mut want = if n <= FANOUT || !pyramid {
        0
    } else {
        n.div_ceil(FANOUT)
    };
    if lens.len() != col_count(l) {
        return Err("every column of the lane's index");
    }
    for level in lens[..l.pyramid.levels.len() * 5].chunks(5) {
        if want == 0 || level.iter().any(|&m| m != want) {
            return Err("pyramid levels as long as the lane makes them");
        }
        want = if want > FANOUT {
            want.div_ceil(FANOUT)
        } else {
            0
        };
    }
    if want != 0 {
        return Err("every pyramid level of the lane");
    }
    let Some(v) = &l.levels else {
        return Ok(());
    };
    let [items, _, skip] = lens[lens.len() - 3..] else {
        return Err("every column of the lane's index");
    };
    let ascending = |o: &[u32], len: usize| {
        o.len() == v.ks.len() + 1
            && o.first() == Some(&0)
            && o.windows(2).all(|w| w[0] <= w[1])
            && o.last() == Some(&(len as u32))
    };
    let ok = v.ks.windows(2).all(|w| w[0] < w[1])
        && ascending(&v.offs, items)
        && ascending(&v.skip_offs, skip)
        && (!content || v.items.iter().all(|it| (it.first as usize) < n))
        && (!content || v.saturated.iter().all(|&i| (i as usize) < v.items.len()));
    match ok {
        true => Ok(()),
        false => Err("stored levels in range"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `levels` through a transfer in pieces on their own, as a page takes them, for `t`.
    pub(crate) fn levels_in_pieces(
        t: &Trace,
        levels: IndexLevels,
    ) -> Result<IndexLevels, TransferError> {
        let mut cols = trace_model::MemoryColumns::default();
        let head = levels.to_transfer_pieces(&mut cols);
        let mut iin = IndexIn::levels(&head, cols.lens(), t)?;
        while !iin.fill(&mut cols, 1 << 12, t)? {}
        assert!(cols.at_end());
        Ok(iin.finish_levels().expect("filled"))
    }

    /// Stored levels alone cross without pyramids, and are read only as such: an index's
    /// part read as levels, levels read as an index, a cut head and another trace's levels
    /// are errors.
    #[test]
    fn levels_alone_come_back_the_same_and_only_as_levels() {
        let t = trace();
        let index = TraceIndex::build(&t);
        let (mut cols, mut index_cols) = Default::default();
        let head = index.clone().take_levels().to_transfer_pieces(&mut cols);
        let index_head = index.to_transfer_pieces(&mut index_cols);
        let back = levels_in_pieces(&t, index.clone().take_levels()).unwrap();
        assert_eq!(
            format!("{back:?}"),
            format!("{:?}", index.clone().take_levels())
        );
        let lens = |c: &trace_model::MemoryColumns| c.lens();
        // The pyramids' columns stay behind: fewer 32-bit values (their durations, gaps
        // and names; the levels' items cross as records).
        assert!(lens(&cols)[1] < lens(&index_cols)[1], "no pyramids crossed");
        assert!(IndexIn::new(&head, lens(&cols), &t).is_err());
        assert!(IndexIn::levels(&index_head, lens(&index_cols), &t).is_err());
        for n in (0..head.len()).step_by(5) {
            assert!(
                IndexIn::levels(&head[..n], lens(&cols), &t).is_err(),
                "cut at {n}"
            );
        }
        let other = trace_model::load("../../tests/fixtures/real/catapult_flow.json").unwrap();
        assert!(IndexIn::levels(&head, lens(&cols), &other).is_err());
        let iin = IndexIn::levels(&head, lens(&cols), &t).unwrap();
        assert!(iin.finish().is_none(), "levels are not an index");
    }

    fn trace() -> Trace {
        trace_model::load("../../tests/fixtures/real/catapult_big_trace.json").unwrap()
    }

    #[test]
    fn an_index_comes_back_the_same() {
        let t = trace();
        let index = TraceIndex::build(&t);
        let bytes = index.to_transfer();
        let back = TraceIndex::from_transfer(&bytes, &t).unwrap();
        assert_eq!(
            format!("{:?}", back.threads),
            format!("{:?}", index.threads)
        );
        assert!(back.heap_bytes() > 0);
    }

    /// The trace and its index through a transfer in pieces, `budget` bytes a step.
    fn in_pieces(
        t: &Trace,
        index: &TraceIndex,
        budget: usize,
    ) -> Result<TraceIndex, TransferError> {
        let mut cols = trace_model::MemoryColumns::default();
        let head = t.to_transfer_pieces(&mut cols);
        let index_head = index.to_transfer_pieces(&mut cols);
        let mut tin = trace_model::TraceIn::new(&head, cols.lens())?;
        while !tin.fill(&mut cols, budget)? {}
        let back = tin.finish().expect("filled");
        let mut iin = IndexIn::new(&index_head, tin_left(&head, &cols)?, &back)?;
        while !iin.fill(&mut cols, budget, &back)? {}
        assert!(cols.at_end());
        Ok(iin.finish().expect("filled"))
    }

    fn tin_left(head: &[u8], cols: &trace_model::MemoryColumns) -> Result<[u64; 3], TransferError> {
        Ok(trace_model::TraceIn::new(head, cols.lens())?.left())
    }

    #[test]
    fn an_index_comes_back_the_same_in_pieces() {
        let t = trace();
        let index = TraceIndex::build(&t);
        for budget in [1 << 10, usize::MAX / 2] {
            let back = in_pieces(&t, &index, budget).unwrap();
            assert_eq!(
                format!("{:?}", back.threads),
                format!("{:?}", index.threads)
            );
        }
    }

    #[test]
    fn damaged_index_pieces_are_an_error() {
        let t = trace();
        let index = TraceIndex::build(&t);
        let mut cols = trace_model::MemoryColumns::default();
        let head = t.to_transfer_pieces(&mut cols);
        let index_head = index.to_transfer_pieces(&mut cols);
        let left = tin_left(&head, &cols).unwrap();
        for n in (0..index_head.len()).step_by(5) {
            assert!(
                IndexIn::new(&index_head[..n], left, &t).is_err(),
                "cut at {n}"
            );
        }
        // More values in the streams than the index has columns for; another trace.
        assert!(IndexIn::new(&index_head, [left[0] + 1, left[1], left[2]], &t).is_err());
        let other = trace_model::load("../../tests/fixtures/real/catapult_flow.json").unwrap();
        assert!(IndexIn::new(&index_head, left, &other).is_err());
        // Level items past their lane, names past the strings: the fill finds them.
        assert!(index.threads.iter().flatten().any(|l| l.levels.is_some()));
        let mut bad = cols.clone();
        let lens = bad.lens();
        bad.read = [0, 1, 2].map(|s| (lens[s] - left[s]) as usize);
        let from = bad.read[1];
        bad.u32s[from..].fill(u32::MAX);
        let mut iin = IndexIn::new(&index_head, left, &t).unwrap();
        assert!(iin.fill(&mut bad, usize::MAX / 2, &t).is_err());
    }

    /// A real Firefox Profiler recording's samples' stacks, built with the index (as a
    /// browser's worker does), come back as the page would build them, whole and in
    /// pieces; a cut buffer, another thread's track and names past the strings are errors.
    #[test]
    fn sample_stacks_come_back_as_the_page_would_build_them() {
        let t =
            trace_model::load("../../tests/fixtures/real/profiles/firefox_page.json.gz").unwrap();
        let want = format!("{:?}", SampleStacks::by_thread(&t));
        let mut index = TraceIndex::build(&t);
        index.add_sample_stacks(&t);
        let deep = (index.samples.iter()).filter(|s| s.lanes.iter().any(|l| l.len() > FANOUT));
        assert!(deep.count() >= 1, "a lane with pyramid levels");
        let bytes = index.to_transfer();
        let mut back = TraceIndex::from_transfer(&bytes, &t).unwrap();
        assert_eq!(format!("{:?}", back.take_sample_stacks()), want);
        for budget in [1 << 10, usize::MAX / 2] {
            let mut back = in_pieces(&t, &index, budget).unwrap();
            let k = crate::EventIndex::with_sample_stacks(&t, back.take_sample_stacks());
            assert_eq!(format!("{:?}", k.sample_stacks), want);
        }
        for n in (0..bytes.len()).step_by(11) {
            assert!(
                TraceIndex::from_transfer(&bytes[..n], &t).is_err(),
                "cut at {n}"
            );
        }
        let with = |f: &dyn Fn(&mut SampleStacks)| {
            let mut bad = index.clone();
            let s = (bad.samples.iter_mut())
                .find(|s| !s.lanes.is_empty())
                .unwrap();
            f(s);
            TraceIndex::from_transfer(&bad.to_transfer(), &t)
        };
        assert!(with(&|s| s.track = t.samples().len() as u32).is_err());
        assert!(with(&|s| s.lanes[0].name[0] = StrId(u32::MAX)).is_err());
        assert!(with(&|s| drop(s.index.pop())).is_err());
        assert!(with(&|_| {}).is_ok());
    }

    #[test]
    fn a_damaged_buffer_or_another_trace_is_an_error() {
        let t = trace();
        let bytes = TraceIndex::build(&t).to_transfer();
        for n in (0..bytes.len()).step_by(7) {
            assert!(
                TraceIndex::from_transfer(&bytes[..n], &t).is_err(),
                "cut at {n}"
            );
            let mut b = bytes.clone();
            b[n] ^= 0x5a;
            let _ = TraceIndex::from_transfer(&b, &t);
        }
        let other = trace_model::load("../../tests/fixtures/real/catapult_flow.json").unwrap();
        assert!(TraceIndex::from_transfer(&bytes, &other).is_err());
    }
}
