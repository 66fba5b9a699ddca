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

/** A runtime file other than its public face, runtime/index.ts. */
const deepRuntime = (d: string) => area(d) === 'runtime' && d !== 'runtime/index.ts';

/**
 * What each area may not import (DESIGN.md "Layout": arrows point down only). The runtime talks
 * to the server only through client/, and may use the store's public interface alone.
 */
export const FORBIDDEN: Record<string, (dep: string) => boolean> = {
  domain: (d) => ['api', 'runtime', 'cli', 'admin', 'services', 'server', 'plugin-api', 'scenario', 'testing', 'client'].includes(area(d)),
  store: (d) => !['store', 'util'].includes(area(d)),
  clock: (d) => !['clock', 'util'].includes(area(d)),
  util: (d) => area(d) !== 'util',
  client: (d) => !['client', 'util', 'clock'].includes(area(d)),
  runtime: (d) => ['domain', 'api', 'cli', 'admin', 'services', 'server', 'scenario', 'testing'].includes(area(d)) || (area(d) === 'store' && !['store/core/types.ts', 'store/core/memory-store.ts'].includes(d)),
  api: (d) => ['runtime', 'cli', 'admin', 'services', 'server', 'scenario', 'testing', 'plugin-api'].includes(area(d)),
  admin: (d) => ['runtime', 'cli', 'services', 'server', 'scenario', 'testing', 'plugin-api'].includes(area(d)),
  services: (d) => ['cli', 'server', 'scenario', 'testing'].includes(area(d)) || deepRuntime(d),
  cli: deepRuntime,
  testing: deepRuntime,
  'plugin-api': deepRuntime,
  scenario: deepRuntime,
};

/** Edges that run back up the layers. */
export function violations(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    const rule = FORBIDDEN[area(file)];
    for (const d of deps) if (rule?.(d)) out.push(`${file} → ${d}`);
  }
  return out.sort();
}

