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
  let cur = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Parses `"name"; k=v; k=v` (or `k=v, k=v` of draft 7, given as one item). Internal. */
function item(text: string): { name: string; params: Record<string, number> } {
  const parts = text.split(';').map((p) => p.trim());
  let name = 'default';
  const params: Record<string, number> = {};
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq === -1) {
      if (p) name = p.replace(/^"|"$/g, '');
      continue;
    }
    const n = Number(p.slice(eq + 1).trim());
    if (Number.isFinite(n)) params[p.slice(0, eq).trim().toLowerCase()] = n;
  }
  return { name, params };
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
      for (const it of items(rl).map(item)) {
        const r = get(it.name);
        if (it.params.r !== undefined) r.remaining = it.params.r;
        if (it.params.t !== undefined) r.resetSec = it.params.t;
      }
    }
  }
  const policy = headers.get('ratelimit-policy');
  if (policy) {
    for (const it of items(policy).map(item)) {
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
