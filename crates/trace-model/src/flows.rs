//! Binding flow points to slices: the arrows between spans, by chrome://tracing's rule.
//!
//! This is the viewer's rule: it draws arrows as chrome://tracing draws them, between the
//! spans the model keeps. SQL's `flow` table follows trace_processor's rule instead (an
//! `s` leaves the slice on top of its stack, an instant too; an `f` does not end the flow;
//! spans trace_processor drops are skipped), bound in `crate::perfetto::flows` from the
//! same points, with [`bind_point`] as its start. The two differ on purpose: each agrees
//! with the tool its readers compare against.
//!
//! A flow's points (`s`, `t`, `f`, in time order) each bind to a span of their thread, as
//! chrome://tracing does: `s`, `t`, and `f` with `bp: "e"` bind to the *enclosing* span (the
//! deepest one containing the point's time); an `f` without it binds to the *next* span (the
//! first to start at or after its time, the shallowest on a tie). An `s` starts a chain, each
//! `t` continues it and an `f` ends it (ids get reused); each step between two bound points
//! is one [`FlowLink`]. Flow v2 (`bind_id` with `flow_out`/`flow_in` on a slice, as Perfetto
//! writes them) binds to that slice itself. A point that finds no span is counted
//! ([`ModelWarning::FlowUnbound`]) and skipped.

mod search;

use spall_format::Diagnostics;

use crate::diag::ModelWarning;
use crate::event_kinds::{Flow, FlowPoint};
use crate::span::{SpanRef, Thread};
use search::{Cursors, Find, Search};

/// An arrow from the span a flow leaves to the span it arrives at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowLink {
    /// The span the arrow leaves.
    pub from: SpanRef,
    /// The span the arrow arrives at.
    pub to: SpanRef,
    /// Index into [`Trace::flows`](crate::Trace::flows).
    pub flow: u32,
}

/// Binds every flow; the links come sorted by `from`. Every point's span is found first,
/// thread by thread on every core ([`spans_of_points`]); then flows link apart, and the
/// points that found none are warned of in the flows' order.
pub(crate) fn bind(
    threads: &[Thread],
    flows: &[Flow],
    diags: &mut Diagnostics<ModelWarning>,
) -> Vec<FlowLink> {
    use rayon::prelude::*;
    type Bound<'f> = (Vec<FlowLink>, Vec<&'f FlowPoint>);
    fn join<'f>(mut a: Bound<'f>, b: Bound<'f>) -> Bound<'f> {
        a.0.extend(b.0);
        a.1.extend(b.1);
        a
    }
    let spans = spans_of_points(threads, flows);
    let mut first = Vec::with_capacity(flows.len());
    let mut n = 0;
    for f in flows {
        first.push(n);
        n += f.points.len();
    }
    let (mut links, unbound) = (flows.par_iter().zip(&first).enumerate())
        .with_min_len(256)
        .fold(Bound::default, |mut acc, (fi, (f, &at))| {
            let spans = &spans[at..at + f.points.len()];
            bind_flow(fi as u32, f, spans, &mut acc.0, &mut acc.1);
            acc
        })
        .reduce(Bound::default, join);
    for p in unbound {
        diags.warn(ModelWarning::FlowUnbound, p.offset, || {
            format!(
                "flow {:?} event at {} ns is inside no span of its thread; not drawn",
                p.phase as char, p.ts
            )
        });
    }
    links.sort_unstable();
    links
}

/// Each point's span, in the flows' order (flow by flow, point by point): a thread's
/// points are served in time order by one set of [`Cursors`], threads on every core.
fn spans_of_points(threads: &[Thread], flows: &[Flow]) -> Vec<Option<SpanRef>> {
    use rayon::prelude::*;
    let points: Vec<&FlowPoint> = flows.iter().flat_map(|f| &f.points).collect();
    let mut order: Vec<(u32, i64, u32)> = (points.iter().enumerate())
        .map(|(i, p)| (p.thread, p.ts, i as u32))
        .collect();
    crate::radix::sort_by_key(&mut order, |p| crate::radix::time_key(p.1));
    crate::radix::sort_by_key(&mut order, |p| p.0 as u64);
    let by_thread: Vec<&[(u32, i64, u32)]> = order.chunk_by(|a, b| a.0 == b.0).collect();
    let found: Vec<Vec<(u32, Option<SpanRef>)>> = (by_thread.par_iter())
        .map(|run| {
            let lanes = threads.get(run[0].0 as usize).map_or(0, |t| t.lanes.len());
            let mut c = Cursors::new(lanes);
            let at =
                |&(_, _, i): &(u32, i64, u32)| (i, find_span(threads, points[i as usize], &mut c));
            run.iter().map(at).collect()
        })
        .collect();
    let mut spans = vec![None; points.len()];
    for (i, r) in found.into_iter().flatten() {
        spans[i as usize] = r;
    }
    spans
}

