//! A thread's samples as stacks over time (trace-index's `SampleStacks`): describing a
//! picked box (`view::timeline::stack_box` finds it). The boxes are drawn as span lanes are (`draw.rs`).

use trace_model::weight_text;

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::view::timeline::stack_box;
use crate::view::viewport::format_duration;

/// A box's title (its frame), where the frame is in the source, how many samples it
/// covers and what they weigh, and when.
pub fn describe_stack(l: &Loaded, p: Pick) -> Vec<String> {
    let t = &l.trace;
    let (Pick::Stack { track, depth, .. }, Some((lane, i)), Some(f)) =
        (p, stack_box(l, p), crate::kinds::pick_frame(t, p))
    else {
        return Vec::new();
    };
    let st = &t.samples()[track as usize];
    let fr = &t.frames()[f as usize];
    let mut v = vec![t.str(fr.name).to_string()];
    let file = t.str(fr.file);
    if !file.is_empty() {
        v.push(match fr.line {
            0 => file.to_string(),
            n => format!("{file}:{n}"),
        });
    }
    let range = st.samples_in(lane.start[i], lane.end(i));
    let weight = (st.weight[range.clone()].iter()).fold(0i64, |a, &w| a.saturating_add(w));
    let n = range.len();
    v.push(format!(
        "{n} sample{}   {} {}",
        if n == 1 { "" } else { "s" },
        t.str(st.kind),
        weight_text(st.unit, weight)
    ));
    let what = if st.timed { "duration" } else { "laid out" };
    v.push(format!("{what}  {}", format_duration(lane.dur[i])));
    v.push(format!(
        "start     {}",
        format_duration(lane.start[i] - t.start_ns())
    ));
    v.push(format!("depth     {depth}"));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_tells_its_frame_samples_and_weight() {
        let t = trace_model::load_bytes(b"main;work 3\nmain;work 4\nmain;idle 1\n").unwrap();
        let l = Loaded::new(t, "test".into());
        let p = Pick::Stack {
            track: 0,
            depth: 1,
            sample: 1,
        };
        let lines = describe_stack(&l, p);
        assert_eq!(lines[0], "work");
        assert!(lines[1].starts_with("2 samples"), "{lines:?}");
        assert!(lines[1].ends_with(" 7"), "{lines:?}");
        let outer = Pick::Stack {
            track: 0,
            depth: 0,
            sample: 0,
        };
        assert!(describe_stack(&l, outer)[1].starts_with("3 samples"));
    }
}
