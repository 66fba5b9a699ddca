import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkDatabase, writeCrashConfig } from './crash-db.js';
import { CrashModel } from './crash-model.js';
import { verifyAfterRestart } from './crash-verify.js';
import { runClient, type WorkloadState } from './crash-workload.js';
import { send } from './http.js';
import type { OpenApiDoc } from './openapi-ops.js';
import { rng as prng } from '../sim/rng.js';
import {
  killDuringStart,
  killServe,
  runCli,
  startServe,
  StartFailure,
  stopServe,
  type ServeProcess,
} from './supervisor.js';

export interface CrashFigures {
  seed: number;
  /** SIGKILLs, of which some landed while the server was still starting (recovering). */
  kills: number;
  killsDuringStart: number;
  starts: number;
  /** Starts that failed (the store did not load). Must be 0. */
  unloadableStarts: number;
  /**
   * Starts the store refused after `sabotage` damaged the data dir ("Start-up refused"): the
   * damage was detected rather than served. Without sabotage such a refusal is an unloadable start.
   */
  damageRefused: number;
  acknowledged: number;
  byKind: Record<string, number>;
  /** Acknowledged writes missing or in the wrong state after a restart. Must be 0. */
  lost: number;
  /** Writes cut off by a kill and retried with their Idempotency-Key, and duplicates among them (must be 0). */
  retried: number;
  duplicates: number;
  /** Money invariant checks after restarts, and failures (must be 0). */
  invariantChecks: number;
  invariantViolations: number;
  /** API keys found in the server's log output. Must be 0. */
  keysInLogs: number;
  /** 5xx answers to the clients. Must be 0. */
  serverErrors: number;
  /** Starts that found a torn last journal line (a kill mid-append) and dropped it. */
  tornTails: number;
  /**
   * PostgreSQL store: fresh loads of the whole database by this process after a restart (start-up
   * checks, books balanced over every account), and those that failed (must be 0).
   */
  databaseChecks: number;
  databaseProblems: number;
  transactions: number;
  samples: string[];
  ms: number;
}

export interface CrashOptions {
  kills: number;
  seed?: number;
  /** Length of the write burst before each kill, ms. */
  burstMs?: [number, number];
  clients?: number;
  maxUsers?: number;
  /** store.compact_bytes of the server: small, so kills also land in compactions. */
  compactBytes?: number;
  /** Share of kills aimed at a starting server (replay, compaction at open). */
  earlyKillShare?: number;
  /** Every how many cycles a user is added with the CLI (`pinbot users add`, a process each); 0: never. */
  cliEvery?: number;
  onProgress?: (f: CrashFigures) => void;
  /** Stops the loop early (the long run's time budget); the figures say how far it got. */
  stopWhen?: () => boolean;
  /** Finish with a clean SIGTERM stop and one more restart (default true). */
  cleanStop?: boolean;
  /**
   * PostgreSQL store: the URL of an empty database. The servers run with `store.driver:
   * postgres` on it (each with a data dir of its own for its admin socket).
   */
  database?: string;
  /**
   * `serve` processes on the database at once (PostgreSQL only; default 1). The clients are
   * spread over them; each cycle SIGKILLs one, picked by the seed, while the others stay up.
   */
  processes?: number;
  /** Test-only: damages the data dir (or the database) after each kill, to show the loop notices lost writes. */
  sabotage?: (dataDir: string, database?: string) => void | Promise<void>;
  /**
   * Kill only once this many writes of the cycle were acknowledged (waiting past the burst, up
   * to 30 s; 100 s with a sabotage), so a test's sabotage always has acknowledged writes to damage.
   * Default 0.
   */
  killAfterAcks?: number;
  /**
   * Kill only once this holds of the acknowledged writes by kind (waiting as `killAfterAcks`
   * does): a sabotage of balances needs a wallet account written first (accounts open on
   * their first credit, not with the user).
   */
  killWhen?: (byKind: Record<string, number>) => boolean;
}

/**
 * SQLite-style crash testing of `pinbot serve`: start it on a temp dir (with `database`, on the
 * PostgreSQL store: one or more processes on one database), let several clients write
 * (users and grants through the admin socket and the CLI; sends, accepts, declines, messages,
 * contacts and introductions through the API) for a random 50–300 ms, SIGKILL it, restart it,
 * and check that every acknowledged write is there, the store loads, writes cut off by the kill
 * retried with their Idempotency-Key exist once, and the money invariant holds (on PostgreSQL,
 * also over a fresh load of the whole database). The schedule comes from the seed.
 *
 * @example
 * const f = await runCrashLoop({ kills: 20, seed: 1 });
 * if (f.lost || f.unloadableStarts) console.log(f.samples);
 */
