//! Search: the events whose names match a query or a clicked statistics row, and stepping
//! through them in time order.

use trace_model::{SpanRef, StrId};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::view::state::{pick_extent, ViewState};

/// Events whose names match a search or a clicked statistics row.
#[derive(Clone, Debug, Default)]
pub struct Matches {
    /// The search text (empty: no search).
    pub query: String,
    /// Per interned string: whether the name matches.
    pub names: Vec<bool>,
    /// Every matching span, by start time.
    pub spans: Vec<SpanRef>,
    /// Every matching instant and async slice, by time.
    pub others: Vec<(i64, Pick)>,
    /// The match last stepped to, in time order over both lists.
    pub current: Option<usize>,
}

impl Matches {
    /// Whether a search is in force.
    pub fn is_active(&self) -> bool {
        !self.query.is_empty()
    }

    /// Whether the name `name` matches.
    pub fn name_matches(&self, name: StrId) -> bool {
        self.names.get(name.0 as usize).copied().unwrap_or(false)
    }

    /// The number of matches, spans and others.
    pub fn len(&self) -> usize {
        self.spans.len() + self.others.len()
    }

    /// Whether nothing matches.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many matches come before time `t`.
    fn before(&self, l: &Loaded, t: i64) -> usize {
        self.spans.partition_point(|&r| l.trace.span(r).start < t)
            + self.others.partition_point(|o| o.0 < t)
    }

    /// The `k`-th match in time order (spans first at equal times), found without merging
    /// the lists: a search for how many of the first `k + 1` come from `spans`.
    pub fn nth(&self, l: &Loaded, k: usize) -> Option<Pick> {
        let (a, b) = (&self.spans, &self.others);
        if k >= a.len() + b.len() {
            return None;
        }
        let ka = |i: usize| l.trace.span(a[i]).start;
        // Smallest `i` (taken from `a`) such that `a[i]` need not come before `b[k - i - 1]`.
        let (mut lo, mut hi) = (k.saturating_sub(b.len()), k.min(a.len()));
        while lo < hi {
            let i = lo + (hi - lo) / 2;
            let j = k - i;
            if j > 0 && ka(i) <= b[j - 1].0 {
                lo = i + 1;
            } else {
                hi = i;
            }
        }
        let (i, j) = (lo, k - lo);
        if i < a.len() && (j >= b.len() || ka(i) <= b[j].0) {
            Some(Pick::Span(a[i]))
        } else {
            Some(b[j].1)
        }
    }
}

impl ViewState {
    /// Sets the search text (a case-insensitive substring; case-sensitive when it has
    /// capitals). An empty query clears the highlights.
    pub fn search(&mut self, l: &Loaded, query: &str) {
        if query.is_empty() {
            self.matches = Matches::default();
            return;
        }
        let sensitive = query.chars().any(char::is_uppercase);
        let q = if sensitive {
            query.to_string()
        } else {
            query.to_lowercase()
        };
        let matches = |s: &str| {
            if sensitive {
                s.contains(q.as_str())
            } else {
                s.to_lowercase().contains(q.as_str())
            }
        };
        let names: Vec<bool> = l.trace.strings().iter().map(|(_, s)| matches(s)).collect();
        self.matches = Matches {
            query: query.to_string(),
            others: other_matches(l, &names),
            names,
            spans: l.trace.occurrences(matches),
            current: None,
        };
    }

    /// Highlights every span of one name (a click on a statistics row).
    pub fn highlight_name(&mut self, l: &Loaded, name: StrId) {
        let text = l.trace.str(name).to_string();
        let mut names = vec![false; l.trace.strings().len()];
        names[name.0 as usize] = true;
        self.matches = Matches {
            query: text.clone(),
            others: other_matches(l, &names),
            names,
            spans: l.trace.occurrences(|s| s == text),
            current: None,
        };
    }

    /// Steps to the next (or previous) match after the current one, selects and centres
    /// it. Returns its position among the matches.
    pub fn step_match(&mut self, l: &Loaded, forward: bool) -> Option<usize> {
        let n = self.matches.len();
        if n == 0 {
            return None;
        }
        let next = match self.matches.current {
            Some(i) if forward => (i + 1) % n,
            Some(i) => (i + n - 1) % n,
            None => {
                // The first match at or after the view's middle.
                let (a, b) = self.viewport.visible();
                let i = self.matches.before(l, a + (b - a) / 2);
                if forward {
                    i % n
                } else {
                    (i + n - 1) % n
                }
            }
        };
        self.matches.current = Some(next);
        match self.matches.nth(l, next)? {
            Pick::Span(r) => {
                self.selected = Some(Pick::Span(r));
                self.center_on(l, r);
            }
            p => {
                self.selected = Some(p);
                if let Some((a, b)) = pick_extent(l, p) {
                    self.center_range(a, b);
                }
                self.reveal_pick(l, p);
            }
        }
        Some(next)
    }
}

