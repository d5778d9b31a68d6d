//! `SpallLayer`'s output has the same nesting as the `tracing` spans that produced it.
//! The session is process-wide: the test holds `one_session()` while it records.

use std::collections::BTreeMap;

use tracing_subscriber::layer::SubscriberExt;

#[tracing::instrument]
fn middle(n: u32) {
    for _ in 0..n {
        inner();
    }
}

#[tracing::instrument]
fn inner() {
    tracing::info!(answer = 42, "found it");
}

/// Each span's ancestry, `outer/middle/inner`, with how often it occurs.
fn paths(trace: &trace_model::Trace) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for t in trace.threads() {
        for (d, lane) in t.lanes.iter().enumerate() {
            for i in 0..lane.len() {
                let mut path = vec![trace.str(lane.name[i])];
                let at = lane.start[i];
                for up in (0..d).rev() {
                    let l = &t.lanes[up];
                    let j = l.start.partition_point(|&s| s <= at) - 1;
                    path.push(trace.str(l.name[j]));
                }
                path.reverse();
                *out.entry(path.join("/")).or_default() += 1;
            }
        }
    }
    out
}

#[test]
fn layer_output_nests_like_the_tracing_spans() {
    let _session = crate::one_session();
    let dir = spall_test_support::scratch_dir("layer");
    let path = dir.join("layer.spall");
    let guard = spall_trace::init(&path).unwrap();
    let subscriber = tracing_subscriber::registry().with(spall_trace::SpallLayer::new());
    tracing::subscriber::with_default(subscriber, || {
        let outer = tracing::info_span!("outer", frame = 7);
        let _o = outer.enter();
        middle(2);
        middle(3);
        // Entering the same span again makes a second slice, as in tracing-chrome.
        let again = tracing::info_span!("again");
        again.in_scope(|| {});
        again.in_scope(|| {});
    });
    guard.finish().unwrap();

    let trace = trace_model::load(&path).unwrap();
    assert!(trace.diagnostics().is_empty(), "{:?}", trace.diagnostics());
    let expected: BTreeMap<String, usize> = [
        ("outer", 1),
        ("outer/middle", 2),
        ("outer/middle/inner", 5),
        ("outer/again", 2),
    ]
    .into_iter()
    .map(|(p, n)| (p.to_string(), n))
    .collect();
    assert_eq!(paths(&trace), expected);

    // Fields become args; events become instants named by their message.
    let args: Vec<String> = trace.threads()[0].lanes[1]
        .args
        .iter()
        .map(|&a| {
            trace
                .args()
                .get(a)
                .map(|(s, _)| s.to_string())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(args, ["n=2", "n=3", "", ""]);
    let instants = trace.instants();
    assert_eq!(instants.len(), 5);
    assert!(instants.iter().all(|i| trace.str(i.name) == "found it"));
    std::fs::remove_dir_all(&dir).unwrap();
}
