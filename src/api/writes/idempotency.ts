import { hash } from 'node:crypto';
import { defineCollection, type Store, type Tx } from '../../store/core/types.js';
import type { Clock } from '../../clock/clock.js';
import { utcDate } from '../../clock/clock.js';
import { ApiError } from '../errors.js';
import { toApiError } from '../edge/error-answer.js';
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

// the one-shot form: no Hash object per call (three per keyed write before)
const sha = (s: string) => hash('sha256', s, 'hex');

/**
 * JSON text of a parsed body with every object's keys sorted, so `{"a":1,"b":2}` and
 * `{"b":2,"a":1}` are one request (JSON objects are unordered). Internal.
 */
export function canonicalJson(value: unknown): string {
  // loops, not map/filter/join: this runs on every keyed write
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i] ?? null);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    let out = '{';
    for (const k of keys) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Whether `value` is a plain object: its own prototype is Object's or none. Internal. */
const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * Whether `JSON.stringify(value)` is `canonicalJson(value)`: the value is parsed-JSON data
 * (strings, numbers, booleans, null, arrays and plain objects, `undefined` in them) and every
 * object's keys are already in ascending order — what a client that writes its keys sorted, or
 * has one key per object, sends. Walks the value without building text. Internal (exported for
 * its test).
 */
export function isCanonical(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  if (t !== 'object') return false;
  if (Array.isArray(value)) {
    // an array's own `toJSON` (never in parsed JSON) would be called by JSON.stringify only
    if ('toJSON' in value) return false;
    for (let i = 0; i < value.length; i++) if (!isCanonical(value[i])) return false;
    return true;
  }
  if (!isPlain(value as object)) return false;
  let prev: string | undefined;
  for (const k in value) {
    // for…in: no array of keys (an enumerable inherited key, on a polluted prototype, is left
    // out of both texts alike)
    if (prev !== undefined && !(prev < k)) return false;
    if (!isCanonical((value as Record<string, unknown>)[k])) return false;
    prev = k;
  }
  return true;
}

/** What of a request a write's outcome is keyed on. */
export interface WriteCall {
  /** `METHOD /api/v1/path` as the client sent the path. */
  target: string;
  /** The parsed body. */
  body: unknown;
}

/** A write's outcome: its status and body as the exact string sent (and stored). */
export interface WriteOutcome {
  status: number;
  body: string;
  replayed: boolean;
}

/**
 * What a request is recognised by: the hash of its target and its body with object keys sorted
 * (`current`, what is stored), and the form outcomes stored before fingerprints were canonical
 * have — the body in its received key order —, so a retry of such a request (a bot resuming
 * across an upgrade) still matches. The legacy form is hashed only when a stored outcome does
 * not match the current one: a first write (the common case) needs one hash, not two. Internal.
 */
class Fingerprints {
  readonly current: string;
  private legacyHash: string | undefined;

  constructor(private readonly call: WriteCall) {
    const body = call.body ?? null;
    if (isCanonical(body)) {
      // the body's text as received is its canonical text: one hash is both forms
      this.current = this.legacyHash = sha(`${call.target}\n${JSON.stringify(body)}`);
    } else this.current = sha(`${call.target}\n${canonicalJson(body)}`);
  }

  legacy(): string {
    this.legacyHash ??= sha(`${this.call.target}\n${JSON.stringify(this.call.body ?? null)}`);
    return this.legacyHash;
  }
}

/** What a transaction of a claimed key returns: its outcome, or the outcome another process stored first. Internal. */
type InTx = WriteOutcome | { prior: IdempotencyRecord };

/**
 * A key claimed by a running write (`Idempotency.claim`): what the write's transaction records
 * with its outcome, and what it records when the operation is refused. Released when the write
 * ends, whatever its end.
 */
export class Claim {
  constructor(
    private readonly owner: Idempotency,
    readonly id: string,
    private readonly userId: string,
    private readonly fingerprints: Fingerprints,
  ) {}

  /**
   * Inside the write's transaction: runs `op` and records its outcome, unless another process
   * on the same database stored one for this key since the claim (then `op` does not run).
   */
  run(tx: Tx, op: (tx: Tx) => RouteResult): InTx {
    const prior = tx.col(IdempotencyRecords).get(this.id);
    if (prior) return { prior };
    const r = op(tx);
    const body = JSON.stringify(r.body);
    this.record(tx, r.status, body);
    return { status: r.status, body, replayed: false };
  }

