//! The view of a file, remembered between runs in the settings (`"views"`, by path): the
//! visible range, and which tracks were collapsed, hidden or pinned.
//!
//! Tracks are stored by index, which is only meaningful for the same file: they are applied
//! when the file's size and modification time are what they were, and otherwise only the
//! visible range is (clamped to the trace), since a rewritten trace may order its threads
//! differently.

use serde_json::{json, Value};

use trace_model::Annotations;

use crate::loaded::Loaded;
use crate::persist::reload::FileStamp;
use crate::view::layout::{Collapsed, Layout, Track};
use crate::view::state::ViewState;

/// What is written for one file.
pub fn save(s: &ViewState, l: &Loaded, stamp: Option<FileStamp>) -> Value {
    let (a, b) = s.timeline.viewport.visible();
    let start = l.trace.start_ns();
    let set = |v: &[bool]| -> Vec<usize> { (0..v.len()).filter(|&i| v[i]).collect() };
    let unset = |v: &[bool]| -> Vec<usize> { (0..v.len()).filter(|&i| !v[i]).collect() };
    let tracks = |t: &std::collections::HashSet<Track>| -> Vec<Value> {
        let mut v: Vec<(&str, u32)> = t.iter().map(track_key).collect();
        v.sort();
        v.into_iter().map(|(k, i)| json!([k, i])).collect()
    };
    let c = &s.timeline.collapsed;
    let mut v = json!({
        "len": stamp.map(|s| s.len),
        "modified": stamp.and_then(modified_ns),
        "view": [a - start, b - start],
        "collapsed": {
            "processes": set(&c.processes),
            "threads": set(&c.threads),
            "asyncs": set(&c.asyncs),
            // Groups start folded: the ones the user opened.
            "open_async_groups": unset(&c.async_groups),
        },
        "hidden": tracks(&c.hidden),
        "pinned": tracks(&c.pinned),
    });
    // Only when the user opened them: a view saved with them folded reads as before.
    if !c.cpu_counters {
        v["collapsed"]["open_cpu_counters"] = json!(true);
    }
    let notes = Annotations {
        markers: s.timeline.markers.clone(),
        range: s.range.map(|(a, b)| (a - start, b - start)),
    };
    if let Some(o) = v.as_object_mut() {
        notes.write_into(o);
    }
    v
}

/// Applies a saved view; returns the visible range to show (absolute ns), if one was saved.
pub fn apply(
    v: &Value,
    s: &mut ViewState,
    l: &Loaded,
    stamp: Option<FileStamp>,
) -> Option<(i64, i64)> {
    let same = stamp.is_some()
        && v.get("len").and_then(Value::as_u64) == stamp.map(|s| s.len)
        && v.get("modified").and_then(Value::as_i64) == stamp.and_then(modified_ns);
    if same {
        let mut c = Collapsed::for_trace(&l.trace);
        let coll = v.get("collapsed");
        let mark = |to: &mut Vec<bool>, key: &str, on: bool| {
            for i in indices(coll.and_then(|c| c.get(key))) {
                if let Some(slot) = to.get_mut(i) {
                    *slot = on;
                }
            }
        };
        mark(&mut c.processes, "processes", true);
        mark(&mut c.threads, "threads", true);
        mark(&mut c.asyncs, "asyncs", true);
        mark(&mut c.async_groups, "open_async_groups", false);
        let open = coll.and_then(|c| c.get("open_cpu_counters"));
        c.cpu_counters = open.and_then(Value::as_bool) != Some(true);
        c.hidden = tracks(v.get("hidden"), l);
        c.pinned = tracks(v.get("pinned"), l);
        s.timeline.collapsed = c;
        s.timeline.layout =
            Layout::new(&l.trace, &l.kinds, &s.timeline.collapsed, s.timeline.scale);
    }
    apply_annotations(&Annotations::from_json(v), s, l);
    let view = v.get("view")?.as_array()?;
    let (a, b) = (view.first()?.as_i64()?, view.get(1)?.as_i64()?);
    let (start, end) = (l.trace.start_ns(), l.trace.end_ns());
    let (a, b) = (
        start.saturating_add(a).max(start),
        start.saturating_add(b).min(end),
    );
    (b > a).then_some((a, b))
}

