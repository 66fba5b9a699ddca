import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { defineRoute, type RouteDef } from '../../src/api/route.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import { startHarness, type Actor } from './harness-app.js';
import { send, type WireRequest, type WireResponse } from './http.js';
import { materialize } from './materialize.js';
import { operations } from './openapi-ops.js';
import { planArb, validPlan, type Auth, type Plan } from './plan-arbitrary.js';
import { World } from './world.js';

/** Test-only routes that fail like a bug would: a read and a write that throw (→ 500). */
export const boomRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/__test/boom',
    summary: 'Throws (test only)',
    tags: ['test'],
    schemas: { responses: { 200: { type: 'object' } } },
    handler: () => {
      throw new Error('boom: a bug in a read handler');
    },
  }),
  defineRoute({
    method: 'post',
    path: '/__test/boom',
    summary: 'Throws inside a write (test only)',
    tags: ['test'],
    write: true,
    schemas: {
      body: { type: 'object', additionalProperties: false, properties: {} },
      responses: { 200: { type: 'object' } },
    },
    handler: () => {
      throw new TypeError('boom: a bug in a write handler');
    },
  }),
];

/**
 * Headers that carry `key` where no key belongs (issue 13: `Api-Key`, `X-Auth-Token`, `Cookie`,
 * `Proxy-Authorization` appeared in clear in the request log), in plain text and encoded.
 */
export function misplacedKeyHeaders(key: string): Array<Record<string, string>> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    { 'api-key': key },
    { 'x-auth-token': key },
    { 'x-access-token': encodeURIComponent(key).replace('_', '%5F') },
    { cookie: `session=${key}; theme=dark` },
    { cookie: `token=${b64(key)}` },
    { 'proxy-authorization': `Basic ${b64(`me:${key}`)}` },
    { authorization: `Basic ${b64(`me:${key}`)}` },
    { 'user-agent': `curl/8 (${key})` },
    { referer: `https://example.test/setup?key=${encodeURIComponent(key)}` },
    { 'x-request-id': key },
    { [key]: '1' },
    { 'x-token-hex': Buffer.from(key).toString('hex') },
  ];
}

/**
 * Query strings (as sent) that carry `key`: percent-encoded, fully, twice, upper-case hex, its
 * secret part alone, as a name. */
export function misplacedKeyQueries(key: string): string[] {
  const full = [...key].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  return [
    `token=${key.replace('_', '%5F')}`,
    `token=${full}`,
    `token=${full.toUpperCase()}`,
    `t=${full.replace(/%/g, '%25')}`,
    `secret=${key.slice(key.indexOf('_') + 1)}`,
    `${key}=1`,
    `token=${key}`,
  ];
}

export interface CanaryFigures {
  requests: number;
  byStatus: Record<string, number>;
  /** Where the key was looked for. */
  logLines: number;
  files: number;
  /** PostgreSQL store: tables of the database searched (every row as text). */
  tables: number;
  bodies: number;
  /** Occurrences of the key (or its secret part) in logs, files and responses. Must be 0. */
  occurrences: number;
  /** 500 answers that show more than `internal_error` (the thrown message, a stack). Must be 0. */
  revealing500s: number;
  where: string[];
}

/**
 * Whether a response is a 500 that shows more than `internal_error` (the thrown message, a
 * stack). A 500 without a body (the answer to a HEAD request) shows nothing.
 */
export function revealing500(res: Pick<WireResponse, 'status' | 'text' | 'json'>): boolean {
  if (res.status !== 500 || res.text === '') return false;
  return (
    /boom|at .*\.ts:\d+/.test(res.text) ||
    (res.json as { error?: { code?: string } } | undefined)?.error?.code !== 'internal_error'
  );
}

/**
 * Every table of the database at `url` (outside PostgreSQL's own schemas), each as the text of
 * all its rows. Internal. */
async function tableTexts(url: string): Promise<Array<[string, string]>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = await c.query(
      `SELECT table_schema AS s, table_name AS t FROM information_schema.tables ` +
        `WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', ` +
        `'information_schema')`,
    );
    const out: Array<[string, string]> = [];
    for (const { s, t } of tables.rows as Array<{ s: string; t: string }>) {
      const name = `${c.escapeIdentifier(s)}.${c.escapeIdentifier(t)}`;
      const rows = await c.query(`SELECT x::text AS row FROM ${name} x`);
      out.push([`${s}.${t}`, rows.rows.map((r: { row: string }) => r.row).join('\n')]);
    }
    return out;
  } finally {
    await c.end();
  }
}

/** Every file under `dir`, recursively (sockets and other non-files skipped). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.isFile() || statSync(p).isFile() ? [p] : [];
  });
}

/**
 * The canary (API.md "Errors": 500 is logged "never the key"): one user's key is used on every
 * route, valid and broken requests, the 401/404/413 paths, rate-limited until 429, and test-only
 * routes that throw (500); pino runs at trace level. Then the key, and its secret part alone,
 * are searched for in every log line, every file under the data dir (after close: snapshot and
 * journal; with `database`, every row of every table of the database) and every response body
 * and header.
 *
 * @example
 * const c = await runCanary(); if (c.occurrences) console.log(c.where);
 */
