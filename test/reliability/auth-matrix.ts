import fc from 'fast-check';
import { IdempotencyRecords } from '../../src/api/writes/idempotency.js';
import type { RouteDef } from '../../src/api/route.js';
import { startHarness, type Actor, type Harness } from './harness-app.js';
import { send, type WireRequest, type WireResponse } from './http.js';
import { materialize } from './materialize.js';
import { operations, type Operation } from './openapi-ops.js';
import { validPlan, type Auth, type Plan } from './plan-arbitrary.js';
import { isPin } from './schema-arbitraries.js';
import { World } from './world.js';

/** One row of the matrix: a route and what was checked on it. */
export interface MatrixRow {
  route: string;
  /** Requests without a key, with a revoked key, with a malformed key: each must be 401. */
  unauthenticated: number;
  /** Requests by users of the other group (non-parties) naming that group's resources. */
  nonParty: number;
  /** For routes with an id: a party got a real answer for one of the ids (so the 404s meant something). */
  realResource: boolean | 'n/a';
  covered: boolean;
}

export interface MatrixFigures {
  routes: number;
  covered: number;
  uncovered: string[];
  requests: number;
  /** Must be 0. */
  leaks: number;
  /** Requests replayed under another user's Idempotency-Key (each must not be a replay). */
  crossUserReplays: number;
  samples: string[];
  rows: MatrixRow[];
}

const idParams = (op: Operation) => op.pathParams.filter((p) => !isPin(p.schema, p.name));
const pinParams = (op: Operation) => op.pathParams.filter((p) => isPin(p.schema, p.name));

/**
 * The authorization matrix, built from the route table and /openapi.json (OWASP API1 and API2):
 * two groups of users act among themselves with valid requests; then every route is called
 * without a key, with a revoked and a malformed key (401 and nothing written), and by each
 * group on every id the other group has seen (404, nothing written, none of the other group's
 * ids or text in the answer). A route counts as covered only if a party got a real answer for
 * one of those ids, so a 404 from a route that 404s everything covers nothing.
 *
 * @example
 * const m = await runMatrix(); if (m.uncovered.length || m.leaks) console.log(m.samples);
 */
