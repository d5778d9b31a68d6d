//! Inputs found by the fuzzers (fuzz/, docs/TESTING.md) that broke an invariant of the
//! model's computations, kept as regression tests.

use spall_test_support::fixture_bytes;
use trace_model::{FlameOptions, FlameSort};

#[test]
fn flame_frames_never_lie_left_of_their_parent() {
    // fuzz target `flame`, 2026-11-24: durations whose sum saturates i64. Offsets were laid
    // out backwards from the saturated end, putting a first child left of its parent.
    let t = trace_model::load_bytes(&fixture_bytes("fuzz/flame-saturated-offsets.json")).unwrap();
    for per_thread in [false, true] {
        let opts = FlameOptions {
            per_thread,
            ..FlameOptions::default()
        };
        for sort in [FlameSort::Heaviest, FlameSort::Name] {
            let tree = t.flame(&opts, sort);
            for i in 1..tree.len() {
                let p = tree.parent[i] as usize;
                assert!(
                    tree.x[i] >= tree.x[p],
                    "node {i}: {} < {}",
                    tree.x[i],
                    tree.x[p]
                );
            }
        }
    }
}

#[test]
fn a_child_outliving_its_parent_is_no_wider_than_it() {
    // fuzz target `flame`, 2026-11-24: a span that outlives its parent (a partial overlap)
    // was merged with its whole duration, so its frame was wider than its parent's. Real
    // Bazel profiles have them; they count up to the parent's end now.
    let t =
        trace_model::load_bytes(&fixture_bytes("real/bazel_profile_with_queuing.json.gz")).unwrap();
    let overlaps = (t.diagnostics().counts())
        .filter(|(k, _)| format!("{k:?}").contains("PartialOverlap"))
        .map(|(_, n)| n)
        .sum::<u64>();
    assert!(overlaps > 0, "the fixture should have partial overlaps");
    for sort in [FlameSort::Heaviest, FlameSort::Name] {
        let tree = t.flame(&FlameOptions::default(), sort);
        for i in 1..tree.len() {
            let kids: i64 = tree
                .children(i as u32)
                .map(|c| tree.total[c as usize])
                .sum();
            assert!(
                kids <= tree.total[i],
                "node {i}: children {kids} > {}",
                tree.total[i]
            );
            assert!(tree.self_ns[i] >= 0);
        }
    }
}
