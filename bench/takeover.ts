import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAdminCommand } from '../src/admin/commands.js';
import { callAdmin } from '../src/admin/socket.js';
import type { BotStatus } from '../src/runtime/host/bot-host.js';
import { VirtualClock } from '../src/clock/virtual-clock.js';
import { configFrom } from '../src/config/load.js';
import { Messages } from '../src/domain/messaging/collections.js';
import { Users } from '../src/domain/users/users.js';
import { BotLeases, BotWorkers } from '../src/deployment/bot-leases.js';
import { dataDirIntegrity } from '../src/deployment/store-integrity.js';
import { PgStore } from '../src/store/postgres/pg-store.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { defineBench } from './harness/bench.js';
import { type Figure, median } from './harness/figure.js';
import { sleep } from './harness/bots-kit.js';
import { runDir } from './harness/paths.js';
import { probe, startPinbot } from './harness/pinbot-server.js';
import type { ServerProcess } from './harness/server-process.js';

const BOTS = 24;
const TTL_S = 3;

/**
 * takeover: three `pinbot serve` processes on one PostgreSQL database share 24 echo bots by
 * lease (`bots.lease_ttl: 3s`). Each round one process is killed -9 and a message is sent at
 * once to every bot it ran; the figure is the time from the kill until the last of them is
 * answered — as a ratio to the lease ttl, the floor set by design (a process is taken for dead
 * only after the ttl). The baseline in the same run: the time a bot takes to answer when no
 * process dies. The killed process is started again between rounds and gets its share back.
 */
export default defineBench({
  name: 'takeover',
  summary: 'bot takeover time after kill -9 of one of three processes on PostgreSQL, as a ratio to the lease ttl',
  async run(ctx) {
    const tmp = runDir('takeover');
    const pg = await startPostgres({ fsync: true });
    let cluster: Cluster | undefined;
    try {
      const url = await pg.createDatabase('takeover');
      const bots = join(tmp.dir, 'bots');
      writeBots(bots);
      const config = { store: { driver: 'postgres', url }, bots: { dir: bots, lease_ttl: `${TTL_S}s` } };
      cluster = new Cluster(tmp.dir, config);
      for (const i of [0, 1, 2]) await cluster.start(i);
      await cluster.observe(url);
      await cluster.spread();
      const latency: number[] = [];
      const takeover: number[] = [];
      for (let round = 0; round < ctx.rounds; round++) {
        const victim = round % 3;
        const via = cluster.servers[(victim + 1) % 3]!;
        const own = [...(await cluster.ownerOf())].filter(([, i]) => i === victim).map(([b]) => b);
        latency.push(await cluster.answered(own, via, Date.now()));
        ctx.progress(`takeover: round ${round + 1}/${ctx.rounds}, kill -9 of pg${victim} (${own.length} bots)`);
        const killedAt = Date.now();
        await cluster.servers[victim]!.stop(0);
        cluster.servers[victim] = undefined;
        takeover.push(await cluster.answered(own, via, killedAt));
        await cluster.start(victim);
        await cluster.spread();
      }
      return figures(takeover, latency);
    } finally {
      await cluster?.close();
      await pg.stop();
      tmp.cleanup();
    }
  },
});

/** The echo bots the three processes share. Internal. */
function writeBots(dir: string): void {
  mkdirSync(dir);
  for (let i = 0; i < BOTS; i++) {
    const rule = '  - id: echo\n    on: message.received\n    do:\n      - reply: "echo {{ event.content }}"\n';
    writeFileSync(
      join(dir, `echo-${i}.yaml`),
      `name: echo-${i}\nas: Echo ${i}\ncreate_user: true\nloop_guard: false\nrules:\n${rule}`,
    );
  }
}

/** The takeover's figure and its baseline. Internal. */
function figures(takeover: number[], latency: number[]): Figure[] {
  const t = median(takeover);
  const base = median(latency);
  const rounds = takeover.map((x) => (x / 1000).toFixed(1)).join(', ');
  return [
    {
      bench: 'takeover',
      name: `bot takeover after kill -9 (${BOTS / 3} of ${BOTS} bots, lease_ttl ${TTL_S}s)`,
      p50: t,
      p99: Math.max(...takeover),
      ratio: t / (TTL_S * 1000),
      baseline: 'lease_ttl',
      value: `${(t / 1000).toFixed(1)} s from the kill to the last of its bots answering (rounds: ${rounds} s)`,
    },
    {
      bench: 'takeover',
      name: 'baseline: the same bots answering, no process killed',
      p50: base,
      p99: Math.max(...latency),
      value: `${base} ms`,
    },
  ];
}

