// Chromium's CPU time from /proc, for the benchmarks: every thread of the processes below
// `root` (by default this process, which launched the browser; the root is counted unless
// it is this process), with its process's kind (browser, renderer, gpu-process, utility)
// and its name, its seconds on a core and its seconds runnable but waiting for one
// (schedstat).
import { readdirSync, readFileSync } from "node:fs";

export function chromiumThreads(root = process.pid) {
  const procs = new Map();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      procs.set(Number(pid), { ppid: Number(stat[1]), kind: (cmd.match(/--type=([\w-]+)/) || [, "browser"])[1] });
    } catch {}
  }
  const below = (pid) => pid === root || (procs.has(pid) && pid > 1 && below(procs.get(pid).ppid));
  const out = new Map();
  for (const [pid, p] of procs) {
    if (pid === process.pid || !below(pid)) continue;
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const raw = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const name = raw.slice(raw.indexOf("(") + 1, raw.lastIndexOf(")"));
        const [ran, waited] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
        out.set(`${pid}/${tid}`, { kind: p.kind, name, ran: ran / 1e9, waited: waited / 1e9 });
      }
    } catch {}
  }
  return out;
}

// Seconds on a core of the processes below `root`, summed by kind.
export function cpuByKind(root = process.pid) {
  const by = {};
  for (const t of chromiumThreads(root).values()) by[t.kind] = (by[t.kind] || 0) + t.ran;
  return by;
}
