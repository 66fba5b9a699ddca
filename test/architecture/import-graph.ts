// The import graph of src/: which file imports which (type-only imports included), its
// circles, and the edges that break the layering of DESIGN.md. `npm run imports` prints it
// (print-imports.ts); test/architecture/imports.test.ts fails on any circle or such edge.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Every .ts file under `dir`, relative to src/. */
function files(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return name.endsWith('.ts') ? [relative(SRC, full)] : [];
  });
}

/** file → the src files it imports (relative specifiers only; packages are not edges). */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files()) {
    const info = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
    const deps = info.importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(SRC, resolve(SRC, dirname(file), spec)).replace(/\.js$/, '.ts'));
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The top-level area of a file: `runtime`, `domain`, …, or the file name for src/*.ts. */
export const area = (file: string) => (file.includes('/') ? file.split('/')[0]! : file.replace(/\.ts$/, ''));

/**
 * What each area may import besides itself (docs/architecture.md has this table; its test
 * checks the two agree). An area missing here is a violation of its own: every area has a rule.
 * The drawing in docs/architecture.md puts each area above all it imports.
 */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  util: [],
  telemetry: [],
  'log-destination': [],
  'server-errors': ['util'],
  clock: ['util', 'telemetry'],
  store: ['util', 'telemetry'],
  config: ['util'],
  log: ['log-destination'],
  client: ['util', 'clock', 'telemetry'],
  domain: ['store', 'clock', 'config', 'util'],
  runtime: ['client', 'store', 'clock', 'config', 'util', 'telemetry'],
  api: ['domain', 'store', 'clock', 'config', 'util', 'telemetry'],
  admin: ['domain', 'store', 'clock', 'util'],
  'http-server': ['api', 'config', 'util', 'telemetry'],
  'plugin-api': ['runtime', 'client', 'store', 'clock', 'util', 'telemetry'],
  deployment: ['runtime', 'api', 'domain', 'store', 'clock', 'config', 'util'],
  services: [
    'deployment',
    'plugin-api',
    'runtime',
    'admin',
    'api',
    'domain',
    'store',
    'clock',
    'config',
    'util',
    'telemetry',
  ],
  server: [
    'deployment',
    'services',
    'plugin-api',
    'runtime',
    'admin',
    'api',
    'http-server',
    'domain',
    'store',
    'clock',
    'config',
    'log',
    'server-errors',
    'util',
  ],
  testing: ['server', 'deployment', 'services', 'plugin-api', 'runtime', 'domain', 'client', 'clock', 'config', 'util'],
  console: [
    'deployment',
    'services',
    'plugin-api',
    'runtime',
    'admin',
    'domain',
    'store',
    'clock',
    'util',
    'telemetry',
  ],
  scenario: [
    'testing',
    'console',
    'services',
    'plugin-api',
    'runtime',
    'api',
    'domain',
    'store',
    'clock',
    'config',
    'util',
    'telemetry',
  ],
  cli: [
    'scenario',
    'console',
    'server',
    'deployment',
    'services',
    'plugin-api',
    'runtime',
    'admin',
    'store',
    'config',
    'log',
    'clock',
    'util',
    'server-errors',
    'telemetry',
  ],
  index: ['client'],
};

/**
 * Which files of an area the others may reach, where not all: the runtime has a public face
 * (runtime/index.ts), and reaches the store only through its interface (and the memory store).
 */
export const ONLY_THROUGH: Record<string, (from: string, dep: string) => boolean> = {
  runtime: (_from, dep) => dep === 'runtime/index.ts',
  store: (from, dep) => area(from) !== 'runtime' || ['store/core/types.ts', 'store/core/memory-store.ts'].includes(dep),
};

/**
 * Folders inside an area, in order: a folder imports only folders before it (and itself).
 * Top-level files of the area count as a folder of their own name (`ports`, `index`).
 * The runtime's stages are its pipeline; the store's drivers stand on core/ and not on each other.
 */
export const STAGES: Record<string, ReadonlyArray<readonly string[]>> = {
  runtime: [
    ['contract'],
    ['liquid'],
    ['builtins', 'define'],
    ['state'],
    ['ports'],
    ['run'],
    ['bot'],
    ['host'],
    ['registry'],
    ['index'],
  ],
  store: [['core'], ['file', 'postgres'], ['transfer']],
};

/**
 * Leaves: folders the rest of their area never imports, only the folders named (its
 * composition). The runtime's built-ins are written against contract/ as a plugin is, and
 * registry.ts registers them (index.ts shows one of their helpers, validTimeZone).
 */
export const LEAVES: Record<string, Record<string, readonly string[]>> = {
  runtime: { builtins: ['registry', 'index'] },
};

/** The folder of a file inside its area (`runtime/run/decide.ts` → `run`; `runtime/ports.ts` → `ports`). */
export const stage = (file: string) => file.split('/')[1]!.replace(/\.ts$/, '');

/** Edges that break the rules: an area imported that is not below, a back door, a stage out of order. */
export function violations(graph: Map<string, string[]>): string[] {
  const out = new Set<string>();
  for (const [file, deps] of graph) {
    const a = area(file);
    const may = MAY_IMPORT[a];
    if (!may) out.add(`${file}: the area ${a} has no import rule`);
    const order = STAGES[a];
    const rank = (f: string) => order?.findIndex((g) => g.includes(stage(f))) ?? 0;
    if (rank(file) < 0) out.add(`${file}: ${stage(file)}/ has no place in the order of ${a}/`);
    for (const d of deps) {
      const b = area(d);
      if (a !== b) {
        if (may && !may.includes(b)) out.add(`${file} → ${d}`);
        else if (ONLY_THROUGH[b] && !ONLY_THROUGH[b](file, d)) out.add(`${file} → ${d} (not through its public files)`);
        continue;
      }
      const by = LEAVES[a]?.[stage(d)];
      if (by && stage(file) !== stage(d) && !by.includes(stage(file)))
        out.add(`${file} → ${d} (${stage(d)}/ is a leaf: only ${by.join(', ')} import it)`);
      if (!order) continue;
      const [rf, rd] = [rank(file), rank(d)];
      if (rf >= 0 && (rd > rf || (rd === rf && stage(file) !== stage(d))))
        out.add(`${file} → ${d} (${stage(d)}/ comes after ${stage(file)}/)`);
    }
  }
  return [...out].sort();
}
