import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { BotPlacement, PlacedBots } from '../runtime/index.js';
import { defineCollection, type Store, type Tx } from '../store/core/types.js';

/** A process taking part in running the bots; `beat` moves every renewal while it lives. */
export interface BotWorker {
  readonly id: string;
  /** `host:pid`, for operators. */
  readonly label: string;
  readonly beat: number;
}

/** Which process runs a bot. */
export interface BotLease {
  /** The bot's name. */
  readonly id: string;
  readonly owner: string;
}

export const BotWorkers = defineCollection<BotWorker>({ name: 'bot_workers' });
export const BotLeases = defineCollection<BotLease>({ name: 'bot_leases', multi: { owner: (l) => l.owner } });

/** A write on a bot's state by a process that no longer holds the bot. */
export class LeaseLostError extends Error {
  constructor(readonly bot: string) {
    super(`bot ${bot} now runs in another process (its lease moved): this process stops it`);
    this.name = 'LeaseLostError';
  }
}

export interface LeaseOptions {
  store: Store;
  /** Renewals and expiry run on this clock: the server gives wall time (processes die in real time). */
  clock: Clock;
  log: Logger;
  /** A process whose heartbeat has not moved for this long (as seen here) is taken as dead. */
  ttlMs: number;
  /** `host:pid` of this process. */
  label: string;
}

/**
 * Bot leases in the shared store (driver postgres): every process on the database registers as
 * a worker and renews its heartbeat every third of `ttlMs`; each bot is leased to one worker.
 * Liveness is judged as Kubernetes' leader election does it: a worker whose heartbeat has not
 * moved for `ttlMs` of *this* process's clock is dead (no clocks need to agree), its record and
 * leases are deleted in one transaction, and the bots are free again.
 *
 * Each round a process claims free bots up to its fair share (ceil(bots / live workers)); a bot
 * still free a round later is claimed by any process that can run it; a process above its share
 * hands bots back (halting them first). A process that finds its own record gone (it stalled
 * past the ttl) drops every bot at once and joins again under a new id. Every write on a bot's
 * state checks the lease in the same transaction (`fence`), so a stalled process that comes back
 * can never write over the new owner; the new owner reads the state after its claim committed.
 *
 * @example
 * const leases = new BotLeasing({ store, clock: systemClock, log, ttlMs: 15_000, label: 'web-1:4242' });
 * await leases.attach({ run: (n) => host.run(n), halt: (n) => host.halt(n) });
 */
