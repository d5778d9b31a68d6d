//! System traces in the model: scheduling slices, thread states and CPU counters from the
//! generated fixtures of `scripts/gen-systrace.py` (trace_processor's answers on the same
//! files are checked row by row in trace-sql's parity suite); hostile ones.

use trace_model::sched::{CpuCounterKind, TaskState};
use trace_model::{ExtId, Trace};

fn load(name: &str) -> Trace {
    let p = spall_test_support::fixture(&format!("systrace/{name}.pftrace.gz"));
    trace_model::load(p).unwrap()
}

fn tid_of(t: &Trace, thread: u32) -> i64 {
    match t.threads()[thread as usize].tid {
        ExtId::Num(n) => n,
        ExtId::Str(_) => -1,
    }
}

fn thread_named(t: &Trace, tid: i64) -> u32 {
    (0..t.threads().len() as u32)
        .find(|&i| tid_of(t, i) == tid)
        .unwrap()
}

#[test]
fn slices_per_cpu_with_end_states() {
    let t = load("events");
    let s = t.sched().expect("scheduling data");
    assert_eq!(s.cpus, [0, 1]);
    let cpu0: Vec<(i64, i64, i64, String)> = (s.cpu_slices(0).iter())
        .map(|x| (x.ts, x.dur, tid_of(&t, x.thread), x.end_state.to_string()))
        .collect();
    assert_eq!(
        cpu0,
        [
            (1000, 2500, 100, "S".into()),
            (3500, 3000, 0, "R".into()),
            (6500, 1500, 100, "R+".into()),
            (8000, 1000, 102, "D".into()),
            (9000, 1000, 100, "I".into()),
            (10000, -1, 0, "?".into()),
        ]
    );
    // Threads are the model's: named by the process tree, else by their latest comm.
    let pool = thread_named(&t, 102);
    assert_eq!(t.str(t.threads()[pool as usize].name.unwrap()), "pool-1");
    assert_eq!(t.threads()[pool as usize].pid, ExtId::Num(100));
    let cpu_time = s.cpu_time(t.end_ns(), Some(thread_named(&t, 0)));
    let app = cpu_time
        .iter()
        .find(|c| c.0 == thread_named(&t, 100))
        .unwrap();
    assert_eq!((app.1, app.2), (3, 5000));
}

#[test]
fn thread_states_with_wakers_and_io_wait() {
    let t = load("events");
    let s = t.sched().unwrap();
    let pool: Vec<_> = s.thread_states(thread_named(&t, 102)).collect();
    let got: Vec<(i64, i64, TaskState, Option<i64>)> = (pool.iter())
        .map(|x| (x.ts, x.dur(), x.state(), x.waker().map(|w| tid_of(&t, w))))
        .collect();
    assert_eq!(
        got,
        [
            (7000, 1000, TaskState::RUNNABLE, Some(100)),
            (8000, 1000, TaskState::RUNNING, None),
            (9000, -1, TaskState(0x2), None),
        ]
    );
    assert_eq!(pool[2].io_wait(), Some(true));
    assert_eq!(pool[0].irq(), Some(false));
    // The idle task has no states.
    assert_eq!(s.thread_states(thread_named(&t, 0)).count(), 0);
    let freq: Vec<_> = (s.counters.iter())
        .filter(|c| c.kind == CpuCounterKind::Frequency)
        .map(|c| (c.cpu, c.values[0]))
        .collect();
    assert_eq!(freq, [(0, 1_800_000.0), (1, 1_200_000.0)]);
}

#[test]
fn compact_switches_take_the_previous_task_from_the_cpu() {
    let t = load("compact");
    let s = t.sched().unwrap();
    // Each CPU's first compact switch only says who runs: no slice.
    assert_eq!(s.slices.len(), 6);
    assert_eq!(s.cpu_slices(0)[0].ts, 3000);
    let counts: Vec<(String, u64)> = (t.diagnostics().counts())
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    assert!(
        counts.contains(&("compact_sched_switch_skipped".into(), 2)),
        "{counts:?}"
    );
}