/// Shows saved markers and range (times from the trace's start), clamped to the trace.
pub fn apply_annotations(a: &Annotations, s: &mut ViewState, l: &Loaded) {
    let (start, end) = (l.trace.start_ns(), l.trace.end_ns());
    let span = (end - start).max(0);
    s.timeline.markers = (a.markers.iter())
        .take(crate::timeline::markers::MAX_MARKERS)
        .map(|m| trace_model::Marker {
            at_ns: m.at_ns.clamp(0, span),
            note: m.note.clone(),
        })
        .collect();
    s.range = a.range.and_then(|(x, y)| {
        let (x, y) = (
            start.saturating_add(x).max(start),
            start.saturating_add(y).min(end),
        );
        (y > x).then_some((x, y))
    });
}

/// A trace with no annotations of its own here shows those shared beside it
/// (`TRACE.markers.json`, written by `spall-cli markers --save`).
pub fn apply_sidecar(trace: &std::path::Path, s: &mut ViewState, l: &Loaded) {
    match Annotations::load_sidecar(trace) {
        Ok(Some(a)) => apply_annotations(&a, s, l),
        Ok(None) => {}
        Err(e) => eprintln!("spall: markers ignored: {e}"),
    }
}

fn modified_ns(s: FileStamp) -> Option<i64> {
    let d = s.modified?.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

fn track_key(t: &Track) -> (&'static str, u32) {
    match *t {
        Track::Process(i) => ("process", i),
        Track::Thread(i) => ("thread", i),
        Track::Counter(i) => ("counter", i),
        Track::Async(i) => ("async", i),
    }
}

fn indices(v: Option<&Value>) -> impl Iterator<Item = usize> + '_ {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| usize::try_from(i.as_u64()?).ok())
}

