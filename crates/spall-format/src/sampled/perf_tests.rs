use super::*;
use crate::sampled::tests::Samples;

fn read(text: &str) -> (Samples, Diagnostics) {
    Samples::read(decode, text)
}

/// `perf script` of `perf record -g` with perf's default fields.
const DEFAULT: &str = "\
spin 4120 [001] 12.000100:     250000 cycles:P: 
\t    55d4c0a01139 leaf+0x10 (/tmp/spin)
\t    55d4c0a01160 main+0x17 (/tmp/spin)
\t    7f2f1a029d8f [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t               0 [unknown] ([unknown])

spin 4120 [001] 12.000350:     125000 cycles:P: 
\tffffffff81a0 asm_sysvec_apic_timer_interrupt+0x1a ([kernel.kallsyms])
\t    55d4c0a01160 main+0x17 (/tmp/spin)

";

#[test]
fn default_output_gives_stacks_periods_and_threads() {
    let (s, d) = read(DEFAULT);
    assert_eq!(d.total(), 0);
    assert_eq!(
        s.stacks(),
        vec![
            ("[unknown];[libc.so.6];main;leaf".into(), 250_000),
            ("main;asm_sysvec_apic_timer_interrupt".into(), 125_000),
        ]
    );
    let a = &s.0[0];
    assert_eq!(
        (a.pid.clone(), a.tid.clone()),
        (RawId::Num(4120), RawId::Num(4120))
    );
    assert_eq!(a.thread_name.as_deref(), Some("spin"));
    assert_eq!(a.ts, Some(12_000_100_000));
    assert_eq!(a.kind, "cycles");
    assert_eq!(a.stack[3].1.as_deref(), Some("/tmp/spin"));
    assert_eq!(s.0[1].ts, Some(12_000_350_000));
}

#[test]
fn field_sets_comm_with_spaces_pid_tid_no_cpu_no_period() {
    let text = "\
V8 Worker Thread 100/102 5.000001000: cpu-clock:u: 
\t1000 work (/bin/node)

V8 Worker Thread 100/103 [002] 5.000002: 7 instructions: 
\t1000 work+0x4 (/bin/node)
";
    let (s, d) = read(text);
    assert_eq!(d.total(), 0);
    let ids: Vec<_> = s.0.iter().map(|x| (x.pid.clone(), x.tid.clone())).collect();
    assert_eq!(
        ids,
        vec![
            (RawId::Num(100), RawId::Num(102)),
            (RawId::Num(100), RawId::Num(103))
        ]
    );
    assert_eq!(s.0[0].thread_name.as_deref(), Some("V8 Worker Thread"));
    assert_eq!(
        (s.0[0].ts, s.0[0].weight, s.0[0].kind.as_str()),
        (Some(5_000_001_000), 1, "cpu-clock")
    );
    assert_eq!((s.0[1].weight, s.0[1].kind.as_str()), (7, "instructions"));
}

#[test]
fn without_callchains_the_frame_is_on_the_header_line() {
    let text = "\
a.out 7 [000] 1.000001:   1000 cycles:  401126 f+0x6 (/tmp/a.out)
a.out 7 [000] 1.000002:   1000 cycles:  ffffffff8100 [unknown] ([unknown])
a.out 7 1.000003: sched:sched_switch: prev_comm=a.out prev_pid=7
";
    let (s, d) = read(text);
    assert_eq!(d.total(), 0);
    assert_eq!(
        s.stacks(),
        vec![
            ("f".into(), 1000),
            ("[unknown]".into(), 1000),
            ("".into(), 1)
        ]
    );
    assert_eq!(s.0[2].kind, "sched:sched_switch");
}

#[test]
fn symbols_with_spaces_inlined_frames_and_source_lines() {
    let text = "\
prog 9 1.0: 1 cycles:
\t4010 std::vector<int, std::allocator<int> >::push_back(int const&)+0x2 (/tmp/prog)
\t  prog.cc:12
\t4010 inlined_fn (inlined)
  ??:0
\tffff81 k ([kernel.kallsyms])
  [kernel.kallsyms][ffffffff8226f122]
\t4020 main (/tmp/prog)
\t4030
";
    let (s, d) = read(text);
    assert_eq!(d.total(), 0);
    let st = &s.0[0].stack;
    assert_eq!(st[0].0, "[unknown]");
    assert_eq!(st[1], ("main".into(), Some("/tmp/prog".into()), None));
    assert_eq!(st[2].0, "k");
    assert_eq!(st[3], ("inlined_fn".into(), None, None));
    let push = &st[4];
    assert_eq!(
        push.0,
        "std::vector<int, std::allocator<int> >::push_back(int const&)"
    );
    assert_eq!((push.1.as_deref(), push.2), (Some("prog.cc"), Some(12)));
}

#[test]
fn header_comments_are_skipped() {
    let text =
        "# ========\n# captured on: x\n# ========\n#\nspin 1 1.000000: 5 cycles:\n\t1 f (x)\n";
    assert!(looks_like(text.as_bytes()));
    let (s, d) = read(text);
    assert_eq!((s.stacks(), d.total()), (vec![("f".into(), 5)], 0));
}

#[test]
fn hostile_input_is_counted_never_fatal() {
    for text in [
        "\tffff f (x)\n",
        "spin 1 1.000000: 5 cycles:\n\tnot a frame\n",
        "garbage line\n\n\n",
        "spin 1 99999999999.0: 5 cycles:\n",
        "spin 1 1.000000: 99999999999999999999 cycles:\n",
        "spin 1 1.0000",
        "\u{0}\u{1}\u{2} :::: \t\t\n\t 0x (\n",
    ] {
        let (s, d) = read(text);
        assert!(d.total() + s.0.len() as u64 >= 1, "{text:?}");
    }
    // Invalid UTF-8 is replaced and counted.
    let mut s = Samples::default();
    let mut d = Diagnostics::default();
    decode(b"sp\xffin 1 1.0: 1 cycles:\n\t1 f (x)\n", &mut s, &mut d).unwrap();
    assert_eq!(s.0[0].thread_name.as_deref(), Some("sp\u{FFFD}in"));
    assert_eq!(d.count(WarningKind::InvalidUtf8), 1);
    // Cut anywhere, a record never panics.
    for cut in 0..DEFAULT.len() {
        if DEFAULT.is_char_boundary(cut) {
            let _ = read(&DEFAULT[..cut]);
        }
    }
}

#[test]
fn header_parts() {
    assert_eq!(time_ns("12.5"), Some(12_500_000_000));
    assert_eq!(time_ns("1.000000001"), Some(1_000_000_001));
    assert_eq!(time_ns("1."), None);
    assert_eq!(event_name("cycles:uppp"), "cycles");
    assert_eq!(event_name("sched:sched_switch"), "sched:sched_switch");
    let h = header("kworker/0:1 12/13 [003] 2.0: 9 cpu-clock:").unwrap();
    assert_eq!(
        (h.comm, h.pid, h.tid, h.cpu, h.period),
        ("kworker/0:1", Some(12), Some(13), Some(3), Some(9))
    );
    // A bracketed word inside the comm is no cpu.
    let h = header("w 12 [x] more 13 2.0: cpu-clock:").unwrap();
    assert_eq!((h.comm, h.tid, h.cpu), ("w 12 [x] more", Some(13), None));
    assert_eq!(header("a 5 2.0: cpu-clock:").unwrap().cpu, None);
    assert!(header("no event here").is_none());
}

/// A record's last lines equal to the last record's are taken as that record read them:
/// a source line among them still names the frame above it (here not one of them), a
/// record that begins with one warns as a first line does, and a line that is not a frame
/// warns again, at its own offset.
#[test]
fn lines_shared_with_the_last_record_read_as_their_own() {
    let rec = |ts: u32, leaf: &str| {
        format!("p 1 {ts}.0: 1 cycles:\n{leaf}\t  a.c:3\n\t20 main (x)\n\tbogus line\n\n")
    };
    let text = rec(1, "\t10 a (x)\n") + &rec(2, "\t11 b (x)\n") + &rec(3, "");
    let (s, d) = read(&text);
    assert_eq!(
        s.stacks(),
        vec![
            ("main;a".into(), 1),
            ("main;b".into(), 1),
            ("main".into(), 1)
        ]
    );
    let src = |i: usize| (s.0[i].stack[1].1.clone(), s.0[i].stack[1].2);
    assert_eq!(src(0), (Some("a.c".into()), Some(3)));
    assert_eq!(src(1), (Some("a.c".into()), Some(3)));
    assert_eq!(s.0[2].stack[0].2, None);
    // Three bogus lines and the third record's source line with no frame above it.
    assert_eq!(d.total(), 4);
    let mut at: Vec<u64> = d.examples().iter().map(|w| w.offset).collect();
    at.sort_unstable();
    let bogus: Vec<u64> = (text.match_indices("\tbogus").map(|(i, _)| i as u64)).collect();
    let third_src = text.rfind("\t  a.c").unwrap() as u64;
    assert_eq!(at, vec![bogus[0], bogus[1], third_src, bogus[2]]);
}

/// Lines read before are taken from the run's table of readings, which holds at most
/// `READ_MAX` of them: lines that differ in one byte (the address) or only in the symbol
/// stay apart, and lines past the table's bound, read again, are still their own.
#[test]
fn lines_read_before_are_their_own_past_the_tables_bound() {
    let n = READ_MAX + 50;
    let line = |i: usize| format!("\t{:x} f{i}+0x1 (/bin/x)\n", 0x1000 + i);
    let mut text = String::new();
    for round in 0..2 {
        for i in 0..n {
            // A line of the same text as one before (most records), and one differing
            // from it in its address alone (its symbol is another).
            text += &format!("p 1 {round}.{i:06}: 1 cycles:\n{}", line(i));
            text += &format!(
                "\t{:x} g{i}+0x1 (/bin/x)\n\t20 main (/bin/x)\n\n",
                0x1000 + i + 1
            );
        }
    }
    let (s, d) = read(&text);
    assert_eq!(d.total(), 0);
    let stacks = s.stacks();
    assert_eq!(stacks.len(), 2 * n);
    for (k, (stack, _)) in stacks.iter().enumerate() {
        let i = k % n;
        assert_eq!(stack, &format!("main;g{i};f{i}"), "sample {k}");
    }
}

/// Records that share their last lines with the record before them, in every mix of frame
/// lines, source lines, lines that are neither, frames on the header line and records with
/// no lines, read as each record read alone: the same stacks, files and lines, and the same
/// warnings. A node names one stack: samples with the same node at a depth have the same
/// frames up to it. The outer frames a sample says are the last sample's are.
#[test]
fn records_read_in_a_row_are_each_read_alone() {
    type Frames = Vec<(String, Option<String>, Option<u32>)>;
    #[derive(Default)]
    struct Stacks(Vec<(Frames, Vec<u32>)>, usize);
    impl EventSink for Stacks {
        fn event(&mut self, _: &crate::RawEvent<'_>) {}
        fn sample(&mut self, s: &RawSample<'_>) {
            let f = |f: &RawFrame<'_>| {
                (
                    f.name.to_string(),
                    f.file.as_deref().map(Into::into),
                    f.line,
                )
            };
            let stack: Frames = s.stack.iter().map(f).collect();
            // The outer frames said to be the last sample's are.
            let last = self.0.last().map_or(&[][..], |l| &l.0[..]);
            let kept = s.same_outer;
            assert!(kept <= last.len() && kept <= stack.len() && stack[..kept] == last[..kept]);
            self.1 += kept;
            self.0.push((stack, s.nodes.to_vec()));
        }
    }
    let pool = [
        "\t10 a (x)",
        "\t11 b (x)",
        "\t12 c+0x4 (x)",
        "\t20 main (x)",
        "\t  a.c:3",
        "\t  ??:0",
        "\tbogus line",
        "\t  [kernel.kallsyms][ffff]",
    ];
    let mut next = picker(0x2545_f491_4f6c_dd1d);
    let (mut text, mut records, mut last) = (String::new(), Vec::new(), Vec::<&str>::new());
    for i in 0..3000 {
        let mut lines: Vec<&str> = (0..next(4)).map(|_| pool[next(pool.len())]).collect();
        // Most records keep some of the last one's outer lines, as samples do.
        let keep = if next(4) == 0 {
            0
        } else {
            next(last.len() + 1)
        };
        lines.extend_from_slice(&last[last.len() - keep..]);
        let on_header = if next(10) == 0 { " 30 h (x)" } else { "" };
        let mut rec = format!("p 1 {i}.0: 1 cycles:{on_header}\n");
        for l in &lines {
            rec += l;
            rec += "\n";
        }
        rec += "\n";
        records.push(rec.clone());
        text += &rec;
        last = lines;
    }
    let run = |t: &str| {
        let (mut s, mut d) = (Stacks::default(), Diagnostics::default());
        decode(t.as_bytes(), &mut s, &mut d).unwrap();
        (s, d.total())
    };
    let (all, warned) = run(&text);
    let mut alone = (Vec::new(), 0);
    for r in &records {
        let (s, w) = run(r);
        alone.0.extend(s.0.into_iter().map(|(stack, _)| stack));
        alone.1 += w;
    }
    let stacks: Vec<_> = all.0.iter().map(|(s, _)| s.clone()).collect();
    assert_eq!((stacks, warned), alone);
    let mut named = std::collections::HashMap::new();
    for (stack, nodes) in all.0.iter().filter(|(_, n)| !n.is_empty()) {
        assert_eq!(nodes.len(), stack.len());
        for (d, n) in nodes.iter().enumerate() {
            assert_eq!(named.entry(*n).or_insert(&stack[..=d]), &&stack[..=d]);
        }
    }
    assert!(named.len() > 20, "few samples had nodes: {}", named.len());
    assert!(all.1 > 300, "{} outer frames kept", all.1);
}

/// A header read as the last one's with another time and period is the header read
/// anew, whatever comes before it: times and periods of every length, malformed ones,
/// a period where the last had none and none where it had one, another thread or event,
/// blanks between the words.
#[test]
fn headers_read_after_the_last_are_read_anew() {
    let threads = [
        "spin 611",
        "w 12/13 [003]",
        "V8 Worker 7/8",
        "",
        "kworker/0:1 5",
    ];
    let times = [
        "2592.928657:",
        "1.5:",
        "12.x:",
        "99999999999.0:",
        "7.000000001:",
        "3:",
        "5.25",
    ];
    let periods = ["", "500000", "1", "1234567890123456789", "12a", "  42"];
    let events = ["cpu-clock:ppp: ", "cycles:u:", "cycles: 4010 f (x)", "x"];
    let mut pick = picker(0x9e37_79b9_7f4a_7c15);
    // Runs of one thread, event and spacing, as profiles have.
    let mut run = (threads[0], " ", events[0]);
    let lines: Vec<String> = (0..20_000)
        .map(|_| {
            if pick(10) == 0 {
                let sep = ["  ", " ", "\t"][pick(3)];
                run = (
                    threads[pick(threads.len())],
                    sep,
                    events[pick(events.len())],
                );
            }
            let (t, sep, e) = run;
            let (ts, p) = (times[pick(times.len())], periods[pick(periods.len())]);
            format!("{t}{sep}{ts}{sep}{p}{sep}{e}")
        })
        .collect();
    let mut last = LastHeaders::default();
    let mut again = 0;
    for line in &lines {
        again += usize::from(last.kept.iter().any(|k| k.again(line).is_some()));
        assert_eq!(last.read(line), header(line), "{line:?}");
    }
    assert!(again > 500, "{again} read again");
}

/// A number under `n` each call, the same ones each run (xorshift).
fn picker(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}