export async function runCrashLoop(opts: CrashOptions): Promise<CrashFigures> {
  const {
    kills,
    seed = 1,
    burstMs = [50, 300],
    clients = 4,
    maxUsers = 10,
    compactBytes = 65_536,
    earlyKillShare = 0.1,
    cliEvery = 25,
    cleanStop = true,
    onProgress,
    stopWhen,
    sabotage,
    killAfterAcks = 0,
    killWhen = () => true,
    database,
    processes = 1,
  } = opts;
  if (processes > 1 && !database) throw new Error('several serve processes need the PostgreSQL store (database)');
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'pinbot-crash-'));
  // One data dir per process (with PostgreSQL it holds only the admin socket and the lock).
  const dirs = Array.from({ length: processes }, (_, i) => join(root, processes > 1 ? `data${i + 1}` : 'data'));
  const dataDir = dirs[0]!;
  const configFile = join(root, 'config.yaml');
  writeCrashConfig(configFile, { compactBytes, database });
  const rnd = prng(seed);
  const model = new CrashModel();
  const state: WorkloadState = {
    model,
    dataDir,
    has: new Set(),
    retries: [],
    seq: 0,
    maxUsers,
    serverErrors: [],
    requesting: new Set(),
  };
  const f: CrashFigures = {
    seed,
    kills: 0,
    killsDuringStart: 0,
    starts: 0,
    unloadableStarts: 0,
    damageRefused: 0,
    acknowledged: 0,
    byKind: {},
    lost: 0,
    retried: 0,
    duplicates: 0,
    invariantChecks: 0,
    invariantViolations: 0,
    keysInLogs: 0,
    serverErrors: 0,
    tornTails: 0,
    databaseChecks: 0,
    databaseProblems: 0,
    transactions: 0,
    samples: [],
    ms: 0,
  };
  let logs: string[] = [];
  /** The servers now running (undefined: down), so an error anywhere still kills them. */
  const servers: Array<ServeProcess | undefined> = dirs.map(() => undefined);
  const sample = (s: string) => f.samples.length < 20 && f.samples.push(s);
  const scanLogs = () => {
    const keys = [...model.items.values()].filter((t) => t.kind === 'user').map((t) => t.meta.key!);
    for (const line of logs) {
      for (const k of keys) if (line.includes(k)) f.keysInLogs++, sample(`key in server log: ${line.slice(0, 200)}`);
      if (line.includes('dropped a torn')) f.tornTails++;
    }
    logs = [];
  };
  let refused = false;
  const start = async (slot: number): Promise<ServeProcess | undefined> => {
    try {
      f.starts++;
      servers[slot] = await startServe({ dataDir: dirs[slot]!, configFile, onLine: (l) => logs.push(l) });
      return servers[slot];
    } catch (err) {
      if (!(err instanceof StartFailure)) throw err;
      const why = /pinbot: .*Start-up refused.*/.exec(err.output)?.[0];
      if (sabotage && why) {
        // The store found the damage and said so: that is the harness noticing it.
        refused = true;
        f.damageRefused++;
        sample(`refused start after sabotage: ${why}`);
        return undefined;
      }
      f.unloadableStarts++;
      sample(`unloadable start: ${err.message}\n${err.output.slice(-2000)}`);
      return undefined;
    }
  };
  /**
   * Starts every process that is down; the first one started (the one to verify through), or
   * undefined if one would not start. */
  const startDown = async (): Promise<ServeProcess | undefined> => {
    let first: ServeProcess | undefined;
    for (const [slot, s] of servers.entries()) {
      if (s) continue;
      const started = await start(slot);
      if (!started) return undefined;
      first ??= started;
    }
    return first ?? servers[0];
  };
  const kill = async (slot: number) => {
    await killServe(servers[slot]!);
    servers[slot] = undefined;
  };
  const check = async (url: string) => {
    const v = await verifyAfterRestart(url, model, state.retries, state.has);
    f.lost += v.lost.length;
    f.retried += v.retried;
    f.duplicates += v.duplicates.length;
    for (const s of [...v.lost, ...v.duplicates]) sample(`after kill ${f.kills}: ${s}`);
    if (v.money) {
      f.invariantChecks++;
      f.transactions = v.money.transactions;
      if (!v.money.holds)
        f.invariantViolations++,
          sample(
            `after kill ${f.kills}: balances ${v.money.balances} + pending ` +
              `${v.money.pending} ≠ credits ${v.money.credits} (cents)`,
          );
    }
    if (database) {
      const c = await checkDatabase(database);
      f.databaseChecks++;
      if (c.problem) f.databaseProblems++, sample(`after kill ${f.kills}: ${c.problem}`);
      else f.transactions = c.transactions;
    }
  };

  try {
    for (let cycle = 0; cycle < kills && !stopWhen?.(); cycle++) {
      if (cycle > 0 && rnd.chance(earlyKillShare)) {
        // Kill it while it replays the journal / compacts at open (or loads the database), maybe before it listens.
        const slot = Math.max(
          0,
          servers.findIndex((s) => !s),
        );
        await killDuringStart({
          dataDir: dirs[slot]!,
          configFile,
          onLine: (l) => logs.push(l),
          delayMs: rnd.int(30, 700),
        });
        f.starts++;
        f.kills++;
        f.killsDuringStart++;
        continue;
      }
      const server = await startDown();
      if (!server) break;
      if (state.has.size === 0) {
        const doc = (await send(server.url, { method: 'GET', path: '/openapi.json', headers: {} })).json as OpenApiDoc;
        for (const [p, ms] of Object.entries(doc.paths))
          for (const m of Object.keys(ms)) state.has.add(`${m} ${p.replace(/^\/api\/v1/, '')}`);
      }
      await check(server.url);
      if (cliEvery > 0 && cycle % cliEvery === 0) {
        const cli = await runCli([
          'users',
          'add',
          '--name',
          `cli user ${cycle}`,
          '--json',
          '--data',
          dataDir,
          '--config',
          configFile,
        ]);
        if (cli.code !== 0) throw new Error(`pinbot users add failed: ${cli.stderr}`);
        const u = JSON.parse(cli.stdout) as { id: string; pin_code: string; api_key: string };
        model.created('user', u.id, 'present', { key: u.api_key, pin: u.pin_code }, 'user (CLI)');
      }
      let stopped = false;
      // Client i talks to process i mod N (its API, and its admin socket).
      const running = Array.from({ length: clients }, (_, i) =>
        runClient(
          servers[i % processes]!.url,
          state,
          prng(seed * 1_000_003 + cycle * 101 + i),
          () => stopped,
          dirs[i % processes],
        ),
      );
      const acksBefore = model.acks.total;
      await sleep(rnd.int(burstMs[0], burstMs[1]));
      // a sabotage needs what it damages written first: its kill waits for the acks however slow
      // the start (a loaded machine); a plain kill comes after 30 s at the latest
      const ackWaitMs = sabotage ? 100_000 : 30_000;
      const due = () => model.acks.total - acksBefore >= killAfterAcks && killWhen(model.acks.byKind);
      for (let waited = 0; !due() && waited < ackWaitMs; waited += 20) await sleep(20);
      stopped = true;
      // One process dies; with several, the others keep serving the requests in flight.
      await kill(processes > 1 ? rnd.int(0, processes - 1) : 0);
      f.kills++;
      await Promise.all(running);
      await sabotage?.(dataDir, database);
      for (const e of state.serverErrors.splice(0)) f.serverErrors++, sample(e);
      scanLogs();
      f.acknowledged = model.acks.total;
      onProgress?.(f);
    }
    // The end: restart, verify; then a clean stop (SIGTERM, snapshot) and a last verification.
    const last = refused ? undefined : await startDown();
    if (last) {
      await check(last.url);
      if (!cleanStop) for (const slot of servers.keys()) await kill(slot);
    }
    if (last && cleanStop) {
      for (const [slot, s] of servers.entries()) {
        const how = await stopServe(s!);
        servers[slot] = undefined;
        if (how !== '0') f.unloadableStarts++, sample(`clean stop exited with ${how}`);
      }
      const again = await start(0);
      if (again) {
        await check(again.url);
        await stopServe(again);
        servers[0] = undefined;
      }
    }
    scanLogs();
  } finally {
    for (const s of servers) if (s && s.child.exitCode === null && s.child.signalCode === null) await killServe(s);
    rmSync(root, { recursive: true, force: true });
  }
  f.acknowledged = model.acks.total;
  f.byKind = model.acks.byKind;
  f.ms = Date.now() - started;
  return f;
}