export async function runCanary({
  seed = 3,
  perRoute = 12,
  database,
}: {
  seed?: number;
  perRoute?: number;
  database?: string;
} = {}): Promise<CanaryFigures> {
  const routes = [...allRoutes, ...boomRoutes];
  const h = await startHarness({ routes, logLevel: 'trace', database });
  try {
    const canary = await h.addActor('Canary', 0);
    const friends: Actor[] = [await h.addActor('Friend', 0), await h.addActor('Other', 0)];
    for (const a of [canary, ...friends]) await h.grant(a.pin, 100);
    const world = new World([canary, ...friends]);
    const callers = { actors: [canary], revokedKey: await h.revokedKey(canary.pin) };
    const ops = operations(h.doc, routes);
    const responses: WireResponse[] = [];
    const f: CanaryFigures = {
      requests: 0,
      byStatus: {},
      logLines: 0,
      files: 0,
      tables: 0,
      bodies: 0,
      occurrences: 0,
      revealing500s: 0,
      where: [],
    };
    const runWire = async (url: string, wire: WireRequest): Promise<WireResponse | undefined> => {
      let res: WireResponse;
      try {
        res = await send(url, wire);
      } catch {
        return undefined;
      }
      f.requests++;
      f.byStatus[res.status] = (f.byStatus[res.status] ?? 0) + 1;
      responses.push(res);
      return res;
    };
    const run = async (url: string, plan: Plan) => {
      const m = materialize(plan, world, callers);
      let res: WireResponse;
      try {
        res = await send(url, m.wire);
      } catch {
        return;
      }
      f.requests++;
      f.byStatus[res.status] = (f.byStatus[res.status] ?? 0) + 1;
      if (res.status < 300) world.harvest(0, res.json);
      responses.push(res);
    };
    // Valid and broken requests on every route, with the key as X-API-Key and as Bearer.
    for (const [i, op] of ops.entries()) {
      const valid = fc.sample(validPlan(h.doc, op), { seed: seed + i, numRuns: perRoute / 2 });
      const broken = fc.sample(planArb(h.doc, [op]), { seed: seed + 1000 + i, numRuns: perRoute / 2 });
      for (const [j, p] of [...valid, ...broken].entries())
        await run(h.url, { ...p, actor: 0, auth: p.auth === 'key' && j % 2 ? ('bearer' as Auth) : p.auth });
    }
    // The paths every route shares, made certain: unknown route, revoked key, too large, not JSON.
    const base = fc.sample(validPlan(h.doc, ops[0]!), { seed, numRuns: 1 })[0]!;
    await run(h.url, { ...base, op: { ...ops[0]!, path: '/api/v1/no-such-route' } });
    await run(h.url, { ...base, auth: 'revoked' });
    await run(h.url, { ...base, auth: 'none' });
    await run(h.url, { ...base, method: 'POST', rawBody: JSON.stringify({ x: 'a'.repeat(110_000) }) });
    await run(h.url, { ...base, method: 'POST', rawBody: '{"not json' });
    // A client that pastes its key into the URL by mistake.
    await run(h.url, { ...base, query: { api_key: canary.key } });
    // The key where no key belongs: misnamed headers, other encodings, the request id, a path id.
    for (const [i, headers] of misplacedKeyHeaders(canary.key).entries()) {
      await run(h.url, { ...base, auth: i % 2 ? 'key' : 'none', headers });
    }
    for (const q of misplacedKeyQueries(canary.key))
      await runWire(h.url, { method: 'GET', path: `/api/v1/me?${q}`, headers: { 'x-api-key': canary.key } });
    const convOp = ops.find((o) => o.method === 'get' && o.path.endsWith('/conversations/{id}'));
    if (convOp)
      await run(h.url, {
        ...fc.sample(validPlan(h.doc, convOp), { seed, numRuns: 1 })[0]!,
        actor: 0,
        params: { id: canary.key },
      });
    // The same store behind an app with tight rate limits, until every route has answered 429.
    const tight = configFrom({
      rate_limits: {
        enabled: true,
        general: { limit: 3, window: '1h' },
        messages: { limit: 1, window: '1h' },
        contacts: { limit: 1, window: '1h' },
        intros: { limit: 1, window: '1h' },
      },
    });
    const limitedUrl = await h.serveApp(tight);
    for (const [i, op] of ops.entries()) {
      for (const p of fc.sample(validPlan(h.doc, op), { seed: seed + 2000 + i, numRuns: 2 }))
        await run(limitedUrl, { ...p, actor: 0 });
    }
    await h.close();

    const needles = [canary.key, canary.key.slice(canary.key.indexOf('_') + 1)];
    const count = (text: string, where: string) => {
      for (const n of needles) {
        const hits = text.split(n).length - 1;
        if (hits) {
          f.occurrences += hits;
          if (f.where.length < 20) f.where.push(`${where}: ${hits}×`);
        }
      }
    };
    for (const [i, line] of h.logLines.entries()) count(line, `log line ${i + 1}`);
    f.logLines = h.logLines.length;
    for (const file of filesUnder(h.dir)) {
      f.files++;
      count(readFileSync(file, 'latin1'), file.slice(h.dir.length + 1));
    }
    if (database) for (const [table, text] of await tableTexts(database)) f.tables++, count(text, `table ${table}`);
    for (const [i, res] of responses.entries()) {
      f.bodies++;
      if (revealing500(res)) {
        f.revealing500s++;
        if (f.where.length < 20) f.where.push(`response ${i + 1}: 500 shows ${res.text.slice(0, 120)}`);
      }
      count(res.text + JSON.stringify(res.headers), `response ${i + 1} (${res.status})`);
    }
    return f;
  } finally {
    await h.close().catch(() => undefined);
    h.cleanup();
  }
}
