//! Loading matches B/E events as they stream in (falling back to buffering when a thread's
//! events go back in time). It must give exactly what the buffered builder gives, on every
//! fixture.

use crate::common::buffered;
use spall_format::DiagnosticKind;
use trace_model::{load_bytes, Trace};

/// Every lane's spans as (start, dur, name, flags), and the warning counts.
type Shape = (Vec<Vec<(i64, i64, String, u8)>>, Vec<(String, u64)>);

fn shape(t: &Trace) -> Shape {
    let lanes = t
        .threads()
        .iter()
        .flat_map(|th| &th.lanes)
        .map(|l| {
            (0..l.len())
                .map(|i| {
                    (
                        l.start[i],
                        l.dur[i],
                        t.str(l.name[i]).to_string(),
                        l.flags[i],
                    )
                })
                .collect()
        })
        .collect();
    let diags = t
        .diagnostics()
        .counts()
        .map(|(k, n)| (k.name().into_owned(), n))
        .collect();
    (lanes, diags)
}

#[test]
fn streaming_and_buffered_loads_agree_on_every_fixture() {
    let root = spall_test_support::fixture("");
    let mut files = Vec::new();
    for dir in ["edge", "real", "real/clang", "spall"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() && p.extension().is_some_and(|x| x != "md") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 40);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let (a, b) = (load_bytes(&bytes).unwrap(), buffered(&bytes));
        assert_eq!(shape(&a), shape(&b), "{}", f.display());
        assert_eq!(a.span_count(), b.span_count());
    }
}
