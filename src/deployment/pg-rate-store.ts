import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type pg from 'pg';
import { createSharedTable } from '../store/postgres/pg-schema.js';
import type { Clock } from '../clock/clock.js';

/** Increments between two sweeps of expired windows (no timer). */
const SWEEP_EVERY = 1000;

/** Creates the (unlogged: counts need not survive a database crash) hits table when missing. */
export async function prepareRateTable(pool: pg.Pool, schema: string): Promise<void> {
  await createSharedTable(
    pool,
    schema,
    `CREATE UNLOGGED TABLE IF NOT EXISTS "${schema}"."_rate_hits" (key text PRIMARY ` +
      `KEY, hits int NOT NULL, reset_at bigint NOT NULL)`,
  );
}

/**
 * The hit counts of one rate-limit bucket in PostgreSQL, shared by every process on the
 * database: a client's budget is the same whichever process it reaches. Fixed windows on the
 * injected clock, as ClockRateStore: a window starts at a client's first hit and lasts
 * `windowMs`. One statement per hit (an upsert that starts a new window when the old one ended).
 *
 * @example rateLimit({ store: new PgRateStore(pool, 'pinbot', clock, 'general'), … })
 */
export class PgRateStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private count = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly clock: Clock,
    bucket: string,
  ) {
    this.prefix = `${bucket}:`;
  }

  private get table() {
    return `"${this.schema}"."_rate_hits"`;
  }

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const r = await this.pool.query(`SELECT hits, reset_at FROM ${this.table} WHERE key = $1 AND reset_at > $2`, [
      this.prefix + key,
      this.clock.now(),
    ]);
    const row = r.rows[0];
    return row ? { totalHits: row.hits, resetTime: new Date(Number(row.reset_at)) } : undefined;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.clock.now();
    const r = await this.pool.query(
      `INSERT INTO ${this.table} AS t (key, hits, reset_at) VALUES ($1, 1, $2::bigint + $3::bigint)
       ON CONFLICT (key) DO UPDATE SET
         hits = CASE WHEN t.reset_at <= $2::bigint THEN 1 ELSE t.hits + 1 END,
         reset_at = CASE WHEN t.reset_at <= $2::bigint THEN $2::bigint + $3::bigint ELSE t.reset_at END
       RETURNING hits, reset_at`,
      [this.prefix + key, now, this.windowMs],
    );
    if (++this.count % SWEEP_EVERY === 0)
      void this.pool.query(`DELETE FROM ${this.table} WHERE reset_at <= $1`, [now]).catch(() => undefined);
    return { totalHits: r.rows[0].hits, resetTime: new Date(Number(r.rows[0].reset_at)) };
  }

  async decrement(key: string): Promise<void> {
    await this.pool.query(`UPDATE ${this.table} SET hits = greatest(hits - 1, 0) WHERE key = $1 AND reset_at > $2`, [
      this.prefix + key,
      this.clock.now(),
    ]);
  }

  async resetKey(key: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE key = $1`, [this.prefix + key]);
  }
}
