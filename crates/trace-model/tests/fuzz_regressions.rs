//! Inputs found by the fuzzers (fuzz/, docs/TESTING.md) that broke an invariant of the
//! model's computations, kept as regression tests.

use trace_model::{FlameOptions, FlameSort};

fn fixture(rel: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_child_outliving_its_parent_is_no_wider_than_it_in_the_flame_graph() {
    // fuzz target `flame`, 2026-11-24: a span that partially overlaps its parent's end was
    // merged with its whole duration, so the frame was wider than its parent's.
    let t = trace_model::load_bytes(&fixture("fuzz/flame-partial-overlap.json")).unwrap();
    assert!(t.diagnostics().total() > 0);
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
            let p = tree.parent[i] as usize;
            assert!(tree.x[i] + tree.total[i] <= tree.x[p] + tree.total[p] || p == 0);
        }
    }
}
