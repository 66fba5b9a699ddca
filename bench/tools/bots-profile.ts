// A V8 .cpuprofile grouped by the nearest frame of pinbot's own (a file under dist/ or src/):
// node's own calls (buffers, hashes, promises, async hooks, p-queue) are counted to the source
// file of ours that made them, so "the bots' client" includes the JSON.parse it calls. GC and
// (program) stay apart. Samples before the first with FUNCTION on the stack are left out.
//   node bin/run-ts.js bench/tools/bots-profile.ts FILE.cpuprofile [TOP] [--from round]
//     [--detail runtime/state/traces] (that group's samples by the function that ran)
import { exitQuietlyOnClosedPipe } from '../../src/cli/quiet-pipe.js';
import { readProfile } from './cpu-profile.js';

exitQuietlyOnClosedPipe();
const argv = process.argv.slice(2);
const fromAt = argv.indexOf('--from');
const from = fromAt >= 0 ? argv.splice(fromAt, 2)[1] : undefined;
const detailAt = argv.indexOf('--detail');
const detail = detailAt >= 0 ? argv.splice(detailAt, 2)[1] : undefined;
const file = argv[0];
const top = Number(argv[1] ?? 40);
if (!file) {
  console.error('usage: bots-profile.ts FILE.cpuprofile [TOP] [--from FUNCTION]');
  process.exit(2);
}
const { profile: p, byId, parent, onStack } = readProfile(file);
const ours = /\/(dist|src)\/(.*)$/;
/** The group of a node: its nearest frame of ours (file), else its own kind. */
const memo = new Map<number, string>();
function group(id: number): string {
  const hit = memo.get(id);
  if (hit !== undefined) return hit;
  const self = byId.get(id)!.callFrame;
  let g: string | undefined;
  if (
    self.functionName === '(garbage collector)' ||
    self.functionName === '(program)' ||
    self.functionName === '(idle)'
  )
    g = self.functionName;
  for (let at: number | undefined = id; g === undefined && at !== undefined; at = parent.get(at)) {
    const m = ours.exec(byId.get(at)!.callFrame.url);
    if (m) g = m[2]!.replace(/\.(js|ts)$/, '');
  }
  g ??= '(node, no frame of ours)';
  memo.set(id, g);
  return g;
}
const t = new Map<string, number>();
let started = from === undefined;
let busy = 0;
p.samples.forEach((id, i) => {
  if (!started && onStack(id, from!)) started = true;
  if (!started) return;
  const g = group(id);
  if (g === '(idle)') return;
  const d = p.timeDeltas[i] ?? 0;
  busy += d;
  const f = byId.get(id)!.callFrame;
  const k =
    detail === undefined
      ? g
      : g === detail
        ? `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}`
        : undefined;
  if (k !== undefined) t.set(k, (t.get(k) ?? 0) + d);
});
console.log(`${(busy / 1e6).toFixed(1)} s of busy samples${from ? ` from the first ${from}` : ''}`);
for (const [g, v] of [...t].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${((100 * v) / busy).toFixed(1).padStart(5)}%  ${g}`);