/// Flow `f`'s (number `fi`) links, onto `links`, from its points' `spans`; its points
/// bound to no span, onto `unbound`.
fn bind_flow<'f>(
    fi: u32,
    f: &'f Flow,
    spans: &[Option<SpanRef>],
    links: &mut Vec<FlowLink>,
    unbound: &mut Vec<&'f FlowPoint>,
) {
    // An `s` starts a chain, a `t` continues it, an `f` ends it: ids get reused.
    let mut prev: Option<SpanRef> = None;
    for (p, &r) in f.points.iter().zip(spans) {
        if r.is_none() {
            unbound.push(p);
        }
        if p.phase != b's' {
            if let (Some(from), Some(to)) = (prev, r) {
                if from != to {
                    links.push(FlowLink { from, to, flow: fi });
                }
            }
        }
        prev = if p.phase == b'f' { None } else { r };
    }
}

/// The span point `p` binds to, by chrome://tracing's rule (see the module's overview).
pub(crate) fn bind_point(threads: &[Thread], p: &FlowPoint) -> Option<SpanRef> {
    find_span(threads, p, &mut Search)
}

/// [`bind_point`], its lanes searched by `find`.
fn find_span(threads: &[Thread], p: &FlowPoint, find: &mut impl Find) -> Option<SpanRef> {
    let th = threads.get(p.thread as usize)?;
    let at = |depth: usize, index: usize| SpanRef {
        thread: p.thread,
        depth: depth as u32,
        index: index as u32,
    };
    if p.on_slice {
        // The slice that carried the point: starting at its time, with its duration and
        // name (a parent beginning with it may last as long); the shallowest when several
        // match, and without the name when none has it.
        let mut slice = |by_name: bool| {
            th.lanes.iter().enumerate().find_map(|(d, lane)| {
                let i = find.by_start(d, lane, p.ts);
                (i..lane.len())
                    .take_while(|&i| lane.start[i] == p.ts)
                    .find(|&i| {
                        (p.span_dur < 0 || lane.dur[i] == p.span_dur)
                            && (!by_name || lane.name[i] == p.span_name)
                    })
                    .map(|i| at(d, i))
            })
        };
        return slice(true).or_else(|| slice(false));
    }
    if p.phase != b'f' || p.bind_enclosing {
        // The deepest span containing the time.
        for (d, lane) in th.lanes.iter().enumerate().rev() {
            let i = find.by_end(d, lane, p.ts);
            if i < lane.len() && lane.start[i] <= p.ts {
                return Some(at(d, i));
            }
        }
        None
    } else {
        // The first span to start at or after the time, the shallowest on a tie.
        let mut best: Option<(i64, SpanRef)> = None;
        for (d, lane) in th.lanes.iter().enumerate() {
            let i = find.by_start(d, lane, p.ts);
            if i < lane.len() && best.is_none_or(|(s, _)| lane.start[i] < s) {
                best = Some((lane.start[i], at(d, i)));
            }
        }
        best.map(|b| b.1)
    }
}

#[cfg(test)]
mod tests {
    use crate::{load_bytes, ModelWarning, Trace};

    /// Every link as (from span's name, to span's name).
    fn link_names(t: &Trace) -> Vec<(String, String)> {
        let name = |r| t.str(t.span(r).name).to_string();
        t.flow_links()
            .iter()
            .map(|l| (name(l.from), name(l.to)))
            .collect()
    }

