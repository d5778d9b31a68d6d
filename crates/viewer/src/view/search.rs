//! Search: the events whose names match a query or a clicked statistics row, and stepping
//! through them in time order.

use trace_model::{SpanRef, StrId};

use crate::kinds::Pick;
use crate::loaded::Loaded;

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
    pub(crate) fn before(&self, l: &Loaded, t: i64) -> usize {
        self.spans.partition_point(|&r| l.trace.span(r).start < t)
            + self.others.partition_point(|o| o.0 < t)
    }

    /// The `k`-th match in time order (spans first at equal times).
    pub fn nth(&self, l: &Loaded, k: usize) -> Option<Pick> {
        self.nth_timed(l, k).map(|(_, p)| p)
    }

    /// The `k`-th match's time (its start) and the match.
    pub(crate) fn nth_timed(&self, l: &Loaded, k: usize) -> Option<(i64, Pick)> {
        let (a, b) = (&self.spans, &self.others);
        let ka = |i: usize| l.trace.span(a[i]).start;
        match kth_of_two(k, (a.len(), ka), (b.len(), |j: usize| b[j].0))? {
            (true, i) => Some((ka(i), Pick::Span(a[i]))),
            (false, j) => Some(b[j]),
        }
    }
}

/// The `k`-th of two sorted sequences merged (`a`'s first at equal keys), found without
/// merging them: a search for how many of the first `k + 1` come from `a`. Each is its
/// length and its key by index. `(true, i)`: `a`'s `i`-th; `(false, j)`: `b`'s `j`-th.
pub(crate) fn kth_of_two(
    k: usize,
    (na, ka): (usize, impl Fn(usize) -> i64),
    (nb, kb): (usize, impl Fn(usize) -> i64),
) -> Option<(bool, usize)> {
    if k >= na + nb {
        return None;
    }
    // Smallest `i` (taken from `a`) such that `a[i]` need not come before `b[k - i - 1]`.
    let (mut lo, mut hi) = (k.saturating_sub(nb), k.min(na));
    while lo < hi {
        let i = lo + (hi - lo) / 2;
        let j = k - i;
        if j > 0 && ka(i) <= kb(j - 1) {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    let (i, j) = (lo, k - lo);
    if i < na && (j >= nb || ka(i) <= kb(j)) {
        Some((true, i))
    } else {
        Some((false, j))
    }
}

impl Matches {
    /// The names containing `query` (case-insensitive; case-sensitive when it has capitals)
    /// and their events. An empty query matches nothing.
    pub fn for_query(l: &Loaded, query: &str) -> Matches {
        if query.is_empty() {
            return Matches::default();
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
        Matches {
            query: query.to_string(),
            others: other_matches(l, &names),
            names,
            spans: l.trace.occurrences(matches),
            current: None,
        }
    }

    /// Every event of one name (a click on a statistics row).
    pub fn for_name(l: &Loaded, name: StrId) -> Matches {
        let text = l.trace.str(name).to_string();
        let mut names = vec![false; l.trace.strings().len()];
        names[name.0 as usize] = true;
        Matches {
            query: text.clone(),
            others: other_matches(l, &names),
            names,
            spans: l.trace.occurrences(|s| s == text),
            current: None,
        }
    }

    /// Steps to the next (or previous) match after the current one, or, with none current,
    /// the first at or after `middle`: its position among the matches, and the match.
    pub fn step(&mut self, l: &Loaded, forward: bool, middle: i64) -> Option<(usize, Pick)> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let next = match self.current {
            Some(i) if forward => (i + 1) % n,
            Some(i) => (i + n - 1) % n,
            None => {
                let i = self.before(l, middle);
                if forward {
                    i % n
                } else {
                    (i + n - 1) % n
                }
            }
        };
        self.current = Some(next);
        Some((next, self.nth(l, next)?))
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
    use super::kth_of_two;

    #[test]
    fn the_kth_of_two_sorted_lists_is_the_merges_with_ties_to_the_first() {
        let a = [1, 3, 3, 7, 9, 9];
        let b = [0, 3, 4, 9, 12];
        // The merge, stable: at equal keys `a`'s come first.
        let mut merged: Vec<(i64, bool, usize)> = (a.iter().enumerate())
            .map(|(i, &t)| (t, true, i))
            .chain(b.iter().enumerate().map(|(j, &t)| (t, false, j)))
            .collect();
        merged.sort_by_key(|&(t, from_a, _)| (t, !from_a));
        for (k, &(_, from_a, i)) in merged.iter().enumerate() {
            let got = kth_of_two(k, (a.len(), |i| a[i]), (b.len(), |j| b[j]));
            assert_eq!(got, Some((from_a, i)), "k = {k}");
        }
        assert_eq!(
            kth_of_two(11, (a.len(), |i| a[i]), (b.len(), |j| b[j])),
            None
        );
        let none: [i64; 0] = [];
        assert_eq!(
            kth_of_two(1, (0, |i| none[i]), (b.len(), |j| b[j])),
            Some((false, 1))
        );
        assert_eq!(
            kth_of_two(2, (a.len(), |i| a[i]), (0, |j| none[j])),
            Some((true, 2))
        );
    }
}
