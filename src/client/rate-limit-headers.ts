/** What one response said about one rate-limit bucket. */
export interface BucketReport {
  name: string;
  /** Quota of the window (`q`), when a policy field was sent. */
  limit?: number;
  /** Window length in seconds (`w`). */
  windowSec?: number;
  /** Requests left in the current window (`r`). */
  remaining?: number;
  /** Seconds until the window resets (`t`). */
  resetSec?: number;
}

/** Splits a structured-field list on commas outside quotes. Internal. */
function items(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 34)
      quoted = !quoted; // "
    else if (c === 44 && !quoted) {
      // ,
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = value.slice(start).trim();
  if (last) out.push(last);
  return out;
}

/** `p` without one leading and one trailing `"` (as `p.replace(/^"|"$/g, '')`). Internal. */
function unquoted(p: string): string {
  const from = p.charCodeAt(0) === 34 ? 1 : 0;
  const to = p.length > from && p.charCodeAt(p.length - 1) === 34 ? p.length - 1 : p.length;
  return p.slice(from, to);
}

/**
 * Parses `"name"; k=v; k=v` (or `k=v, k=v` of draft 7, given as one item), part by part without
 * a list of the parts or a regular expression (a bot reads one with every answer). Internal.
 */
function item(text: string): { name: string; params: Record<string, number> } {
  let name = 'default';
  const params: Record<string, number> = {};
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf(';', start);
    if (end === -1) end = text.length;
    const p = text.slice(start, end).trim();
    start = end + 1;
    const eq = p.indexOf('=');
    if (eq === -1) {
      if (p) name = unquoted(p);
      continue;
    }
    const n = Number(p.slice(eq + 1).trim());
    if (Number.isFinite(n)) params[p.slice(0, eq).trim().toLowerCase()] = n;
  }
  return { name, params };
}

/** Policies parsed (a server sends the same one with every answer), a few. Internal. */
type Item = { name: string; params: Readonly<Record<string, number>> };
const policies = new Map<string, readonly Item[]>();

/** The items of a `RateLimit-Policy` value, parsed once per value. Internal. */
function policyItems(value: string) {
  let parsed = policies.get(value);
  if (!parsed) {
    parsed = items(value).map(item);
    if (policies.size >= 16) policies.delete(policies.keys().next().value!);
    policies.set(value, parsed);
  }
  return parsed;
}

/**
 * Reads the IETF `RateLimit` / `RateLimit-Policy` fields of a response: draft 8 (one named item
 * per bucket, as this server sends), draft 7 (`limit=…, remaining=…, reset=…`) and draft 6
 * (`RateLimit-Limit` / `-Remaining` / `-Reset`). Unknown shapes yield nothing.
 *
 * @example
 * parseRateLimitHeaders(new Headers({ RateLimit: '"general"; r=99; t=60' }))
 * // [{ name: 'general', remaining: 99, resetSec: 60 }]
 */
export function parseRateLimitHeaders(headers: { get(name: string): string | null }): BucketReport[] {
  const byName = new Map<string, BucketReport>();
  const get = (name: string) => {
    let r = byName.get(name);
    if (!r) byName.set(name, (r = { name }));
    return r;
  };
  const rl = headers.get('ratelimit');
  if (rl) {
    if (/(^|,)\s*limit=/.test(rl)) {
      // draft 7: one unnamed bucket written as a comma-separated dictionary
      const params = Object.fromEntries(items(rl).map((kv) => kv.split('=').map((s) => s.trim())));
      const r = get('default');
      if (params.limit) r.limit = Number(params.limit);
      if (params.remaining) r.remaining = Number(params.remaining);
      if (params.reset) r.resetSec = Number(params.reset);
    } else {
      for (const text of items(rl)) {
        const it = item(text);
        const r = get(it.name);
        if (it.params.r !== undefined) r.remaining = it.params.r;
        if (it.params.t !== undefined) r.resetSec = it.params.t;
      }
    }
  }
  const policy = headers.get('ratelimit-policy');
  if (policy) {
    for (const it of policyItems(policy)) {
      // draft 6/7 policies are `100;w=60` (the quota is the bare item)
      const name = /^\d+$/.test(it.name) ? 'default' : it.name;
      const r = get(name);
      const q = it.params.q ?? (/^\d+$/.test(it.name) ? Number(it.name) : undefined);
      if (q !== undefined) r.limit = q;
      if (it.params.w !== undefined) r.windowSec = it.params.w;
    }
  }
  const d6Remaining = headers.get('ratelimit-remaining');
  if (d6Remaining && !rl) {
    const r = get('default');
    r.remaining = Number(d6Remaining);
    const reset = headers.get('ratelimit-reset');
    if (reset) r.resetSec = Number(reset);
    const limit = headers.get('ratelimit-limit');
    if (limit) r.limit = Number(limit);
  }
  return [...byName.values()].filter((r) => r.remaining !== undefined || r.limit !== undefined);
}
