import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { area, circles, importGraph, LEAVES, MAY_IMPORT, STAGES, violations } from './import-graph.js';

const DOC = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');

describe('the import graph of src/ (npm run imports prints it)', () => {
  const graph = importGraph();

  it('reads real imports (the graph is not empty)', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('server.ts')).toContain('services/index.ts');
  });

  it('has no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it(
    'keeps every rule: each area imports only what its rule allows, the runtime only ' +
      'through runtime/index.ts, the store only through its interface, stages in order',
    () => {
      expect(violations(graph)).toEqual([]);
    },
  );

  it('every area of src/ has a rule, and every runtime and store folder a place in its order', () => {
    const areas = new Set([...graph.keys()].map(area));
    expect([...areas].filter((a) => !MAY_IMPORT[a])).toEqual([]);
    for (const [a, order] of Object.entries(STAGES)) {
      const folders = new Set(
        [...graph.keys()].filter((f) => area(f) === a).map((f) => f.split('/')[1]!.replace(/\.ts$/, '')),
      );
      expect(
        [...folders].filter((f) => !order.flat().includes(f)),
        a,
      ).toEqual([]);
    }
  });

  it('the checks can fail: a made-up graph breaking each rule is caught, rule by rule', () => {
    const bad = new Map<string, string[]>([
      ['domain/a.ts', ['api/errors.ts']],
      ['api/errors.ts', ['domain/a.ts']],
      [
        'runtime/run/x.ts',
        [
          'store/file/file-store.ts',
          'store/core/types.ts',
          'domain/users/users.ts',
          'runtime/bot/bot-runner.ts',
          'runtime/state/traces.ts',
          'runtime/builtins/actions/money.ts',
        ],
      ],
      ['runtime/host/h.ts', ['runtime/builtins/index.ts']],
      ['runtime/registry.ts', ['runtime/builtins/index.ts']],
      ['runtime/contract/types.ts', ['runtime/define/bot.ts']],
      ['runtime/extra/y.ts', []],
      ['store/file/file-store.ts', ['runtime/run/x.ts', 'store/postgres/pg-schema.ts', 'store/core/engine.ts']],
      ['store/core/engine.ts', ['store/file/lock.ts']],
      ['cli/c.ts', ['runtime/index.ts', 'runtime/host/bot-host.ts']],
      ['newarea/z.ts', ['util/ids.ts']],
    ]);
    expect(circles(bad).map((c) => c.join(' '))).toEqual(
      expect.arrayContaining(['api/errors.ts domain/a.ts', 'runtime/run/x.ts store/file/file-store.ts']),
    );
    expect(violations(bad)).toEqual([
      'cli/c.ts → runtime/host/bot-host.ts (not through its public files)',
      'domain/a.ts → api/errors.ts',
      'newarea/z.ts: the area newarea has no import rule',
      'runtime/contract/types.ts → runtime/define/bot.ts (define/ comes after contract/)',
      'runtime/extra/y.ts: extra/ has no place in the order of runtime/',
      'runtime/host/h.ts → runtime/builtins/index.ts (builtins/ is a leaf: only registry, index import it)',
      'runtime/run/x.ts → domain/users/users.ts',
      'runtime/run/x.ts → runtime/bot/bot-runner.ts (bot/ comes after run/)',
      'runtime/run/x.ts → runtime/builtins/actions/money.ts (builtins/ is a leaf: only registry, index import it)',
      'runtime/run/x.ts → store/file/file-store.ts (not through its public files)',
      'store/core/engine.ts → store/file/lock.ts (file/ comes after core/)',
      'store/file/file-store.ts → runtime/run/x.ts',
      'store/file/file-store.ts → store/postgres/pg-schema.ts (postgres/ comes after file/)',
    ]);
  });

  it('docs/architecture.md has the rules the test keeps: the table of areas and the order of the stages', () => {
    const rows = new Map<string, string[]>();
    for (const m of DOC.matchAll(/^\| `([a-z-]+)` \| ([^|]*) \|/gm))
      rows.set(m[1]!, m[2]!.trim() === '—' ? [] : m[2]!.split(',').map((s) => s.trim().replace(/`/g, '')));
    expect(Object.fromEntries([...rows].sort())).toEqual(
      Object.fromEntries(
        Object.entries(MAY_IMPORT)
          .map(([a, d]) => [a, [...d]])
          .sort(),
      ),
    );
    for (const [a, order] of Object.entries(STAGES))
      expect(DOC, a).toContain(`${a}/ stage order: ${order.map((g) => g.join(' | ')).join(' → ')}`);
    for (const [a, leaves] of Object.entries(LEAVES))
      for (const [leaf, by] of Object.entries(leaves))
        expect(DOC, `${a}/${leaf}`).toContain(`${a}/ leaf: ${leaf} (imported only by ${by.join(', ')})`);
  });
});

/**
 * Where a deployment is assembled (issue 28 item 1): file vs PostgreSQL is decided in
 * `src/deployment/` (and read from config.yaml in `src/config/`), nowhere else; and no hidden
 * table ties a part of the composition to another (a WeakMap keyed by a store or a registry).
 */
describe('one place assembles a deployment', () => {
  const SRC = new URL('../../src/', import.meta.url);
  const sources = [...importGraph().keys()].map((file) => ({ file, text: readFileSync(new URL(file, SRC), 'utf8') }));
  /** A branch on the store's driver: `store.driver`, a comparison with 'postgres', a raw pool handed on. */
  const DRIVER_BRANCH = /\.driver\b|[!=]==?\s*'postgres'|'postgres'\s*[!=]==?|\bctx\.postgres\b|\bpostgres\?:/;
  const codeLines = (text: string) => text.split('\n').filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l));

  it('no branch on the store driver outside deployment/ and config/', () => {
    const found = sources
      .filter((s) => !/^(deployment|config)\//.test(s.file))
      .flatMap((s) =>
        codeLines(s.text)
          .filter((l) => DRIVER_BRANCH.test(l))
          .map((l) => `${s.file}: ${l.trim()}`),
      );
    expect(found).toEqual([]);
  });

  it('the driver check can fail: it finds the branches it is for', () => {
    const planted = [
      "if (config.store.driver === 'postgres') {",
      'const pool = ctx.postgres ? ctx.postgres.pool : undefined;',
      '  postgres?: { pool: pg.Pool };',
    ];
    expect(planted.filter((l) => DRIVER_BRANCH.test(l))).toEqual(planted);
    expect(
      DRIVER_BRANCH.test(
        "if (!/^postgres(ql)?:\\/\\//.test(url)) throw new AdminError('--url must be a postgres:// URL');",
      ),
    ).toBe(false);
  });

  it(
    'no part of the composition (a commit feed, the plugins, a deployment) carried in a ' +
      'WeakMap beside what it belongs to',
    () => {
      // a cache keyed by an object (the bot validator of a registry) is not composition
      const HIDDEN = /new WeakMap<[^>]*\b(CommitFeed|PluginHost|Deployment|Scheduler|ChangeFeed|InboxFeed)\b/;
      expect(HIDDEN.test('const feeds = new WeakMap<Store, CommitFeed>();')).toBe(true);
      const found = sources.flatMap((s) =>
        codeLines(s.text)
          .filter((l) => HIDDEN.test(l))
          .map((l) => `${s.file}: ${l.trim()}`),
      );
      expect(found).toEqual([]);
    },
  );
});