#[test]
fn hostile_records_warn_and_keep_the_rest() {
    let t = load("hostile");
    let s = t.sched().unwrap();
    // CPU 4 billion is a CPU like any other (looked up, never an index).
    assert!(s.cpus.contains(&4_000_000_000));
    assert_eq!(s.cpu_slices(4_000_000_000).len(), 2);
    assert!(s.counters.iter().any(|c| c.cpu == 3_000_000_000));
    let counts: Vec<String> = t
        .diagnostics()
        .counts()
        .map(|(k, _)| k.to_string())
        .collect();
    assert!(
        counts.contains(&"task_state_invalid".to_string()),
        "{counts:?}"
    );
    assert!(
        counts.contains(&"mismatched_sched_switch_tids".to_string()),
        "{counts:?}"
    );
    // The switch written back in time is put in its place: CPU 0 stays ordered.
    let cpu0 = s.cpu_slices(0);
    assert!(cpu0.windows(2).all(|w| w[0].ts <= w[1].ts));
}

#[test]
fn ftrace_text_gives_the_protobuf_files_slices_and_states_but_new_tasks() {
    let p = load("events");
    let text = trace_model::load(spall_test_support::fixture("systrace/events.trace")).unwrap();
    let slices = |t: &Trace, scale: i64| -> Vec<(i64, i64, u32, i64, String)> {
        let sd = t.sched().unwrap();
        (sd.slices.iter().enumerate())
            .map(|(i, s)| {
                let dur = if s.dur < 0 { -1 } else { s.dur * scale };
                (
                    s.ts * scale,
                    dur,
                    sd.slice_cpu(i),
                    tid_of(t, s.thread),
                    s.end_state.to_string(),
                )
            })
            .collect()
    };
    assert_eq!(slices(&text, 1), slices(&p, 1000));
    // (tid, ts, dur, state, waker's tid), by thread then time.
    type State = (i64, i64, i64, String, Option<i64>);
    let states = |t: &Trace, scale: i64| -> Vec<State> {
        let mut v: Vec<State> = (t.sched().unwrap().states())
            .map(|x| {
                let dur = if x.dur() < 0 { -1 } else { x.dur() * scale };
                let waker = x.waker().map(|w| tid_of(t, w));
                (
                    tid_of(t, x.thread),
                    x.ts * scale,
                    dur,
                    x.state().to_string(),
                    waker,
                )
            })
            .collect();
        v.sort();
        v
    };
    // But the new task's runnable state: text traces' new tasks are skipped (as
    // trace_processor's text reader skips them).
    let mut want = states(&p, 1000);
    want.retain(|s| (s.0, s.1) != (102, 7_000_000));
    assert_eq!(states(&text, 1), want);
    // The text names threads by their comms, and the tgid column puts them in processes.
    let pool = thread_named(&text, 102);
    assert_eq!(text.threads()[pool as usize].pid, ExtId::Num(100));
}

/// Takes every scheduler record one at a time: `compact_sched` blocks through
/// `EventSink::sched_compact`'s default, not the builder's own.
struct RecordsOnly(trace_model::TraceBuilder);

impl spall_format::EventSink for RecordsOnly {
    fn event(&mut self, event: &spall_format::RawEvent<'_>) {
        spall_format::EventSink::event(&mut self.0, event);
    }

    fn sched(&mut self, s: &spall_format::RawSched<'_>) {
        spall_format::EventSink::sched(&mut self.0, s);
    }
}

