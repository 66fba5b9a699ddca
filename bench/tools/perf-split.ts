// Where a read's CPU goes, by stage, for several servers side by side: the `perf record` data of
// `read-features.ts --perf DIR` (DIR/NAME.data, every thread with call graphs, JS frames named)
// read through `perf script`, each sample put in one stage by its stack — the request listener's
// own work, its head and socket write (`writeHead`, `end` and the writev syscall), node's parser before
// and after it, the ticks (process.nextTick, microtasks: where the async hooks of an
// AsyncLocalStorage run), the event loop's poll, the collector on the main thread, the other
// threads — as CPU µs per request (the sample's period × samples ÷ the requests of the report).
// With `--under REGEX`: the frames below the first frame matching REGEX instead (a stage taken
// apart: `--under 'front.js'` is pinbot's listener), excluding stacks through `--except REGEX`.
//   node bin/run-ts.js bench/tools/perf-split.ts DIR serve bare node fastify
//   node bin/run-ts.js bench/tools/perf-split.ts DIR serve --under 'front\.js' --except '\*end node:_http_outgoing' --depth 2
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    under: { type: 'string' },
    except: { type: 'string' },
    depth: { type: 'string', default: '1' },
    top: { type: 'string', default: '30' },
  },
});
const [dir, ...names] = positionals;
if (!dir || names.length === 0)
  throw new Error('usage: perf-split.ts DIR NAME… [--under REGEX [--except REGEX] [--depth N]]');

/** The listener's frame in each kind of server (pinbot, node:http, the swap, Fastify's handler). */
const LISTENER = /api\/edge\/front\.js|node-read-handler|read-swap-listener|wrap-thenable|routeHandler/;

/** One sample: its thread (main or not) and its frames, leaf first. */
interface Sample {
  main: boolean;
  frames: string[];
}

function samples(name: string): { list: Sample[]; usPerSample: number } {
  const report = readFileSync(join(dir!, `${name}.txt`), 'utf8');
  const requests = Number(report.split('\n', 1)[0]!.split(' ')[0]);
  const events = Number(/Event count \(approx\.\): (\d+)/.exec(report)?.[1]);
  const out = spawnSync('perf', ['script', '-i', join(dir!, `${name}.data`), '-F', 'comm,pid,tid,ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const list: Sample[] = [];
  for (const block of out.stdout.split('\n\n')) {
    const lines = block.trim().split('\n');
    const head = /^\s*\S+\s+(\d+)\/(\d+)/.exec(lines[0] ?? '');
    if (!head) continue;
    const frames = lines.slice(1).map((l) =>
      l
        .trim()
        .replace(/^[0-9a-f]+\s+/, '')
        .replace(/\+0x[0-9a-f]+.*$/, '')
        .replace(/ \(.*\)$/, '')
        .replace(/file:\/\/\/\S*?\/dist\//, ''),
    );
    list.push({ main: head[1] === head[2], frames });
  }
  // cpu-clock events are nanoseconds; a sample stands for events ÷ samples of them
  return { list, usPerSample: events / list.length / 1000 / requests };
}

/** The stage of a sample. */
function stage(s: Sample): string {
  if (!s.main) return 'other threads';
  const all = s.frames.join('\n');
  // the head counts with the write whoever writes it (pinbot's writeHead, node's inside `end`)
  if (LISTENER.test(all))
    return /\*end node:_http_outgoing|\*writeHead /.test(all) ? 'listener: head and write (writev)' : 'listener: own';
  if (all.includes('processTicksAndRejections')) return 'ticks (nextTick, microtasks)';
  if (all.includes('parserOnHeadersComplete')) return "parser → JS (node's request, response)";
  if (all.includes('Parser::')) return "parser (node's C++, the read)";
  if (/Scaveng|Heap::|MarkCompact/.test(all)) return 'collector (main thread)';
  if (/uv__io_poll|epoll/.test(all)) return 'event loop poll';
  return 'other (main thread)';
}

/** The frames below the first matching `under`, `depth` of them (JS and V8 builtins), or undefined. */
function below(s: Sample, under: RegExp, except: RegExp | undefined, depth: number): string | undefined {
  const at = s.frames.findIndex((f) => under.test(f));
  if (at === -1) return undefined;
  const inner = s.frames.slice(0, at);
  if (except && inner.some((f) => except.test(f))) return undefined;
  const named = inner.reverse().filter((f) => /^(JS:|Builtins_)|Runtime_/.test(f));
  return named.slice(0, depth).join(' > ') || '(its own frame)';
}

const rows = new Map<string, number[]>();
names.forEach((name, i) => {
  const { list, usPerSample } = samples(name);
  for (const s of list) {
    const key = opts.under
      ? below(s, new RegExp(opts.under), opts.except ? new RegExp(opts.except) : undefined, Number(opts.depth))
      : stage(s);
    if (key === undefined) continue;
    const row = rows.get(key) ?? names.map(() => 0);
    row[i]! += usPerSample;
    rows.set(key, row);
  }
});
const sorted = [...rows].sort((a, b) => b[1][0]! - a[1][0]!).slice(0, Number(opts.top));
const total = names.map((_, i) => [...rows.values()].reduce((sum, r) => sum + r[i]!, 0));
console.log(`CPU µs per request${opts.under ? ` under /${opts.under}/` : ', by stage'}`);
console.log(`${''.padEnd(44)}${names.map((n) => n.padStart(11)).join('')}`);
for (const [key, r] of sorted)
  console.log(`${key.slice(0, 44).padEnd(44)}${r.map((x) => x.toFixed(2).padStart(11)).join('')}`);
console.log(`${'total'.padEnd(44)}${total.map((x) => x.toFixed(2).padStart(11)).join('')}`);