    #[test]
    fn flow_v2_binds_the_slices_that_carry_it() {
        // `outer` and `inner` start together: the flow leaves `inner` (its duration says
        // so), passes through `mid` (in and out), and ends at `B`-`E` slice `done`.
        let t = load_bytes(
            br#"[
            {"ph":"X","name":"outer","ts":0,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"inner","ts":0,"dur":4,"pid":1,"tid":1,"bind_id":"0x1","flow_out":true},
            {"ph":"X","name":"mid","ts":20,"dur":5,"pid":1,"tid":2,"bind_id":"0x1","flow_in":true,"flow_out":true,"cat":"x"},
            {"ph":"B","name":"done","ts":30,"pid":2,"tid":3,"bind_id":"0x1","flow_in":true},
            {"ph":"E","ts":31,"pid":2,"tid":3},
            {"ph":"X","name":"plain","ts":40,"dur":1,"pid":2,"tid":3,"bind_id":"0x1"}
        ]"#,
        )
        .unwrap();
        let pairs = link_names(&t);
        assert_eq!(pairs.len(), 2, "{pairs:?}");
        assert!(pairs.contains(&("inner".into(), "mid".into())));
        assert!(pairs.contains(&("mid".into(), "done".into())));
        assert_eq!(t.flows().len(), 1);
        assert_eq!(t.diagnostics().count(ModelWarning::FlowUnbound), 0);
    }

    #[test]
    fn flow_v2_binds_the_carrier_not_its_twin_parent() {
        // `inner` begins with `outer` and lasts as long: the flow leaves `inner`, which
        // carried it, as trace_processor binds it.
        let t = load_bytes(
            br#"[
            {"ph":"X","name":"outer","ts":0,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"inner","ts":0,"dur":10,"pid":1,"tid":1,"bind_id":"0x1","flow_out":true},
            {"ph":"B","name":"recv","ts":20,"pid":1,"tid":2},
            {"ph":"B","name":"in","ts":20,"pid":1,"tid":2,"bind_id":"0x1","flow_in":true},
            {"ph":"E","ts":25,"pid":1,"tid":2},
            {"ph":"E","ts":25,"pid":1,"tid":2}
        ]"#,
        )
        .unwrap();
        assert_eq!(link_names(&t), vec![("inner".into(), "in".into())]);
    }

    #[test]
    fn points_bind_to_enclosing_and_next_spans() {
        let t = load_bytes(
            br#"[
            {"ph":"X","name":"send","ts":0,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"inner","ts":2,"dur":4,"pid":1,"tid":1},
            {"ph":"X","name":"recv","ts":20,"dur":5,"pid":1,"tid":2},
            {"ph":"X","name":"later","ts":40,"dur":5,"pid":1,"tid":2},
            {"ph":"s","name":"f","cat":"c","id":1,"ts":3,"pid":1,"tid":1},
            {"ph":"f","name":"f","cat":"c","id":1,"ts":21,"bp":"e","pid":1,"tid":2},
            {"ph":"s","name":"g","cat":"c","id":2,"ts":8,"pid":1,"tid":1},
            {"ph":"f","name":"g","cat":"c","id":2,"ts":30,"pid":1,"tid":2},
            {"ph":"s","name":"h","cat":"c","id":3,"ts":100,"pid":1,"tid":1}
        ]"#,
        )
        .unwrap();
        let pairs = link_names(&t);
        assert_eq!(
            pairs,
            vec![
                ("send".to_string(), "later".to_string()),
                ("inner".to_string(), "recv".to_string())
            ]
        );
        assert_eq!(t.diagnostics().count(ModelWarning::FlowUnbound), 1);
        let inner = t.flow_links()[1].from;
        assert_eq!(t.flows_from(inner).count(), 1);
        let recv = t.flow_links()[1].to;
        assert_eq!(
            t.flows_into(recv).map(|l| l.from).collect::<Vec<_>>(),
            vec![inner]
        );
    }

    /// Many flows bind on every core as on one: the same links, and the points that bind
    /// to no span warned of in the same order (the first one's message kept).
    /// Each point's span found thread by thread in time order is the one a search of every
    /// lane finds, on real traces with flows of each kind: Perfetto's flow ids on slices
    /// (Chromium 156), and chrome://tracing's `s`, `t`, `f` (catapult's, the older Chrome's).
    #[test]
    fn points_in_time_order_bind_as_a_search_each() {
        for name in [
            "real/chromium156_script_all.pftrace.gz",
            "real/chromium148_script_all.json.gz",
            "real/catapult_flow.json",
            "real/catapult_flow_simple.json",
        ] {
            let t = load_bytes(&spall_test_support::fixture_bytes(name)).unwrap();
            let spans = super::spans_of_points(&t.threads, t.flows());
            let points: Vec<_> = t.flows().iter().flat_map(|f| &f.points).collect();
            assert!(points.len() > 2, "{name}: {} points", points.len());
            assert_eq!(spans.len(), points.len(), "{name}");
            let mut bound = 0;
            for (p, s) in points.iter().zip(&spans) {
                assert_eq!(*s, t.flow_point_span(p), "{name}: {p:?}");
                bound += s.is_some() as usize;
            }
            assert!(
                bound > points.len() / 2,
                "{name}: {bound} of {}",
                points.len()
            );
        }
    }

    #[test]
    fn many_flows_bind_alike_on_one_core_and_four() {
        let mut json = String::from("[");
        for i in 0..3_000 {
            let ts = i * 100;
            // A span on each thread; every seventh flow starts past any span of thread 1.
            let s_ts = if i % 7 == 0 { 1_000_000 + i } else { ts + 1 };
            json += &format!(
                r#"{{"ph":"X","name":"a{i}","ts":{ts},"dur":50,"pid":1,"tid":1}},
                {{"ph":"X","name":"b{i}","ts":{ts},"dur":50,"pid":1,"tid":2}},
                {{"ph":"s","name":"f","cat":"c","id":{i},"ts":{s_ts},"pid":1,"tid":1}},
                {{"ph":"f","name":"f","cat":"c","id":{i},"ts":{},"bp":"e","pid":1,"tid":2}},"#,
                ts + 2
            );
        }
        json.pop();
        json.push(']');
        let on = |n: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            pool.install(|| load_bytes(json.as_bytes()).unwrap())
        };
        let (one, four) = (on(1), on(4));
        assert_eq!(one.flow_links().len(), 3_000 - 3_000 / 7 - 1);
        assert_eq!(one.diagnostics().count(ModelWarning::FlowUnbound), 429);
        assert_eq!(one.flow_links(), four.flow_links());
        assert_eq!(
            format!("{:?}", one.diagnostics()),
            format!("{:?}", four.diagnostics())
        );
    }
}
