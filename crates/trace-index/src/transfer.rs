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

use trace_model::{Lane, StrId, Trace, TransferError, TransferReader, TransferWriter};

use crate::lane::LaneIndex;
use crate::levels::{LevelItem, Levels};
use crate::pyramid::{Blocks, Pyramid, FANOUT};
use crate::TraceIndex;

type R<'a> = TransferReader<'a>;

impl TraceIndex {
    /// The index as one buffer for [`TraceIndex::from_transfer`] (about its heap size).
    pub fn to_transfer(&self) -> Vec<u8> {
        let mut w = TransferWriter::with_capacity(self.heap_bytes() + 64);
        w.list(&self.threads, |w, lanes| w.list(lanes, write_lane));
        w.into_bytes()
    }

    /// The index [`TraceIndex::to_transfer`] wrote for `trace`.
    pub fn from_transfer(bytes: &[u8], trace: &Trace) -> Result<TraceIndex, TransferError> {
        let mut r = R::new(bytes);
        let threads = r.list(|r| r.list(read_lane))?;
        let shape = threads.len() == trace.threads().len()
            && (threads.iter().zip(trace.threads())).all(|(l, t)| l.len() == t.lanes.len());
        if !shape {
            return Err(r.fail("one lane index per lane of the trace"));
        }
        for (lanes, t) in threads.iter().zip(trace.threads()) {
            for (l, lane) in lanes.iter().zip(&t.lanes) {
                check_lane(l, lane).map_err(|what| r.fail(what))?;
            }
        }
        if !r.at_end() {
            return Err(r.fail("the end of the buffer"));
        }
        Ok(TraceIndex { threads })
    }
}

fn write_lane(w: &mut TransferWriter, l: &LaneIndex) {
    w.list(&l.pyramid.levels, |w, b| {
        w.i64s(&b.last_end);
        w.i64s(&b.busy);
        w.u32s(&b.max_dur);
        w.u32s(&b.max_gap);
        w.u32s_by(&b.name, |s| s.0);
    });
    w.u8(l.pyramid.sums_fit as u8);
    w.u8(l.levels.is_some() as u8);
    if let Some(v) = &l.levels {
        w.bytes(&v.ks);
        w.u32s(&v.offs);
        w.list(&v.items, |w, it| {
            w.i64(it.start);
            w.i64(it.end);
            w.u32(it.first);
            w.u32(it.busy);
            w.u32(it.longest);
            w.u32(it.name.0);
        });
        w.u32s(&v.saturated);
        w.i64s(&v.skip);
        w.u32s(&v.skip_offs);
    }
}

fn read_lane(r: &mut R<'_>) -> Result<LaneIndex, TransferError> {
    let levels = r.list(|r| {
        Ok(Blocks {
            last_end: r.i64s()?,
            busy: r.i64s()?,
            max_dur: r.u32s()?,
            max_gap: r.u32s()?,
            name: r.u32s()?.into_iter().map(StrId).collect(),
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
            items: r.list(|r| {
                Ok(LevelItem {
                    start: r.i64()?,
                    end: r.i64()?,
                    first: r.u32()?,
                    busy: r.u32()?,
                    longest: r.u32()?,
                    name: StrId(r.u32()?),
                })
            })?,
            saturated: r.u32s()?,
            skip: r.i64s()?,
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

/// Whether `l` has the shape an index of `lane` has (see the module's overview).
fn check_lane(l: &LaneIndex, lane: &Lane) -> Result<(), &'static str> {
    let n = lane.len();
    let mut want = if n <= FANOUT { 0 } else { n.div_ceil(FANOUT) };
    for b in &l.pyramid.levels {
        let lens = [b.busy.len(), b.max_dur.len(), b.max_gap.len(), b.name.len()];
        if want == 0 || b.last_end.len() != want || lens.iter().any(|&m| m != want) {
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
    let ascending = |o: &[u32], len: usize| {
        o.len() == v.ks.len() + 1
            && o.first() == Some(&0)
            && o.windows(2).all(|w| w[0] <= w[1])
            && o.last() == Some(&(len as u32))
    };
    let ok = v.ks.windows(2).all(|w| w[0] < w[1])
        && ascending(&v.offs, v.items.len())
        && ascending(&v.skip_offs, v.skip.len())
        && v.items.iter().all(|it| (it.first as usize) < n)
        && v.saturated.iter().all(|&i| (i as usize) < v.items.len());
    match ok {
        true => Ok(()),
        false => Err("stored levels in range"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