/// A block whose times go back (a delta that wraps), with a pid past 31 bits, a comm
/// index past its table and a waking column cut short; then another CPU's block, with a
/// priority past what a block holds packed; then one whose times span more than a packed
/// record's 32 bits of nanoseconds.
fn hostile_compact() -> Vec<u8> {
    let back = u64::MAX - 2499;
    let mut t = spall_test_support::compact_sched_trace(
        3,
        &["app", "", "RenderThread"],
        &[
            (1, &[1000, 500, 4000, back, 10]),
            (2, &[1, 0, 2, 0x800, 1]),
            (3, &[10, 3_000_000_000, 11, 10, 0]),
            (4, &[120, 110, 120, 120, 120]),
            (6, &[0, 2, 7, 1, 0]),
            (7, &[1200, 100, 5]),
            (8, &[11, 10, 11]),
            (9, &[3, 3]),
            (10, &[110, 120, 110]),
            (11, &[2, 0, 2]),
            (12, &[0x10, 0]),
        ],
    );
    t.extend(spall_test_support::compact_sched_trace(
        1,
        &["RenderThread", "app"],
        &[
            (1, &[900, 350, 400]),
            (2, &[0, 1, 0]),
            (3, &[11, 10, 11]),
            (4, &[110, 120, 110]),
            (6, &[0, 1, 0]),
            (7, &[1000]),
            (8, &[10]),
            (9, &[1]),
            (10, &[300]),
            (11, &[1]),
        ],
    ));
    t.extend(spall_test_support::compact_sched_trace(
        2,
        &["app", "RenderThread"],
        &[
            (1, &[800, 4_300_000_000, 600, 1]),
            (2, &[0, 1, 0, 2]),
            (3, &[10, 11, 10, 11]),
            (4, &[120, 110, 120, 110]),
            (6, &[0, 1, 0, 1]),
        ],
    ));
    t
}

/// The builder takes a compact_sched block whole (`sched_compact`) as it takes its records
/// one by one: the same slices, states, thread names and warnings, on the generated
/// fixtures and on a block whose records are out of order, cut short or do not fit.
#[test]
fn compact_blocks_build_as_their_records_do() {
    let fixtures = ["compact", "hostile", "events"].map(|n| {
        let p = spall_test_support::fixture(&format!("systrace/{n}.pftrace.gz"));
        let mut gz = flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap());
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut gz, &mut b).unwrap();
        b
    });
    for (i, bytes) in fixtures.into_iter().chain([hostile_compact()]).enumerate() {
        let mut whole = trace_model::TraceBuilder::new();
        let summary = spall_format::decode(&bytes, &mut whole).expect("decodes");
        let whole = whole.finish(summary);
        let mut one = RecordsOnly(trace_model::TraceBuilder::new());
        let summary = spall_format::decode(&bytes, &mut one).expect("decodes");
        let one = one.0.finish(summary);
        let reading = |t: &Trace| {
            let names: Vec<_> = (t.threads().iter())
                .map(|th| (th.tid, th.name.map(|n| t.str(n).to_string())))
                .collect();
            format!("{:?}\n{names:?}\n{:?}", t.sched(), t.diagnostics())
        };
        assert!(whole.sched().is_some_and(|s| !s.slices.is_empty()), "{i}");
        assert_eq!(reading(&whole), reading(&one), "{i}");
    }
}

/// 37 CPUs (not a power of two), each switching in turn a nanosecond after the one
/// before, with as many as 6 switches each (so CPUs end at different times), written
/// CPU after CPU: the replay takes them in time order across CPUs. A record taken out of
/// order would warn (`sched_switch_out_of_order`), lose its slice, or put a state before
/// one of an earlier time.
#[test]
fn many_cpus_interleaved_are_replayed_in_time_order() {
    const CPUS: u64 = 37;
    let mut bytes = Vec::new();
    let mut switches = 0;
    for cpu in 0..CPUS {
        let n = 2 + cpu as usize % 5;
        let mut ts = vec![1000 + cpu];
        ts.extend(std::iter::repeat_n(CPUS, n - 1));
        let pids: Vec<u64> = (0..n as u64).map(|k| 100 + (cpu + k) % 50).collect();
        bytes.extend(spall_test_support::compact_sched_trace(
            cpu,
            &["task"],
            &[
                (1, &ts),
                (2, &vec![1; n]),
                (3, &pids),
                (4, &vec![120; n]),
                (6, &vec![0; n]),
            ],
        ));
        switches += n;
    }
    let mut b = trace_model::TraceBuilder::new();
    let summary = spall_format::decode(&bytes, &mut b).expect("decodes");
    let t = b.finish(summary);
    let s = t.sched().unwrap();
    let counts: Vec<(String, u64)> = (t.diagnostics().counts())
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    assert_eq!(
        counts,
        [("compact_sched_switch_skipped".to_string(), CPUS)],
        "{counts:?}"
    );
    assert_eq!(s.slices.len(), switches - CPUS as usize);
    assert_eq!(s.cpus.len(), CPUS as usize);
    let states: Vec<_> = s.states().collect();
    assert!(states.windows(2).all(|w| w[0].ts <= w[1].ts));
    // Each switch after a CPU's first opens two states (the tasks differ).
    assert_eq!(s.state_count(), 2 * s.slices.len());
}