export async function runMatrix({
  seed = 7,
  rounds = 3,
  routes,
  database,
}: {
  seed?: number;
  rounds?: number;
  routes?: readonly RouteDef[];
  database?: string;
} = {}): Promise<MatrixFigures> {
  const h = await startHarness({ routes, database });
  try {
    const groups: Actor[][] = [[], []];
    for (const [name, g] of [
      ['Ana', 0],
      ['Ben', 0],
      ['Dee', 0],
      ['Cy', 1],
      ['Eve', 1],
    ] as const)
      groups[g]!.push(await h.addActor(name, g));
    const everyone = [...groups[0]!, ...groups[1]!];
    for (const a of everyone) await h.grant(a.pin, 500);
    const revokedKey = await h.revokedKey(groups[0]![0]!.pin);
    const ops = operations(h.doc, h.routes);
    const world = new World(everyone);
    const f: MatrixFigures = {
      routes: ops.length,
      covered: 0,
      uncovered: [],
      requests: 0,
      leaks: 0,
      crossUserReplays: 0,
      samples: [],
      rows: [],
    };
    let sampleSeed = seed * 7919;
    const arbs = new Map(ops.map((op) => [op, validPlan(h.doc, op)]));
    const plan = (op: Operation, actor: number, override: Partial<Plan> = {}): Plan => ({
      ...fc.sample(arbs.get(op)!, { seed: sampleSeed++, numRuns: 1 })[0]!,
      actor,
      ...override,
    });
    const exec = async (p: Plan, actors: Actor[], params: Record<string, string> = {}) => {
      const m = materialize({ ...p, params: { ...p.params, ...params } }, world, { actors, revokedKey });
      const mark = h.store.writes.length;
      const res = await send(h.url, m.wire);
      f.requests++;
      const wrote = h.store.writes.slice(mark).filter((w) => w.collection !== IdempotencyRecords.name);
      return { m, res, wrote };
    };
    const leak = (what: string) => {
      f.leaks++;
      if (f.samples.length < 20) f.samples.push(what);
    };
    const describe = (wire: WireRequest, res: WireResponse) =>
      `${wire.method} ${wire.path} → ${res.status} ${res.text.slice(0, 160)}`;

    // 1. Each group acts among itself: every route but DELETE, by every member, `rounds` times.
    const idempotent: Array<{ op: Operation; wire: WireRequest; res: WireResponse }> = [];
    for (let r = 0; r < rounds; r++) {
      for (const members of groups) {
        for (const op of ops) {
          if (op.method === 'delete') continue;
          for (let i = 0; i < members.length; i++) {
            const { m, res } = await exec(plan(op, i), members);
            if (res.status < 300) world.harvest(members[0]!.group, res.json);
            if (res.status !== 404) for (const id of m.pathIds) world.learn(op.id, id);
            if (res.status < 300 && m.wire.headers['idempotency-key'] && op.route.write)
              idempotent.push({ op, wire: m.wire, res });
          }
        }
      }
    }

    for (const op of ops) {
      const row: MatrixRow = {
        route: `${op.method.toUpperCase()} ${op.path}`,
        unauthenticated: 0,
        nonParty: 0,
        realResource: idParams(op).length ? false : 'n/a',
        covered: false,
      };
      // 2. No key, a revoked key, malformed keys: 401 with WWW-Authenticate, nothing written.
      for (const auth of ['none', 'revoked', 'garbage'] as Auth[]) {
        const { m, res, wrote } = await exec(plan(op, 0, { auth }), groups[0]!);
        row.unauthenticated++;
        const code = (res.json as { error?: { code?: string } })?.error?.code;
        if (res.status !== 401 || code !== 'unauthorized' || !res.headers['www-authenticate'] || wrote.length)
          leak(`[${auth} key] ${describe(m.wire, res)}${wrote.length ? ' (wrote)' : ''}`);
      }
      // 3. Each group on the other group's resources.
      for (const [g, outsiders] of groups.entries()) {
        const other = 1 - g;
        const ids = idParams(op).length ? candidateIds(world, other, world.fits.get(op.id)) : [];
        const pins = pinParams(op).length ? groups[other]!.map((a) => a) : [];
        const probes: Array<{ params: Record<string, string>; allowed: Set<string> }> = [];
        for (const id of ids)
          probes.push({ params: Object.fromEntries(idParams(op).map((p) => [p.name, id])), allowed: new Set() });
        for (const t of pins)
          probes.push({
            params: Object.fromEntries(pinParams(op).map((p) => [p.name, t.pin])),
            allowed: new Set([t.id]),
          });
        if (!op.pathParams.length) probes.push({ params: {}, allowed: new Set() }, { params: {}, allowed: new Set() });
        for (const [i, probe] of probes.entries()) {
          // No Idempotency-Key: a 409 for reusing one's own key would say nothing about the resource.
          const { m, res, wrote } = await exec(plan(op, i, { headers: {} }), outsiders, probe.params);
          row.nonParty++;
          const foreign = world.foreignIn(g, res.text, probe.allowed);
          const namesResource = ids.length > 0;
          if (
            res.status >= 500 ||
            (namesResource && res.status !== 404) ||
            foreign.length ||
            (namesResource && wrote.length)
          ) {
            leak(
              `[non-party] ${describe(m.wire, res)}${
                foreign.length ? ` (shows ${foreign.slice(0, 3).join(', ')})` : ''
              }${wrote.length ? ' (wrote)' : ''}`,
            );
          }
        }
      }
      // 4. Coverage: a party gets a real answer (not 404) for at least one of those ids.
      if (row.realResource === false) {
        search: for (const g of [0, 1]) {
          const fits = world.fits.get(op.id);
          const ids = candidateIds(world, g).sort(
            (a, b) => Number(!!fits?.has(b.slice(0, b.indexOf('_')))) - Number(!!fits?.has(a.slice(0, a.indexOf('_')))),
          );
          for (const id of ids) {
            for (let i = 0; i < groups[g]!.length; i++) {
              const { res } = await exec(
                plan(op, i),
                groups[g]!,
                Object.fromEntries(idParams(op).map((p) => [p.name, id])),
              );
              if (res.status !== 404 && res.status < 500) {
                row.realResource = true;
                break search;
              }
            }
          }
        }
      }
      row.covered = row.unauthenticated >= 3 && row.nonParty > 0 && row.realResource !== false;
      if (row.covered) f.covered++;
      else
        f.uncovered.push(
          `${row.route}: ${
            row.realResource === false
              ? 'no party ever got a real answer for an id, so its 404s prove nothing; ' +
                'teach the world builder to create this resource'
              : 'not probed'
          }`,
        );
      f.rows.push(row);
    }

    // 5. Idempotency keys are per user: another user's retry with the same key and body is no replay.
    for (const { op, wire, res } of idempotent.slice(0, 40)) {
      const outsider = groups[1]!.find((a) => a.key !== wire.headers['x-api-key']) ?? groups[1]![0]!;
      const again = await send(h.url, { ...wire, headers: { ...wire.headers, 'x-api-key': outsider.key } });
      f.requests++;
      f.crossUserReplays++;
      // the same text is a replay only when it names a resource: two members leaving one group
      // are both told "You left the group …" without any replay
      if (again.headers['idempotent-replayed'] === 'true' || (again.text === res.text && /"id":/.test(res.text)))
        leak(`[idempotency replay across users] ${op.id}: ${describe(wire, again)}`);
    }
    return f;
  } finally {
    await closeHarness(h);
  }
}

/**
 * Ids `group` has seen: up to 6 per prefix the operation is known to take (oldest and newest,
 * so several states), and one of every other prefix (a wrong kind of id must 404 too). Internal.
 */
function candidateIds(world: World, group: number, fits?: ReadonlySet<string>): string[] {
  const byPrefix = new Map<string, string[]>();
  for (const id of world.ids.get(group) ?? []) {
    const p = id.slice(0, id.indexOf('_'));
    byPrefix.set(p, [...(byPrefix.get(p) ?? []), id]);
  }
  return [...byPrefix].flatMap(([p, list]) =>
    fits && !fits.has(p) ? list.slice(-1) : list.length <= 6 ? list : [...list.slice(0, 2), ...list.slice(-4)],
  );
}

async function closeHarness(h: Harness): Promise<void> {
  await h.close();
  h.cleanup();
}
