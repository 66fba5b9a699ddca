// What one server spends per request that another does not, symbol by symbol: two reports of
// `read-features.ts --perf DIR` (perf's cpu-clock samples of every thread, JS frames named) turned
// into CPU µs per request each and sorted by the difference. Reading `bare` against `bare-swap`
// (the same process with node:http's handler) shows where pinbot's request path costs, under
// real load, in pinbot's own frames and in what they call (map lookups, strings, node's code).
//   node bin/run-ts.js bench/tools/perf-diff.ts DIR/bare.txt DIR/bare-swap.txt [TOP]
import { readFileSync } from 'node:fs';

/** µs per request by symbol, and the total, of one report (its first line: the requests). */
function load(file: string): { bySymbol: Map<string, number>; total: number } {
  const text = readFileSync(file, 'utf8');
  const requests = Number(text.split('\n', 1)[0]!.split(' ')[0]);
  const events = Number(/Event count \(approx\.\): (\d+)/.exec(text)?.[1]);
  if (!(requests > 0) || !(events > 0)) throw new Error(`${file}: not a read-features --perf report`);
  // cpu-clock events are nanoseconds
  const total = events / requests / 1000;
  const bySymbol = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^\s+([\d.]+)%\s+\[.\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const name = m[2]!.trim().replace(/\s+/g, ' ').slice(0, 100);
    bySymbol.set(name, (bySymbol.get(name) ?? 0) + (Number(m[1]) / 100) * total);
  }
  return { bySymbol, total };
}

const [fileA, fileB, topArg] = process.argv.slice(2);
if (!fileA || !fileB) {
  console.error('usage: perf-diff.ts A.txt B.txt [TOP]');
  process.exit(2);
}
const a = load(fileA);
const b = load(fileB);
console.log(`CPU µs per request: ${a.total.toFixed(1)} (${fileA}) against ${b.total.toFixed(1)} (${fileB})`);
console.log('  A − B      A      B  symbol');
const names = new Set([...a.bySymbol.keys(), ...b.bySymbol.keys()]);
const rows = [...names]
  .map((n) => ({ n, x: a.bySymbol.get(n) ?? 0, y: b.bySymbol.get(n) ?? 0 }))
  .sort((p, q) => q.x - q.y - (p.x - p.y));
for (const r of rows.slice(0, Number(topArg ?? 30)))
  console.log(
    `${(r.x - r.y).toFixed(2).padStart(6)} ${r.x.toFixed(2).padStart(6)} ${r.y.toFixed(2).padStart(6)}  ${r.n}`,
  );