/// A real kernel's trace (Linux 6.18, `linux.trace.gz`) has a task (tid 69) that the
/// scheduler switches in four times on CPU 1 and never out: each next switch there names
/// another previous task (trace_processor's `mismatched_sched_switch_tids`), and both keep
/// the four slices running (`dur` -1). A CPU runs one task at a time: drawn and counted,
/// each ends where the CPU's next slice begins, so no thread gets more CPU time than the
/// trace lasts and no CPU two slices at once.
#[test]
fn a_slice_never_switched_out_ends_at_its_cpus_next_slice() {
    let p = spall_test_support::fixture("systrace/linux.trace.gz");
    let t = trace_model::load(p).unwrap();
    let s = t.sched().unwrap();
    let tid69 = thread_named(&t, 69);
    let open: Vec<usize> = (0..s.slices.len())
        .filter(|&i| s.slices[i].thread == tid69)
        .collect();
    assert_eq!(open.len(), 4);
    assert!(open.iter().all(|&i| s.slices[i].dur == -1));
    for &i in &open {
        let next = &s.slices[i + 1];
        assert_eq!(s.slice_cpu(i + 1), s.slice_cpu(i));
        assert_eq!(s.slice_end(i, t.end_ns()), next.ts);
    }
    // Its running states keep trace_processor's rows (lasting to the next one, the last to
    // the end), but end with their slices.
    let states: Vec<_> = s.thread_states(tid69).collect();
    let running: Vec<usize> = (0..states.len())
        .filter(|&k| states[k].state() == TaskState::RUNNING)
        .collect();
    assert_eq!(running.len(), open.len());
    assert_eq!(states[*running.last().unwrap()].dur(), -1);
    for (&k, &i) in running.iter().zip(&open) {
        let x = &states[k];
        assert_eq!(s.slice_of(x), Some(i));
        let end = s.state_end(x, states.get(k + 1), t.end_ns());
        assert_eq!(end, s.slices[i + 1].ts);
        assert!(end < x.ts + x.dur().max(0) || x.dur() < 0);
    }
    for w in 0..s.slices.len().saturating_sub(1) {
        let b = &s.slices[w + 1];
        if s.slice_cpu(w) == s.slice_cpu(w + 1) {
            assert!(
                s.slice_end(w, t.end_ns()) <= b.ts,
                "slices {w} and {} overlap",
                w + 1
            );
        }
    }
    let duration = t.end_ns() - t.start_ns();
    for (thread, _, ns) in s.cpu_time(t.end_ns(), Some(thread_named(&t, 0))) {
        assert!(
            ns <= duration,
            "thread {thread}: {ns} ns on CPU in {duration}"
        );
    }
}

