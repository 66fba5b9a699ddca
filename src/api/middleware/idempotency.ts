import { createHash } from 'node:crypto';
import { defineCollection, type Store, type Tx } from '../../store/core/types.js';
import type { Clock } from '../../clock/clock.js';
import { utcDate } from '../../clock/clock.js';
import { ApiError } from '../errors.js';
import { toApiError } from './error-handler.js';
import { requestKey } from '../request-context.js';
import type { RouteResult } from '../route.js';

/** A stored outcome of a POST made with an Idempotency-Key. */
export interface IdempotencyRecord {
  readonly id: string;
  readonly user_id: string;
  readonly fingerprint: string;
  readonly status: number;
  /** The exact response body sent the first time. */
  readonly body: string;
  readonly created_at: number;
}

export const IdempotencyRecords = defineCollection<IdempotencyRecord>({
  name: 'idempotency',
  multi: { day: (r) => utcDate(r.created_at) },
});

/** Codes that never reached the operation and so are not stored (API.md "Money"). */
const NOT_STORED = new Set([
  'unauthorized',
  'rate_limited',
  'invalid_json',
  'validation_failed',
  'payload_too_large',
  'internal_error',
]);

/** How long a stored outcome is kept at least (the sweep removes older days). */
export const IDEMPOTENCY_RETENTION_DAYS = 2;

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * JSON text of a parsed body with every object's keys sorted, so `{"a":1,"b":2}` and
 * `{"b":2,"a":1}` are one request (JSON objects are unordered). Internal.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What of a request a write's outcome is keyed on. */
export interface WriteCall {
  /** `METHOD /api/v1/path` as the client sent the path. */
  target: string;
  /** The parsed body. */
  body: unknown;
  /** The API key (its id) the request is made with: the commits' cause (request-context.ts). */
  keyId?: string;
}

/**
 * Runs a write with `Idempotency-Key` semantics (as Stripe does): the first outcome of a
 * (user, key) pair is stored in the same transaction as the operation, so a crash cannot keep
 * one without the other; a retry with the same request gets it byte for byte; the same key with
 * another request is 409 `idempotency_key_reused`; a retry while the first runs is 409
 * `idempotency_key_in_use`.
 */
export class Idempotency {
  private readonly running = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /**
   * Executes `op` inside a transaction. Without a key, it just runs; with one, the outcome is
   * recorded. Returns the status and the body as the exact string to send.
   */
  async run(
    call: WriteCall,
    userId: string,
    key: string | undefined,
    op: (tx: Tx) => RouteResult,
  ): Promise<{ status: number; body: string; replayed: boolean }> {
    const transaction = <R>(fn: (tx: Tx) => R) => requestKey.with(call.keyId, () => this.store.transaction(fn));
    if (key === undefined) {
      const r = await transaction(op);
      return { status: r.status, body: JSON.stringify(r.body), replayed: false };
    }
    if (key.length < 1 || key.length > 255) {
      throw new ApiError('validation_failed', undefined, [
        { path: 'headers.idempotency-key', message: 'must be 1 to 255 characters' },
      ]);
    }
    const id = `idem_${sha(`${userId}\u0000${key}`)}`;
    const target = `${call.target}\n`;
    const fingerprint = sha(`${target}${canonicalJson(call.body ?? null)}`);
    // Outcomes stored before fingerprints were canonical hashed the body in its received key
    // order; a retry of such a request (a bot resuming across an upgrade) still matches.
    const legacy = sha(`${target}${JSON.stringify(call.body ?? null)}`);
    // "In use" is checked first: the first request's outcome is in memory before its journal
    // line is fsync'd, and a retry must not be answered with an outcome a crash could undo.
    if (this.running.has(id)) throw new ApiError('idempotency_key_in_use');
    const existing = this.store.read.col(IdempotencyRecords).get(id);
    if (existing) {
      if (existing.fingerprint !== fingerprint && existing.fingerprint !== legacy)
        throw new ApiError('idempotency_key_reused');
      return { status: existing.status, body: existing.body, replayed: true };
    }
    this.running.add(id);
    const record = (tx: Tx, status: number, body: string) =>
      tx.col(IdempotencyRecords).put({ id, user_id: userId, fingerprint, status, body, created_at: this.clock.now() });
    // Another process on the same database may have stored an outcome for this key since the
    // look above: the transaction looks again, and then replays it instead of running `op`.
    type Done = { status: number; body: string; replayed: boolean };
    type Prior = { prior: IdempotencyRecord };
    const replay = (prior: IdempotencyRecord): Done => {
      if (prior.fingerprint !== fingerprint && prior.fingerprint !== legacy)
        throw new ApiError('idempotency_key_reused');
      return { status: prior.status, body: prior.body, replayed: true };
    };
    try {
      const out = await transaction((tx): Done | Prior => {
        const prior = tx.col(IdempotencyRecords).get(id);
        if (prior) return { prior };
        const r = op(tx);
        const body = JSON.stringify(r.body);
        record(tx, r.status, body);
        return { status: r.status, body, replayed: false };
      });
      return 'prior' in out ? replay(out.prior) : out;
    } catch (err) {
      const refusal = toApiError(err);
      if (refusal && !NOT_STORED.has(refusal.code)) {
        const body = JSON.stringify(refusal.toBody());
        const out = await transaction((tx): Done | Prior => {
          const prior = tx.col(IdempotencyRecords).get(id);
          if (prior) return { prior };
          record(tx, refusal.status, body);
          return { status: refusal.status, body, replayed: false };
        });
        return 'prior' in out ? replay(out.prior) : out;
      }
      throw err;
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * Deletes stored outcomes older than the retention (run daily by the scheduler): one
   * transaction per UTC day found in the `day` index, so no collection is scanned.
   */
  async sweep(): Promise<number> {
    const cutoff = utcDate(this.clock.now() - IDEMPOTENCY_RETENTION_DAYS * 86_400_000);
    const days = [...this.store.read.col(IdempotencyRecords).keys('day')].filter((d) => d < cutoff);
    let n = 0;
    for (const day of days) {
      n += await this.store.transaction((tx) => {
        const coll = tx.col(IdempotencyRecords);
        let deleted = 0;
        for (const rid of [...coll.ids('day', day)]) deleted += coll.delete(rid) ? 1 : 0;
        return deleted;
      });
    }
    return n;
  }
}
