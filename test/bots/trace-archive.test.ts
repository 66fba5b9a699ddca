import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BotHost, type HostOptions } from '../../src/runtime/host/bot-host.js';
import type { BotPlacement, PlacedBots } from '../../src/runtime/ports.js';
import { TraceLog, type Trace, type TraceArchive } from '../../src/runtime/state/traces.js';
import type { BotStorage } from '../../src/runtime/ports.js';
import { fileBotStorage } from '../../src/deployment/bot-storage.js';
import { embeddedIdentity } from '../../src/deployment/embedded-identity.js';
import { botWorld, testHost, type BotWorld } from '../helpers/bots.js';

const trace = (i: number): Trace => ({
  bot: 'b',
  version: '1',
  rule: 'r',
  event: { key: `k${i}`, type: 'message.received', summary: 'message.received' },
  at: new Date(Date.UTC(2026, 10, 21, 12, 0, i)).toISOString(),
  outcome: 'done',
  steps: [],
  duration_ms: 1,
});

/** An archive in memory that records each append, and fails while `failing` is set. */
function memoryArchive(initial: Trace[] = []) {
  const kept = [...initial];
  const calls: Array<{ keys: string[]; keep: number }> = [];
  const a = {
    kept,
    calls,
    failing: false,
    failLoad: false,
    async load(limit: number) {
      if (a.failLoad) throw new Error('database away');
      return kept.slice(-limit);
    },
    async append(traces: readonly Trace[], keep: number) {
      if (a.failing) throw new Error('database away');
      calls.push({ keys: traces.map((t) => t.event.key), keep });
      kept.push(...traces);
    },
  } satisfies TraceArchive & Record<string, unknown>;
  return a;
}

describe('a trace history over an archive', () => {
  it('loads the newest, hands each tick its own batch in order, and never lets the archive stop the bot', async () => {
    const archive = memoryArchive([trace(0), trace(1), trace(2)]);
    const errors: unknown[] = [];
    const log = await TraceLog.over(archive, 2, (err) => errors.push(err));
    expect(log.list().map((t) => t.event.key)).toEqual(['k1', 'k2']);
    log.add(trace(3));
    log.add(trace(4));
    await Promise.resolve();
    log.add(trace(5)); // while the first write is under way: the next batch
    await log.flush();
    expect(archive.calls).toEqual([
      { keys: ['k3', 'k4'], keep: 2 },
      { keys: ['k5'], keep: 2 },
    ]);
    // a failing archive: the bot goes on, its history in memory too; the failure is said once
    archive.failing = true;
    log.add(trace(6));
    await log.flush();
    log.add(trace(7));
    await log.flush();
    expect(errors).toHaveLength(1);
    expect(log.list().map((t) => t.event.key)).toEqual(['k6', 'k7']);
    archive.failing = false;
    log.add(trace(8));
    await log.close();
    expect(archive.calls.at(-1)).toEqual({ keys: ['k8'], keep: 2 });
    // an archive that cannot be read: an empty history, said, and the log still works
    const broken = memoryArchive();
    broken.failLoad = true;
    const said: unknown[] = [];
    const empty = await TraceLog.over(broken, 5, (err) => said.push(err));
    expect(empty.list()).toEqual([]);
    expect(String(said[0])).toMatch(/database away/);
    empty.add(trace(9));
    await empty.close();
    expect(broken.kept.map((t) => t.event.key)).toEqual(['k9']);
  });
});

let w: BotWorld | undefined;
let host: BotHost | undefined;
afterEach(async () => {
  await host?.stop();
  host = undefined;
  await w?.close();
  w = undefined;
});

const echo = `name: echo
as: Echo
create_user: true
ignore_bots: true
rules:
  - id: answer
    on: message.received
    do: [{ reply: "echo!" }]
`;

/** The world's bot storage, with every bot's traces kept in the archive `archiveOf` gives (no file). */
function archivedStorage(w: BotWorld, archiveOf: (bot: string) => TraceArchive): BotStorage {
  const files = fileBotStorage({ embedded: w.server.store, stateDir: join(w.dir, 'data', 'bots') });
  return { ...files, forBot: (name, o) => ({ ...files.forBot(name, o), traces: { archive: archiveOf(name) } }) };
}

/** A host over the world's server running one bot file of it, with the given dependencies. */
function hostOf(w: BotWorld, file: string, deps: Pick<HostOptions, 'embedded' | 'storage' | 'placement'>): BotHost {
  return testHost({
    clock: w.server.clock,
    scheduler: w.server.scheduler,
    files: [join(w.botsDir, file)],
    ...deps,
  });
}

