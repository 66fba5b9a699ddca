import { describe, expect, it } from 'vitest';
import { circles, importGraph, violations } from './import-graph.js';

describe('the import graph of src/ (npm run imports prints it)', () => {
  const graph = importGraph();

  it('reads real imports (the graph is not empty)', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('server.ts')).toContain('services/index.ts');
  });

  it('has no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no edge that runs back up: domain/ and store/ import no api/, runtime/ or cli/; runtime/ no domain/ or store internals; services/, cli/, testing/, plugin-api/, scenario/ reach runtime/ only through runtime/index.ts', () => {
    expect(violations(graph)).toEqual([]);
  });

  it('the checks can fail: a circle and upward edges in a made-up graph are found', () => {
    const bad = new Map<string, string[]>([
      ['domain/a.ts', ['api/errors.ts']],
      ['api/errors.ts', ['domain/a.ts']],
      ['runtime/x.ts', ['store/file/file-store.ts', 'store/core/types.ts', 'domain/users/users.ts']],
      ['store/file/file-store.ts', ['runtime/x.ts']],
      ['cli/c.ts', ['runtime/index.ts', 'runtime/host/bot-host.ts']],
    ]);
    expect(circles(bad).map((c) => c.join(' '))).toEqual(expect.arrayContaining(['api/errors.ts domain/a.ts', 'runtime/x.ts store/file/file-store.ts']));
    expect(violations(bad)).toEqual(['cli/c.ts → runtime/host/bot-host.ts', 'domain/a.ts → api/errors.ts', 'runtime/x.ts → domain/users/users.ts', 'runtime/x.ts → store/file/file-store.ts', 'store/file/file-store.ts → runtime/x.ts']);
  });
});
