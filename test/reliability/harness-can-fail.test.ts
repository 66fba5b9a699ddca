import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineRoute, type RouteDef } from '../../src/api/route.js';
import { meRoutes } from '../../src/api/me/routes.js';
import { defineCollection } from '../../src/store/core/types.js';
import { newId } from '../../src/util/ids.js';
import { runMatrix } from './auth-matrix.js';
import { boomRoutes } from './canary.js';
import { runCrashLoop } from './crash-loop.js';
import { runFuzz } from './fuzz.js';

/** The harness must be able to fail: each check is shown a server that breaks its rule. */

const Notes = defineCollection<{ id: string; text: string }>({ name: 'test_notes' });

const brokenRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/__test/wrong-shape',
    summary: 'answers outside its schema',
    tags: ['test'],
    schemas: {
      responses: {
        200: { type: 'object', additionalProperties: false, required: ['ok'], properties: { ok: { type: 'boolean' } } },
      },
    },
    handler: () => ({ status: 200, body: { ok: 'yes', extra: 1 } }),
  }),
  defineRoute({
    method: 'post',
    path: '/__test/write-then-refuse',
    summary: 'writes, then answers 400',
    tags: ['test'],
    write: true,
    schemas: {
      body: { type: 'object', additionalProperties: false, properties: {} },
      responses: { 200: { type: 'object' } },
    },
    errors: ['validation_failed'],
    handler: ({ tx }) => {
      tx.col(Notes).insert({ id: newId('note'), text: 'should not be here' });
      return { status: 400, body: { error: { code: 'validation_failed', message: 'refused, but wrote first' } } };
    },
  }),
];

const leakyRoute = defineRoute({
  method: 'get',
  path: '/__test/anything/:id',
  summary: 'shows any id to anyone',
  tags: ['test'],
  schemas: {
    params: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { $ref: 'Id' } } },
    responses: { 200: { type: 'object' } },
  },
  handler: ({ params }) => ({ status: 200, body: { id: params.id } }),
});

describe('the reliability harness notices broken servers', () => {
  it('fuzz: counts 5xx, responses outside the document and rejected requests that wrote', async () => {
    const f = await runFuzz({ requests: 200, seed: 5, routes: [...meRoutes, ...brokenRoutes, ...boomRoutes] });
    expect(f.serverErrors).toBeGreaterThan(0);
    expect(f.schemaBreaks).toBeGreaterThan(0);
    expect(f.rejectedWrites).toBeGreaterThan(0);
  }, 60_000);

  it('matrix: counts a route that shows one group’s resources to the other', async () => {
    const m = await runMatrix({ routes: [...meRoutes, leakyRoute], rounds: 1 });
    expect(m.leaks).toBeGreaterThan(0);
    expect(m.samples.join('\n')).toContain('/api/v1/__test/anything/');
  }, 60_000);

  // No compaction (compact_bytes 1 GB), so every acknowledged write is only in the journal, and
  // the kill waits for acknowledged writes: each sabotage has something to destroy.
  const sabotaged = { kills: 1, seed: 9, earlyKillShare: 0, cliEvery: 0, cleanStop: false, compactBytes: 1 << 30 };

  it('crash loop: counts acknowledged writes a journal emptied after the kill lost', async () => {
    const f = await runCrashLoop({
      ...sabotaged,
      killAfterAcks: 1,
      sabotage: (dir) => truncateSync(join(dir, 'journal.jsonl'), 0),
    });
    expect(f.lost).toBeGreaterThan(0);
    expect(f.samples.some((s) => s.includes('acknowledged as'))).toBe(true);
  }, 120_000);

  it('crash loop: a store that refuses to start after a journal line was deleted is the damage noticed', async () => {
    const dropLine = (dir: string) => {
      const journal = join(dir, 'journal.jsonl');
      const lines = readFileSync(journal, 'utf8').split('\n');
      writeFileSync(journal, lines.filter((_, i) => i !== 1).join('\n'));
    };
    const f = await runCrashLoop({ ...sabotaged, killAfterAcks: 3, sabotage: dropLine });
    expect(f.damageRefused).toBe(1);
    expect(f.unloadableStarts).toBe(0);
    expect(f.samples.join('\n')).toMatch(
      /refused start after sabotage: pinbot: .*journal\.jsonl:2: transaction 3 follows transaction 1/,
    );
  }, 120_000);
});