/// Saved tracks that exist in this trace.
fn tracks(v: Option<&Value>, l: &Loaded) -> std::collections::HashSet<Track> {
    let t = &l.trace;
    let n = |k: &str| match k {
        "process" => t.processes().len(),
        "thread" => t.threads().len(),
        "counter" => l.kinds.counters.len(),
        "async" => t.async_tracks().len(),
        _ => 0,
    };
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let (k, i) = (
                e.get(0)?.as_str()?,
                u32::try_from(e.get(1)?.as_u64()?).ok()?,
            );
            ((i as usize) < n(k)).then_some(())?;
            Some(match k {
                "process" => Track::Process(i),
                "thread" => Track::Thread(i),
                "counter" => Track::Counter(i),
                _ => Track::Async(i),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> Loaded {
        crate::load(None, &Default::default(), |_, _| {}).unwrap()
    }

    /// A view as the settings file holds it (written by earlier versions too): it still
    /// applies, and is written back the same.
    #[test]
    fn a_view_saved_before_still_applies_and_is_written_back_the_same() {
        let l = loaded();
        let theme = crate::theme::Theme::new(crate::theme::ThemeKind::Light);
        let saved = r#"{"len": 1234, "modified": 99000000000, "view": [1000, 5000000],
            "collapsed": {"processes": [], "threads": [1], "asyncs": [], "open_async_groups": [0]},
            "hidden": [["thread", 2]], "pinned": [["process", 0]],
            "markers": [{"at_ns": 100, "note": "a note"}, {"at_ns": 300, "note": ""}],
            "range": [10, 500]}"#;
        let v: Value = serde_json::from_str(saved).unwrap();
        let stamp = FileStamp {
            len: 1234,
            modified: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(99)),
        };
        let mut s = ViewState::new(&l, 1000.0, 700.0, theme);
        let start = l.trace.start_ns();
        let shown = apply(&v, &mut s, &l, Some(stamp));
        assert_eq!(shown, Some((start + 1000, start + 5_000_000)));
        let c = &s.timeline.collapsed;
        assert!(c.threads[1] && !c.threads[0]);
        assert!(!c.async_groups[0]);
        assert!(c.hidden.contains(&Track::Thread(2)) && c.pinned.contains(&Track::Process(0)));
        let notes: Vec<(i64, &str)> = (s.timeline.markers.iter())
            .map(|m| (m.at_ns, m.note.as_str()))
            .collect();
        assert_eq!(notes, [(100, "a note"), (300, "")]);
        assert_eq!(s.range, Some((start + 10, start + 500)));
        let mut again = save(&s, &l, Some(stamp));
        // The caller shows the visible range; nothing here moved the viewport.
        again["view"] = v["view"].clone();
        assert_eq!(again, v);
    }

    #[test]
    fn a_view_round_trips_for_the_same_file_and_only_its_range_otherwise() {
        let l = loaded();
        let theme = crate::theme::Theme::new(crate::theme::ThemeKind::Light);
        let mut s = ViewState::new(&l, 1000.0, 700.0, theme);
        let (t0, t1) = (l.trace.start_ns(), l.trace.end_ns());
        s.timeline
            .viewport
            .show(t0 + (t1 - t0) / 4, t0 + (t1 - t0) / 2);
        s.timeline.collapsed.threads[1] = true;
        s.timeline.collapsed.async_groups[0] = false;
        s.timeline.collapsed.cpu_counters = false;
        s.timeline.collapsed.hidden.insert(Track::Thread(2));
        s.timeline.collapsed.pinned.insert(Track::Process(0));
        s.range = Some((t0 + 10, t0 + 500));
        crate::timeline::markers::add(&mut s.timeline, &l, t0 + 300);
        crate::timeline::markers::add(&mut s.timeline, &l, t0 + 100);
        s.timeline.markers[1].note = "a \"quoted\" note".into();
        let stamp = FileStamp {
            len: 1234,
            modified: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(99)),
        };
        // Through text, as the settings file holds it.
        let v: Value = serde_json::from_str(&save(&s, &l, Some(stamp)).to_string()).unwrap();
        let want = s.timeline.viewport.visible();

        let mut same = ViewState::new(&l, 1000.0, 700.0, theme);
        assert_eq!(apply(&v, &mut same, &l, Some(stamp)), Some(want));
        assert!(same.timeline.collapsed.threads[1] && !same.timeline.collapsed.threads[0]);
        assert!(
            !same.timeline.collapsed.async_groups[0],
            "an opened async group stays open"
        );
        assert!(
            !same.timeline.collapsed.cpu_counters,
            "so do the CPU counters"
        );
        assert!(same.timeline.collapsed.hidden.contains(&Track::Thread(2)));
        assert!(same.timeline.collapsed.pinned.contains(&Track::Process(0)));

        let changed = FileStamp { len: 999, ..stamp };
        let mut other = ViewState::new(&l, 1000.0, 700.0, theme);
        assert_eq!(apply(&v, &mut other, &l, Some(changed)), Some(want));
        assert!(
            !other.timeline.collapsed.threads[1],
            "tracks only apply to the same file"
        );
        // Markers and the range are times from the start: they apply to a rewritten file.
        assert_eq!(other.timeline.markers, s.timeline.markers);
        assert_eq!(other.timeline.markers[0].at_ns, 100, "in time order");
        assert_eq!(other.range, s.range);
        assert_eq!(same.timeline.markers, s.timeline.markers);
        assert!(other.timeline.collapsed.hidden.is_empty());

        // Garbage is ignored, never a panic.
        for bad in [
            json!(null),
            json!({"view": "x"}),
            json!({"view": [5, 2]}),
            json!([1]),
        ] {
            let mut s = ViewState::new(&l, 1000.0, 700.0, theme);
            assert_eq!(apply(&bad, &mut s, &l, Some(stamp)), None, "{bad}");
        }
        let mut s = ViewState::new(&l, 1000.0, 700.0, theme);
        let junk = json!({"len": 1234, "modified": 99_000_000_000i64, "hidden": [["thread", 1e9], 3, ["x"]],
            "collapsed": {"threads": [-1, 1e12, 0]}});
        apply(&junk, &mut s, &l, Some(stamp));
        assert!(s.timeline.collapsed.hidden.is_empty() && s.timeline.collapsed.threads[0]);
    }
}