/// The instants and async slices whose names match, by time.
fn other_matches(l: &Loaded, names: &[bool]) -> Vec<(i64, Pick)> {
    let t = &l.trace;
    let hit = |n: StrId| names.get(n.0 as usize).copied().unwrap_or(false);
    let mut v: Vec<(i64, Pick)> = t
        .instants()
        .iter()
        .enumerate()
        .filter(|(_, e)| hit(e.name))
        .map(|(i, e)| (e.ts, Pick::Instant(i as u32)))
        .collect();
    v.extend(
        t.async_slices()
            .iter()
            .enumerate()
            .filter(|(_, a)| hit(a.name))
            .map(|(i, a)| (a.start, Pick::Async(i as u32))),
    );
    v.sort_by_key(|o| o.0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::state::tests::{loaded, state};

    #[test]
    fn search_steps_through_matches_in_time_order() {
        let l = loaded();
        let mut s = state(&l);
        s.search(&l, "REN"); // capitals: case-sensitive, no match
        assert!(s.matches.spans.is_empty());
        s.search(&l, "ren");
        assert_eq!(s.matches.spans.len(), 2);
        s.viewport.show(0, 200_000);
        assert_eq!(s.step_match(&l, true), Some(0));
        assert_eq!(s.step_match(&l, true), Some(1));
        assert_eq!(l.trace.span(s.selected_span().unwrap()).start, 500_000);
        let (a, b) = s.viewport.visible();
        assert!(a < 650_000 && b > 650_000, "centred on the match");
        assert_eq!(s.step_match(&l, true), Some(0), "wraps around");
        assert_eq!(s.step_match(&l, false), Some(1));
        s.search(&l, "");
        assert!(!s.matches.is_active());
    }

    #[test]
    fn search_steps_through_spans_instants_and_async_slices_in_time_order() {
        let t = trace_model::load_bytes(
            br#"[{"ph":"X","name":"load page","ts":0,"dur":100,"pid":1,"tid":1},
                 {"ph":"i","name":"load done","ts":50,"pid":1,"tid":1,"s":"t"},
                 {"ph":"b","name":"load image","cat":"c","id":"1","ts":20,"pid":1,"tid":1},
                 {"ph":"e","name":"load image","cat":"c","id":"1","ts":70,"pid":1,"tid":1},
                 {"ph":"X","name":"load page","ts":50,"dur":10,"pid":1,"tid":2},
                 {"ph":"i","name":"other","ts":60,"pid":1,"tid":1,"s":"t"}]"#,
        )
        .unwrap();
        let l = Loaded::new(t, "test".into());
        let mut s = state(&l);
        s.search(&l, "load");
        assert_eq!(s.matches.len(), 4);
        s.viewport
            .show(l.trace.start_ns() - 1000, l.trace.start_ns());
        let mut seen = Vec::new();
        for _ in 0..5 {
            s.step_match(&l, true);
            let p = s.selected.unwrap();
            let (a, _) = pick_extent(&l, p).unwrap();
            let kind = match p {
                Pick::Span(_) => "span",
                Pick::Instant(_) => "instant",
                Pick::Async(_) => "async",
                _ => "other",
            };
            seen.push((a / 1000, kind));
        }
        // Time order, a span before an instant at the same time, then around again.
        assert_eq!(
            seen,
            [
                (0, "span"),
                (20, "async"),
                (50, "span"),
                (50, "instant"),
                (0, "span")
            ]
        );
        // The view follows the match.
        let (a, b) = s.viewport.visible();
        assert!(a <= 0 && b >= 0);
    }

    #[test]
    fn nth_match_agrees_with_a_merge() {
        let l = loaded();
        let spans = l.trace.occurrences(|_| true);
        let starts: Vec<i64> = spans.iter().map(|&r| l.trace.span(r).start).collect();
        // Others at times between, before, after and equal to span starts.
        for others in [
            vec![],
            vec![-5],
            vec![0, 100_000, 2_000_000],
            vec![0, 0, 150_000, 900_000, 900_000],
        ] {
            let m = Matches {
                query: "x".into(),
                spans: spans.clone(),
                others: others
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (t, Pick::Instant(i as u32)))
                    .collect(),
                ..Matches::default()
            };
            let mut merged: Vec<(i64, u8, Pick)> = starts
                .iter()
                .zip(&spans)
                .map(|(&t, &r)| (t, 0, Pick::Span(r)))
                .collect();
            merged.extend(m.others.iter().map(|&(t, p)| (t, 1, p)));
            merged.sort_by_key(|x| (x.0, x.1));
            for (k, want) in merged.iter().enumerate() {
                assert_eq!(m.nth(&l, k), Some(want.2), "k {k} others {others:?}");
            }
            assert_eq!(m.nth(&l, merged.len()), None);
        }
    }
}