describe('the host and its dependencies', () => {
  it(
    "keeps a bot's traces in the archive its state stores give (no file), and " +
      "ignore_bots asks the identity provider about other processes' bots",
    async () => {
      w = await botWorld({ bots: { 'echo.yaml': echo } });
      const stateDir = join(w.dir, 'data', 'bots');
      const deps = w.server.deployment.botHostDeps({ env: w.server.env, url: w.server.url, stateDir });
      const archives = new Map<string, ReturnType<typeof memoryArchive>>();
      const alice = await w.user('Alice');
      const robot = await w.user('Robot'); // the user of a bot that runs in another process
      const identity = embeddedIdentity({ store: w.server.store, env: w.server.env, keysDir: join(stateDir, 'keys') });
      host = hostOf(w, 'echo.yaml', {
        embedded: {
          ...deps.embedded,
          identity: { keyFor: (r) => identity.keyFor(r), isBotUser: (id) => id === robot.user.id },
        },
        storage: archivedStorage(
          w,
          (bot) => archives.get(bot) ?? (archives.set(bot, memoryArchive()), archives.get(bot)!),
        ),
      });
      await host.start();
      await host.runner('echo')!.started;
      const pin = host.runner('echo')!.me!.pin_code;
      await host.runner('echo')!.pollNow(); // baseline
      await robot.api.messages.send({ recipient_pin: pin, content: 'hello from a bot' });
      await alice.api.messages.send({ recipient_pin: pin, content: 'hello from a person' });
      await host.runner('echo')!.pollNow();
      await host.runner('echo')!.pollNow();
      const seen = host
        .traces('echo')!
        .map((t) => t.reason ?? t.outcome)
        .sort();
      expect(seen).toEqual(['done', 'from_bot']);
      await host.stop();
      host = undefined;
      expect(
        archives
          .get('echo')!
          .kept.map((t) => t.reason ?? t.outcome)
          .sort(),
      ).toEqual(['done', 'from_bot']);
      expect(existsSync(join(stateDir, 'traces'))).toBe(false);
    },
  );
});

describe('a bot that leaves this process and comes back', () => {
  it('reads its history afresh from the archive at each start (it may have run elsewhere meanwhile)', async () => {
    w = await botWorld({
      bots: {
        'up.yaml': 'name: up\nas: Up\ncreate_user: true\nrules:\n  - id: hi\n    on: startup\n    do: [{ log: hi }]\n',
      },
    });
    const stateDir = join(w.dir, 'data', 'bots');
    const deps = w.server.deployment.botHostDeps({ env: w.server.env, url: w.server.url, stateDir });
    const shared = memoryArchive();
    let placed: PlacedBots | undefined;
    const placement: BotPlacement = {
      attach: async (bots) => void (placed = bots),
      offer: () => undefined,
      owns: () => true,
      ownerOf: () => undefined,
      fence: () => () => undefined,
      stop: async () => undefined,
    };
    host = hostOf(w, 'up.yaml', { ...deps, storage: archivedStorage(w, () => shared), placement });
    await host.start();
    await host.runner('up')!.started;
    await host.runner('up')!.idle();
    expect(host.traces('up')!.map((t) => t.event.type)).toEqual(['startup']);
    await placed!.halt('up');
    // meanwhile another process ran it: its history grew in the shared archive
    shared.kept.push({
      ...host.traces('up')![0]!,
      event: { key: 'elsewhere', type: 'message.received', summary: 'message.received' },
    });
    placed!.run('up');
    await host.reload(); // serialised after the run
    await host.runner('up')!.idle();
    expect(host.traces('up')!.map((t) => (t.event.key === 'elsewhere' ? 'elsewhere' : t.event.type))).toEqual([
      'startup',
      'elsewhere',
      'startup',
    ]);
  });
});

describe('the trace file, rewritten once it holds twice its limit', () => {
  it('keeps the newest whole lines: a line torn by a crash is skipped, the older whole ones kept in order', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'pinbot-traces-'));
    try {
      const file = join(dir, 'b.jsonl');
      // twenty lines, the third from the end torn (a crash mid-append, then more appends)
      const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify(trace(i + 1)));
      lines[17] = lines[17]!.slice(0, 30);
      writeFileSync(file, lines.join('\n') + '\n');
      const log = TraceLog.open(file, 10);
      log.add(trace(21));
      await log.flush();
      // 21 lines > 2 × 10: rewritten to the newest ten whole ones, k18 (torn) left out
      const kept = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      const keys = kept.map((l) => (JSON.parse(l) as Trace).event.key);
      expect(keys).toEqual(['k11', 'k12', 'k13', 'k14', 'k15', 'k16', 'k17', 'k19', 'k20', 'k21']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a torn last line (the next append joins it) is dropped; later ones all kept', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'pinbot-traces-'));
    try {
      const file = join(dir, 'b.jsonl');
      const lines = Array.from({ length: 3 }, (_, i) => JSON.stringify(trace(i + 1)));
      writeFileSync(file, `${lines.join('\n')}\n${JSON.stringify(trace(4)).slice(0, 40)}`);
      const log = TraceLog.open(file, 3);
      const keysOf = () =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as Trace).event.key);
      for (let i = 5; i <= 7; i++) {
        log.add(trace(i));
        await log.flush();
      }
      // 7 lines > 2 × 3: k4 torn, k5 appended onto it — both gone, the newest three whole kept
      expect(keysOf()).toEqual(['k3', 'k6', 'k7']);
      for (let i = 8; i <= 11; i++) {
        log.add(trace(i));
        await log.flush();
      }
      expect(keysOf()).toEqual(['k9', 'k10', 'k11']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