/** Three `serve` processes on one database, an observer of its leases, and a sender. Internal. */
class Cluster {
  readonly servers: Array<ServerProcess | undefined> = [];
  private store: PgStore | undefined;
  private sender = '';
  private readonly pins = new Map<string, string>();
  private n = 0;

  constructor(
    private readonly dir: string,
    private readonly config: Record<string, unknown>,
  ) {}

  async start(i: number): Promise<void> {
    const dataDir = join(this.dir, `pg${i}`);
    this.servers[i] = await startPinbot({ name: `pg${i}`, runDir: this.dir, dataDir, config: this.config, bots: true });
  }

  /** Opens the observer, and makes the sender; the bots' PINs once their users exist. */
  async observe(url: string): Promise<void> {
    const store = await PgStore.open({ url, integrity: dataDirIntegrity, warn: () => undefined });
    this.store = store;
    const env = { clock: new VirtualClock(Date.now()), config: configFrom({}) };
    const made = (await runAdminCommand({ store, env }, 'users.add', { name: 'Sender' })) as { api_key: string };
    this.sender = made.api_key;
  }

  /** Which process (index) holds each bot's lease. */
  async ownerOf(): Promise<Map<string, number>> {
    const store = this.store!;
    await store.durable();
    const out = new Map<string, number>();
    for (const l of store.read.col(BotLeases).all()) {
      const label = store.read.col(BotWorkers).get(l.owner)?.label ?? '';
      out.set(
        l.id,
        this.servers.findIndex((s) => s !== undefined && label.endsWith(`:${s.pid}`)),
      );
    }
    return out;
  }

  /** Waits until every process runs a third of the bots. */
  async spread(): Promise<Map<string, number>> {
    for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
      const o = await this.ownerOf();
      const per = [0, 1, 2].map((i) => [...o.values()].filter((x) => x === i).length);
      if (o.size === BOTS && per.every((n) => n === BOTS / 3)) return o;
    }
    throw new Error('the bots did not spread evenly over the three processes within 60 s');
  }

  /** Sends one message to each bot through `via`; resolves with the ms until the last is answered. */
  async answered(names: string[], via: ServerProcess, from: number): Promise<number> {
    const store = this.store!;
    if (this.pins.size === 0)
      for (const u of store.read.col(Users).all())
        if (u.display_name.startsWith('Echo ')) this.pins.set(`echo-${u.display_name.slice(5)}`, u.pin_code);
    const contents = names.map((b) => `${b} #${++this.n}`);
    await Promise.all(
      names.map(async (b, i) => {
        const r = await probe(
          via.url,
          'POST',
          '/api/v1/messages/send',
          { 'X-API-Key': this.sender },
          JSON.stringify({ recipient_pin: this.pins.get(b), content: contents[i] }),
        );
        if (r.status !== 201) throw new Error(`sending to ${b}: ${r.status} ${JSON.stringify(r.body)}`);
      }),
    );
    const want = new Set(contents.map((c) => `echo ${c}`));
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(20)) {
      await store.durable();
      for (const m of store.read.col(Messages).all()) want.delete(m.content);
      if (want.size === 0) return Date.now() - from;
    }
    throw new Error(
      `${want.size} messages not answered within 30 s: ${[...want].join(', ')}\n${await this.status(names)}`,
    );
  }

  /** What each live process says of `names` (for a failure's message). */
  private async status(names: string[]): Promise<string> {
    const lines = await Promise.all(
      [0, 1, 2].map(async (i) =>
        this.servers[i]
          ? ((await callAdmin(join(this.dir, `pg${i}`), 'bots.status')) as { bots: BotStatus[] }).bots
              .filter((b) => names.includes(b.name!) && b.status !== 'elsewhere')
              .map((b) => `pg${i} ${b.name} ${b.status} ${b.message ?? ''} last poll ${b.last_poll ?? 'never'}`)
          : [],
      ),
    );
    return lines.flat().join('\n');
  }

  async close(): Promise<void> {
    await this.store?.close();
    await Promise.all(this.servers.map((s) => s?.stop()));
  }
}