/// A task switched in on a second CPU while it still runs on the first (data lost): its
/// first `Running` state ends there, its second where it leaves the first CPU, though
/// each slice lasts until its own CPU's next switch. A `Running` state is kept as its slice
/// and a duration of its own (32 bits, a longer one listed apart): read back, and through
/// a transfer, they are trace_processor's rows, in time order, not their slices'.
#[test]
fn running_states_that_outlast_their_slices_keep_their_own_durations() {
    let line = |cpu: u32, us: u64, prev: (&str, u32), next: (&str, u32)| {
        let (s, us) = (1 + us / 1_000_000, us % 1_000_000);
        format!(
            "{:>16}-{} [{cpu:03}] d..2 {s}.{us:06}: sched_switch: prev_comm={} prev_pid={} \
             prev_prio=120 prev_state=S ==> next_comm={} next_pid={} next_prio=120\n",
            prev.0, prev.1, prev.0, prev.1, next.0, next.1
        )
    };
    let (idle, a, b) = (("swapper", 0), ("a", 10), ("b", 11));
    let text = [
        "# tracer: nop\n".to_string(),
        line(0, 0, idle, a),
        line(2, 0, idle, b),
        line(1, 100, idle, a),
        line(0, 300, a, idle),
        line(1, 500, a, idle),
        line(2, 5_000_000, b, idle),
    ]
    .concat();
    let t = trace_model::load_bytes(text.as_bytes()).unwrap();
    let back = Trace::from_transfer(&t.to_transfer()).unwrap();
    let (ms, long) = (1_000_000_000, 5_000_000_000);
    for t in [&t, &back] {
        let s = t.sched().unwrap();
        let slices: Vec<(i64, i64)> = (s.slices.iter()).map(|x| (x.ts - ms, x.dur)).collect();
        let want = [
            (0, 300_000),
            (300_000, -1),
            (100_000, 400_000),
            (500_000, -1),
        ];
        assert_eq!(slices, [&want[..], &[(0, long), (long, -1)]].concat());
        let states: Vec<(i64, i64, String, Option<u32>)> = (s.states())
            .map(|x| (x.ts - ms, x.dur(), x.state().to_string(), x.cpu()))
            .collect();
        let run = |ts, dur, cpu| (ts, dur, "Running".to_string(), Some(cpu));
        let s_ = |ts| (ts, -1, "S".to_string(), None);
        assert_eq!(
            states,
            [
                run(0, 100_000, 0),
                run(0, long, 2),
                run(100_000, 200_000, 1),
                s_(300_000),
                s_(500_000),
                s_(long),
            ]
        );
        let of_a: Vec<_> = (s.states())
            .filter(|x| x.thread == thread_named(t, 10))
            .collect();
        assert_eq!(
            of_a,
            s.thread_states(thread_named(t, 10)).collect::<Vec<_>>()
        );
    }
}

/// CPU time per thread adds each slice as `slice_end` ends it: slices cut short by a
/// mismatched switch (no duration, ending where the next of their CPU begins) and the last
/// of each CPU (ending at the trace's end) too. Each CPU's slices are counted apart, so a
/// slice never ends at another CPU's.
#[test]
fn cpu_time_adds_each_slice_as_slice_end_ends_it() {
    for name in ["hostile", "events", "compact"] {
        let t = load(name);
        let s = t.sched().unwrap();
        let idle = Some(thread_named(&t, 0));
        let mut per: std::collections::BTreeMap<u32, (u64, i64)> = Default::default();
        let mut open_mid_cpu = 0;
        for (i, x) in s.slices.iter().enumerate() {
            let next_same_cpu = s
                .slices
                .get(i + 1)
                .filter(|_| s.slice_cpu(i + 1) == s.slice_cpu(i));
            open_mid_cpu += (x.dur < 0 && next_same_cpu.is_some()) as usize;
            if Some(x.thread) != idle {
                let e = per.entry(x.thread).or_default();
                (e.0, e.1) = (e.0 + 1, e.1 + s.slice_end(i, t.end_ns()) - x.ts);
            }
        }
        let mut got = s.cpu_time(t.end_ns(), idle);
        got.sort();
        let want: Vec<(u32, u64, i64)> = per.into_iter().map(|(t, (n, d))| (t, n, d)).collect();
        assert_eq!(got, want, "{name}");
        if name == "hostile" {
            assert!(open_mid_cpu > 0, "no slice left open inside a CPU's");
        }
    }
}
