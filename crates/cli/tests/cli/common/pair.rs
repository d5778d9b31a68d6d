//! Generated pairs of traces with known changes, for `diff` and `check`: a base and a new
//! trace where one function got slower, one faster, one was removed, one added, and the
//! rest only moved by ±2% noise.

use std::path::Path;

/// A deterministic ±2% jitter.
struct Noise(u64);

impl Noise {
    fn jitter(&mut self, us: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let u = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        us * (1.0 + 0.04 * (u - 0.5))
    }
}

/// 100 frames on a thread named "main" (ids `pid:tid`), each calling `calls` in order:
/// (name, microseconds per call, calls per frame), every duration jittered by ±2%.
pub fn trace(dir: &Path, file: &str, pid: u32, calls: &[(&str, f64, u32)], seed: u64) -> String {
    let mut noise = Noise(seed);
    let mut ev = vec![format!(
        r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{pid}7,"args":{{"name":"main"}}}}"#
    )];
    let mut ts = 0.0;
    for _ in 0..100 {
        let start = ts;
        ts += 5.0;
        for &(name, us, n) in calls {
            for _ in 0..n {
                let d = noise.jitter(us);
                ev.push(format!(
                    r#"{{"ph":"X","name":"{name}","ts":{ts:.3},"dur":{d:.3},"pid":{pid},"tid":{pid}7}}"#
                ));
                ts += d + 1.0;
            }
        }
        ts += 5.0;
        ev.push(format!(
            r#"{{"ph":"X","name":"frame","ts":{start:.3},"dur":{:.3},"pid":{pid},"tid":{pid}7}}"#,
            ts - start
        ));
        ts += 20.0;
    }
    let path = dir.join(file);
    std::fs::write(&path, format!("[{}]", ev.join(",\n"))).unwrap();
    path.display().to_string()
}

pub const STEADY: [(&str, f64, u32); 4] = [
    ("steady_a", 20.0, 3),
    ("steady_b", 45.0, 1),
    ("steady_c", 80.0, 1),
    ("steady_d", 5.0, 4),
];

/// A base and a new trace (with other pids) whose changes are known.
pub fn pair(dir: &Path, seed: u64) -> (String, String) {
    let mut base = vec![
        ("slow_fn", 100.0, 1),
        ("fast_fn", 100.0, 1),
        ("gone_fn", 50.0, 1),
    ];
    let mut new = vec![
        ("slow_fn", 130.0, 1),
        ("fast_fn", 70.0, 1),
        ("new_fn", 40.0, 1),
    ];
    base.extend(STEADY);
    new.extend(STEADY);
    (
        trace(dir, &format!("base{seed}.json"), 100, &base, seed),
        trace(dir, &format!("new{seed}.json"), 200, &new, seed * 7 + 3),
    )
}