export class BotLeasing implements BotPlacement {
  private id = '';
  private bots?: PlacedBots;
  private offered = new Set<string>();
  private readonly mine = new Set<string>();
  /** Other workers' last seen beat and when (this clock) it was seen to move. */
  private readonly seen = new Map<string, { beat: number; at: number }>();
  /** Bots seen free in the last round (claimed by anyone a round later). */
  private freeBefore = new Set<string>();
  /** Bots this process handed back, and when (the last time): not taken again beyond the share for a ttl. */
  private readonly handedBack = new Map<string, number>();
  /** Bots handed back that no other process took: kept here from then on (no flapping). */
  private readonly sticky = new Set<string>();
  private cancel?: () => void;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly o: LeaseOptions) {}

  /** Between renewals: a third of the ttl. */
  get renewMs(): number {
    return Math.max(50, Math.floor(this.o.ttlMs / 3));
  }

  /** This process's worker id (changes when it had to join again). */
  get worker(): string {
    return this.id;
  }

  async attach(bots: PlacedBots): Promise<void> {
    this.bots = bots;
    await this.join();
    await this.round().catch((err) =>
      this.o.log.error({ err }, 'bot lease round failed; retrying at the next renewal'),
    );
    this.schedule();
  }

  offer(names: readonly string[]): void {
    this.offered = new Set(names);
    // a bot no longer offered here (file removed, disabled) is handed back at the next round
  }

  owns(name: string): boolean {
    return this.mine.has(name);
  }

  ownerOf(name: string): string | undefined {
    const lease = this.o.store.read.col(BotLeases).get(name);
    if (!lease || lease.owner === this.id) return undefined;
    return this.o.store.read.col(BotWorkers).get(lease.owner)?.label ?? lease.owner;
  }

  fence(name: string): (tx: Tx) => void {
    return (tx) => {
      const lease = tx.col(BotLeases).get(name);
      if (!lease || lease.owner !== this.id || !this.mine.has(name)) throw new LeaseLostError(name);
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.running;
    const names = [...this.mine];
    await Promise.all(names.map((n) => this.halt(n)));
    await this.o.store
      .transaction((tx) => {
        for (const n of names) if (tx.col(BotLeases).get(n)?.owner === this.id) tx.col(BotLeases).delete(n);
        tx.col(BotWorkers).delete(this.id);
      })
      .catch((err) =>
        this.o.log.warn({ err }, 'could not hand the bot leases back: other processes take them over after the ttl'),
      );
  }

  /** Registers this process under a new worker id. Internal. */
  private async join(): Promise<void> {
    this.id = `wrk_${randomBytes(8).toString('hex')}`;
    const worker: BotWorker = { id: this.id, label: this.o.label, beat: 0 };
    await this.o.store.transaction((tx) => void tx.col(BotWorkers).insert(worker));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.cancel = this.o.clock.setTimer(this.o.clock.now() + this.renewMs, () => {
      this.running = this.round()
        .catch((err) => this.o.log.error({ err }, 'bot lease round failed; retrying at the next renewal'))
        .finally(() => this.schedule());
    });
  }

  /** One renewal: heartbeat, bury the dead, hand back what is lost or too much, claim. Internal. */
  private async round(): Promise<void> {
    const release = this.o.clock.hold('bot leases');
    try {
      await this.heartbeat();
      await this.buryDead();
      await this.dropLost();
      await this.balance();
    } finally {
      release();
    }
  }

  private async heartbeat(): Promise<void> {
    const alive = await this.o.store.transaction((tx) => {
      const w = tx.col(BotWorkers).get(this.id);
      if (w) tx.col(BotWorkers).update(this.id, { beat: w.beat + 1 });
      return w !== undefined;
    });
    if (alive) return;
    // taken for dead (this process stalled past the ttl): its bots run elsewhere by now
    this.o.log.warn(
      { bots: this.mine.size },
      'this process was taken for dead by the others (it did not renew its bot leases ' +
        'in time): its bots are stopped here and it joins again',
    );
    const lost = [...this.mine];
    this.mine.clear();
    await Promise.all(lost.map((n) => this.bots?.halt(n)));
    await this.join();
  }

  private async buryDead(): Promise<void> {
    const now = this.o.clock.now();
    const workers = [...this.o.store.read.col(BotWorkers).all()];
    const dead: BotWorker[] = [];
    for (const w of workers) {
      if (w.id === this.id) continue;
      const s = this.seen.get(w.id);
      if (!s || s.beat !== w.beat) this.seen.set(w.id, { beat: w.beat, at: now });
      else if (now - s.at >= this.o.ttlMs) dead.push(w);
    }
    for (const id of this.seen.keys()) if (!workers.some((w) => w.id === id)) this.seen.delete(id);
    if (!dead.length) return;
    const buried = await this.o.store.transaction((tx) => {
      const out: Array<{ id: string; label: string; bots: number }> = [];
      for (const w of dead) {
        // only if it has not beaten since: a worker that came back in time stays
        if (tx.col(BotWorkers).get(w.id)?.beat !== w.beat) continue;
        const leases = [...tx.col(BotLeases).ids('owner', w.id)];
        for (const id of leases) tx.col(BotLeases).delete(id);
        tx.col(BotWorkers).delete(w.id);
        out.push({ id: w.id, label: w.label, bots: leases.length });
      }
      return out;
    });
    for (const b of buried) {
      this.seen.delete(b.id);
      this.o.log.warn(
        { worker: b.label, bots: b.bots },
        `process ${b.label} stopped renewing its bot leases for ${this.o.ttlMs} ms: ` +
          `taken for dead, its ${b.bots} bots are free again`,
      );
    }
  }

  /** Bots whose lease is no longer this process's (the record says so): halted here. Internal. */
  private async dropLost(): Promise<void> {
    const leases = this.o.store.read.col(BotLeases);
    const lost = [...this.mine].filter((n) => leases.get(n)?.owner !== this.id);
    for (const n of lost) this.mine.delete(n);
    await Promise.all(lost.map((n) => this.halt(n)));
  }

  private async balance(): Promise<void> {
    const read = this.o.store.read;
    const live = Math.max(1, read.col(BotWorkers).count());
    const known = new Set(this.offered);
    for (const l of read.col(BotLeases).all()) known.add(l.id);
    const share = Math.ceil(known.size / live);
    // hand back: bots no longer offered here, then what is above the fair share
    const unoffered = [...this.mine].filter((n) => !this.offered.has(n));
    const above = [...this.mine]
      .filter((n) => this.offered.has(n) && !this.sticky.has(n))
      .sort()
      .slice(Math.max(0, share - this.sticky.size));
    const others = [...read.col(BotWorkers).all()].some((w) => w.id !== this.id);
    await this.handBack([...unoffered, ...(others ? above : [])]);
    // claim: free bots up to the share; those already free a round ago, whatever the share
    // (what this process just handed back waits a ttl for the others first)
    const now = this.o.clock.now();
    const waiting = (n: string) => now - (this.handedBack.get(n) ?? -Infinity) < this.o.ttlMs;
    const free = [...this.offered].filter((n) => !this.mine.has(n) && !read.col(BotLeases).get(n)).sort();
    const leftOver = free.filter((n) => this.freeBefore.has(n) && !waiting(n));
    const want = new Set([
      ...free.filter((n) => !waiting(n)).slice(0, Math.max(0, share - this.mine.size)),
      ...leftOver,
    ]);
    this.freeBefore = new Set(free);
    if (want.size) await this.claim([...want], new Set(leftOver));
  }

  private async handBack(names: string[]): Promise<void> {
    if (!names.length) return;
    // halted first: a run's last writes still pass the fence
    await Promise.all(names.map((n) => this.halt(n)));
    for (const n of names) {
      this.mine.delete(n);
      this.handedBack.set(n, this.o.clock.now());
    }
    await this.o.store.transaction((tx) => {
      for (const n of names) if (tx.col(BotLeases).get(n)?.owner === this.id) tx.col(BotLeases).delete(n);
    });
    this.o.log.info({ bots: names.length }, `handed ${names.length} bots back to share them with the other processes`);
  }

  private async claim(names: string[], leftOver = new Set<string>()): Promise<void> {
    const got = await this.o.store.transaction((tx) => {
      const out: string[] = [];
      for (const n of names) {
        if (tx.col(BotLeases).get(n)) continue;
        tx.col(BotLeases).put({ id: n, owner: this.id });
        out.push(n);
      }
      return out;
    });
    if (!got.length) return;
    // the state here includes every write of the bots' previous owners (they committed before the claim)
    await this.o.store.durable();
    for (const n of got) {
      // handed back before and taken by no one: this process keeps it
      if (leftOver.has(n) && this.handedBack.has(n)) this.sticky.add(n);
      this.mine.add(n);
      this.bots?.run(n);
    }
  }

  private async halt(name: string): Promise<void> {
    try {
      await this.bots?.halt(name);
    } catch (err) {
      this.o.log.error({ err, bot: name }, 'stopping a bot failed');
    }
  }
}
