// Summarises a V8 .cpuprofile (from node --cpu-prof): the functions and the packages that took
// the most self time. node bin/run-ts.js bench/tools/profile-summary.ts FILE [TOP] [--from FUNCTION]
// --from FUNCTION leaves out the samples before the first one with FUNCTION on its stack (e.g.
// `--from parserOnHeadersComplete`: start-up left out, only the server under load).
import { exitQuietlyOnClosedPipe } from '../../src/cli/quiet-pipe.js';
import { type ProfileNode, readProfile } from './cpu-profile.js';

// `… | head` closes the pipe early: end quietly, as the pinbot CLI does
exitQuietlyOnClosedPipe();

const argv = process.argv.slice(2);
const fromAt = argv.indexOf('--from');
const from = fromAt >= 0 ? argv.splice(fromAt, 2)[1] : undefined;
const file = argv[0];
const top = Number(argv[1] ?? 25);
if (!file || (fromAt >= 0 && !from)) {
  console.error('usage: profile-summary.ts FILE.cpuprofile [TOP] [--from FUNCTION]');
  process.exit(2);
}
const { profile, byId, parent, onStack } = readProfile(file);
const first = from === undefined ? 0 : profile.samples.findIndex((id) => onStack(id, from));
if (first < 0) {
  console.error(`no sample has ${from} on its stack`);
  process.exit(1);
}
const self = new Map<number, number>();
profile.samples.forEach((id, i) => i >= first && self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
// Idle time (the server waiting for load) says nothing about where work goes: leave it out.
for (const [id] of self) if (byId.get(id)!.callFrame.functionName === '(idle)') self.delete(id);
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a frame lives: a package name, a repository file, or a V8 / node category. */
function owner(url: string, name: string): string {
  if (!url) return `(${name || 'native'})`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\//, '');
}

const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'}  ` +
  `${owner(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;
const fns = new Map<string, number>();
const owners = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const o = owner(n.callFrame.url, n.callFrame.functionName);
  fns.set(label(n), (fns.get(label(n)) ?? 0) + us);
  owners.set(o, (owners.get(o) ?? 0) + us);
  // Inclusive time: every distinct function on the stack of this sample.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const l = label(byId.get(at)!);
    if (!seen.has(l)) inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    seen.add(l);
  }
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
console.log(`${(total / 1e6).toFixed(1)} s of busy samples (idle left out)\n\nby owner (self time):`);
for (const [o, us] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${o}`);
console.log('\nby function (self time):');
for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${f}`);
console.log('\nby function (inclusive time):');
for (const [f, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${f}`);
