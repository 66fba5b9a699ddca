import type { Actor } from './harness-app.js';
import type { WireRequest } from './http.js';
import { fillPath } from './openapi-ops.js';
import { copyObject, type Plan } from './plan-arbitrary.js';
import { Lazy, RawJson } from './schema-arbitraries.js';
import type { World } from './world.js';

/** Who may call: the actors of this run and a revoked key. */
export interface Callers {
  actors: Actor[];
  revokedKey: string;
}

/** A plan made concrete: the bytes to send, who sends them, and what the world lent it. */
export interface Materialized {
  wire: WireRequest;
  actor: Actor;
  /** Ids the world chose for path params (learned from the answer). */
  pathIds: string[];
}

/** Valid filler characters (one code point each) for generated text. */
const FILLER = ['a', 'é', '中', '😀', 'ß', 'İ', ' ', 'z', '\u200d'];

function text(world: World, actor: Actor, n: number, min: number, max: number): string {
  const marker = world.marker(actor.group);
  if (max < marker.length + 1) return 'a'.repeat(Math.max(1, Math.min(max, Math.max(min, 3))));
  const target = n % 10 === 0 ? max : Math.min(max, Math.max(min, marker.length + 1 + (n % 24)));
  const out = [marker, ' '];
  for (let i = out.join('').length; i < target; i++)
    out.push(i === target - 1 ? 'z' : FILLER[(n + i) % FILLER.length]!);
  return out.join('');
}

/**
 * Fills a plan's Lazy values from the world (PINs of the caller's group, ids it has seen, fresh
 * text markers) and serialises it to the exact bytes to send.
 */
export function materialize(plan: Plan, world: World, callers: Callers): Materialized {
  const actor = callers.actors[plan.actor % callers.actors.length]!;
  const others = world.members(actor.group).filter((a) => a.id !== actor.id);
  const pathIds: string[] = [];
  const fill = (v: unknown, where: 'path' | 'other'): unknown => {
    if (v instanceof Lazy) {
      switch (v.kind) {
        case 'pin': {
          const pin = others.length ? others[v.n % others.length]!.pin : 'ZZZZZZ';
          return v.opts.variant === 'lower' ? pin.toLowerCase() : v.opts.variant === 'spaced' ? ` ${pin} ` : pin;
        }
        case 'pins': {
          const count = Math.min(v.opts.count ?? 2, others.length);
          return Array.from({ length: count }, (_, i) => others[(v.n + i) % others.length]!.pin);
        }
        case 'selfPin':
          return actor.pin;
        case 'id': {
          const id = world.idFor(plan.op.id, actor.group, v.n) ?? 'zzz_00000000000000000000';
          if (where === 'path') pathIds.push(id);
          return id;
        }
        case 'text':
          return text(world, actor, v.n, v.opts.min ?? 0, v.opts.max ?? 200);
      }
    }
    if (v instanceof RawJson) return v;
    if (Array.isArray(v))
      return v.flatMap((x) =>
        x instanceof Lazy && x.kind === 'pins' ? (fill(x, where) as unknown[]) : [fill(x, where)],
      );
    if (v && typeof v === 'object') {
      const o = copyObject(v as Record<string, unknown>);
      for (const k of Object.keys(o))
        Object.defineProperty(o, k, { value: fill(o[k], where), enumerable: true, writable: true, configurable: true });
      return o;
    }
    return v;
  };

  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(plan.params)) params[k] = String(fill(v, 'path'));
  const qs: string[] = [];
  for (const [k, v] of Object.entries(plan.query)) {
    if (v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) qs.push(`${enc(k)}=${enc(String(fill(x, 'other')))}`);
  }
  const path = fillPath(plan.op.path, params, enc) + (qs.length ? `?${qs.join('&')}` : '');

  const headers: Record<string, string> = {};
  const key = plan.auth === 'revoked' ? callers.revokedKey : actor.key;
  if (plan.auth === 'key') headers['x-api-key'] = key;
  else if (plan.auth === 'bearer') headers.authorization = `Bearer ${key}`;
  else if (plan.auth === 'revoked') headers['x-api-key'] = key;
  else if (plan.auth === 'garbage') headers.authorization = 'Bearer pinbot_' + 'A'.repeat(31) + '!';
  let body: string | undefined;
  if (plan.rawBody !== undefined) body = plan.rawBody;
  else if (plan.body !== undefined) body = toJson(fill(plan.body, 'other'));
  if (body !== undefined) headers['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(plan.headers)) headers[k] = v;
  return { wire: { method: plan.method, path, headers, body }, actor, pathIds };
}

/** encodeURIComponent that sends a lone surrogate as its raw (invalid UTF-8) bytes instead of throwing. */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...s].map((ch) => (/[\ud800-\udfff]/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch))).join('');
  }
}

/** JSON.stringify that writes RawJson values verbatim. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `@@RAWJSON${raws.length - 1}@@`;
    }
    return v;
  });
  return text === undefined ? '' : text.replace(/"@@RAWJSON(\d+)@@"/g, (_m, i: string) => raws[Number(i)]!);
}