  /** The refusal `err` stands for, when it is an outcome to store (a domain refusal, not a bad request). */
  refusal(err: unknown): ApiError | undefined {
    const refusal = toApiError(err);
    return refusal && !NOT_STORED.has(refusal.code) ? refusal : undefined;
  }

  /** Inside a transaction of its own: records `refusal` as the key's outcome. */
  refused(tx: Tx, refusal: ApiError): InTx {
    const prior = tx.col(IdempotencyRecords).get(this.id);
    if (prior) return { prior };
    const body = JSON.stringify(refusal.toBody());
    this.record(tx, refusal.status, body);
    return { status: refusal.status, body, replayed: false };
  }

  /** The outcome of a transaction of this claim (a prior one replayed, if it matches). */
  outcome(out: InTx): WriteOutcome {
    return 'prior' in out ? this.owner.replay(out.prior, this.fingerprints) : out;
  }

  /** The write has ended: a retry with this key no longer gets `idempotency_key_in_use`. */
  release(): void {
    this.owner.release(this.id);
  }

  /**
   * Stores the outcome, in the transaction that found none for the key (`run`, `refused`): an
   * insert, not a put — the same change in the journal or the database, and no look-up of a
   * record known to be absent in a map of every outcome kept (a put looked twice more). Internal.
   */
  private record(tx: Tx, status: number, body: string): void {
    const { id, userId: user_id } = this;
    const created_at = this.owner.now();
    const fingerprint = this.fingerprints.current;
    tx.col(IdempotencyRecords).insert({ id, user_id, fingerprint, status, body, created_at });
  }
}

/**
 * `Idempotency-Key` semantics (as Stripe does): the first outcome of a (user, key) pair is
 * stored in the same transaction as the operation (`Claim.run`), so a crash cannot keep one
 * without the other; a retry with the same request gets it byte for byte; the same key with
 * another request is 409 `idempotency_key_reused`; a retry while the first runs is 409
 * `idempotency_key_in_use`. The write itself (its transaction) is the route's
 * (api/route-pipeline.ts): this class only claims keys, replays and keeps the records.
 */
export class Idempotency {
  private readonly running = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /**
   * Before a write with `key`: the stored outcome to replay, or the claim the write records its
   * outcome with. Throws 409 while another request with the key runs, or when the key was used
   * for another request; 400 for a key that is not 1–255 characters.
   */
  claim(call: WriteCall, userId: string, key: string): WriteOutcome | Claim {
    if (key.length < 1 || key.length > 255) {
      throw new ApiError('validation_failed', undefined, [
        { path: 'headers.idempotency-key', message: 'must be 1 to 255 characters' },
      ]);
    }
    const id = `idem_${sha(`${userId}\u0000${key}`)}`;
    const f = new Fingerprints(call);
    // "In use" is checked first: the first request's outcome is in memory before its journal
    // line is fsync'd, and a retry must not be answered with an outcome a crash could undo.
    if (this.running.has(id)) throw new ApiError('idempotency_key_in_use');
    const existing = this.store.read.col(IdempotencyRecords).get(id);
    if (existing) return this.replay(existing, f);
    this.running.add(id);
    return new Claim(this, id, userId, f);
  }

  /** A stored outcome, replayed when the request is the same. Internal. */
  replay(prior: IdempotencyRecord, f: Fingerprints): WriteOutcome {
    if (prior.fingerprint !== f.current && prior.fingerprint !== f.legacy()) {
      throw new ApiError('idempotency_key_reused');
    }
    return { status: prior.status, body: prior.body, replayed: true };
  }

  /** Internal (Claim.release). */
  release(id: string): void {
    this.running.delete(id);
  }

  /** Internal (Claim). */
  now(): number {
    return this.clock.now();
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
        // newest first: each id leaves the end of the day's list (a pop), where oldest first
        // shifted the whole list once per id — O(n²) for a day of n outcomes
        const ids = [...coll.ids('day', day)];
        for (let i = ids.length - 1; i >= 0; i--) deleted += coll.delete(ids[i]!) ? 1 : 0;
        return deleted;
      });
    }
    return n;
  }
}
