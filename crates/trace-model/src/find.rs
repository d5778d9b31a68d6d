//! The threads a user's text names (`spall-cli stats --thread`, the viewer's screenshot
//! `--thread`): one rule for every caller, in docs/MODEL.md ("Naming a thread").
//!
//! # Example
//!
//! ```
//! let t = trace_model::load_bytes(br#"[
//!   {"name":"thread_name","ph":"M","pid":1,"tid":7,"args":{"name":"CrRendererMain"}},
//!   {"name":"thread_name","ph":"M","pid":1,"tid":8,"args":{"name":"Compositor"}}
//! ]"#).unwrap();
//! assert_eq!(t.find_threads("1:8"), [1]);
//! assert_eq!(t.find_threads("CrRendererMain"), [0]);
//! assert_eq!(t.find_threads("8"), [1]);
//! assert_eq!(t.find_threads("Renderer"), [0]);
//! assert!(t.find_threads("GPU").is_empty());
//! ```

use crate::span::Thread;
use crate::trace::Trace;

impl Trace {
    /// The threads `spec` names, in the trace's order: those of the first of these rules that
    /// names any.
    ///
    /// 1. `PID:TID`, the ids as the file writes them;
    /// 2. a thread's whole name (threads may share one: all of them);
    /// 3. a bare `TID` (the same tid in several processes: all of them);
    /// 4. part of a thread's name, case-sensitive (every thread whose name holds it).
    ///
    /// Empty when no rule names a thread, or `spec` is empty. A caller that wants one
    /// thread takes the first.
    pub fn find_threads(&self, spec: &str) -> Vec<u32> {
        if spec.is_empty() {
            return Vec::new();
        }
        let name = |t: &Thread| t.name.map(|n| self.str(n));
        let ids = spec.split_once(':');
        let rules: [&dyn Fn(&Thread) -> bool; 4] = [
            &|t| ids.is_some_and(|(p, i)| self.ext_id(t.pid) == p && self.ext_id(t.tid) == i),
            &|t| name(t) == Some(spec),
            &|t| self.ext_id(t.tid) == spec,
            &|t| name(t).is_some_and(|n| n.contains(spec)),
        ];
        for rule in rules {
            let found: Vec<u32> = (self.threads.iter().enumerate())
                .filter(|(_, t)| rule(t))
                .map(|(i, _)| i as u32)
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use crate::load_bytes;

    /// Two processes; tid 7 in both; two threads named `Worker`; thread 2:9 unnamed.
    const THREADS: &[u8] = br#"[
        {"name":"thread_name","ph":"M","pid":1,"tid":7,"args":{"name":"CrBrowserMain"}},
        {"name":"thread_name","ph":"M","pid":1,"tid":8,"args":{"name":"Worker"}},
        {"name":"thread_name","ph":"M","pid":2,"tid":7,"args":{"name":"CrRendererMain"}},
        {"name":"thread_name","ph":"M","pid":2,"tid":8,"args":{"name":"Worker"}},
        {"name":"thread_name","ph":"M","pid":2,"tid":10,"args":{"name":"8"}},
        {"name":"x","ph":"X","ts":0,"dur":1,"pid":2,"tid":9}
    ]"#;

    #[test]
    fn threads_are_named_by_ids_name_tid_or_part_of_a_name() {
        let t = load_bytes(THREADS).unwrap();
        let label = |v: Vec<u32>| -> Vec<String> {
            let th = t.threads();
            (v.into_iter())
                .map(|i| {
                    format!(
                        "{}:{}",
                        t.ext_id(th[i as usize].pid),
                        t.ext_id(th[i as usize].tid)
                    )
                })
                .collect()
        };
        assert_eq!(label(t.find_threads("2:7")), ["2:7"]);
        assert_eq!(label(t.find_threads("2:9")), ["2:9"], "unnamed, by ids");
        assert_eq!(
            label(t.find_threads("Worker")),
            ["1:8", "2:8"],
            "a shared name"
        );
        assert_eq!(
            label(t.find_threads("7")),
            ["1:7", "2:7"],
            "a tid in two processes"
        );
        // A whole name wins over a tid: thread 2:10 is named "8".
        assert_eq!(label(t.find_threads("8")), ["2:10"]);
        assert_eq!(label(t.find_threads("Renderer")), ["2:7"]);
        // Ambiguous parts of names: every thread that holds it, in the trace's order.
        assert_eq!(label(t.find_threads("Main")), ["1:7", "2:7"]);
        assert_eq!(
            label(t.find_threads("main")),
            Vec::<String>::new(),
            "case-sensitive"
        );
        assert!(t.find_threads("").is_empty());
        assert!(t.find_threads("3:7").is_empty());
    }
}
