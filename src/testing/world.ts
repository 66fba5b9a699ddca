import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { createClient, type Client } from '../client/client.js';
import type { Message, Transaction } from '../client/types.js';
import { VirtualClock } from '../clock/virtual-clock.js';
import { configFrom } from '../config/load.js';
import { createKey } from '../domain/users/keys.js';
import { createUser } from '../domain/users/users.js';
import { addContact, contactBetween } from '../domain/contacts/contacts.js';
import { grantMoney } from '../domain/wallet/grants.js';
import { BotHost, type BotStatus, type HostOptions, PluginStates, type Trace } from '../runtime/index.js';
import { startServer, type RunningServer } from '../server.js';
import { botAdminCommands } from '../services/bots.js';
import type { ServerContext, ServerService } from '../services/types.js';
import { formatPluginProblem } from '../plugin-api/collect.js';
import type { PluginReport } from '../plugin-api/host.js';
import type { Plugin } from '../plugin-api/types.js';
import { pluginsService } from '../services/plugins.js';
import { buildRegistry, type ProjectRegistry } from '../services/registry.js';
import { ubiService } from '../services/ubi.js';
import { parseDuration } from '../util/duration.js';
import { DATA_DIR } from '../util/data-dir.js';

/** A user of the world: who they are, their key, and a client acting as them. */
export interface WorldUser {
  name: string;
  id: string;
  pin_code: string;
  display_name: string;
  api_key: string;
  /** A client acting as the user (a new one after `restart`: the server's port changes). */
  api: Client;
}

export interface UserSpec {
  /** Starting balance (an operator grant), e.g. 20 or 12.5. */
  balance?: number;
  /** Names of other users of the world this user is already in contact with. */
  contacts?: string[];
}

export interface TestWorldOptions {
  /** Where the virtual clock starts (ISO 8601 or ms). Default 2026-01-01T09:00:00Z. */
  start?: string | number;
  /** config.yaml overrides for the embedded server (e.g. `{ rate_limits: { enabled: false } }`). */
  config?: Record<string, unknown>;
  /** Users to create, by name (their display name is the name). */
  users?: Record<string, UserSpec>;
  /** Bots to run: YAML text, or `{ file }` to copy a bot file in. They act as the world's users (`as: alice`). */
  bots?: Array<string | { file: string }>;
  /**
   * Plugins to load: files (paths from the working directory) or plugin objects (what
   * definePlugin returned). Their settings go in `config.plugins.config.<name>`.
   */
  plugins?: Array<string | Plugin<any>>;
  /** Also load every plugin of a folder (e.g. `'plugins'`); default none. */
  pluginsDir?: string;
  /** The registry (default: `buildRegistry` of the config with `plugins`); plugins then come from it. */
  registry?: ProjectRegistry;
  /** `runtime.step_timeout` of the bots, in ms (default from the config: 10 s). */
  stepTimeoutMs?: number;
  log?: Logger;
  /**
   * Bot files written into the bots folder before anything runs, by file name (e.g.
   * `{ 'echo.yaml': yaml }`); unlike `bots`, they start only with `world.host.start()`.
   */
  botFiles?: Record<string, string>;
  /** `false`: the server runs nothing beside the API (no UBI, no plugins); default both. */
  services?: false;
  /** Settings of the bot host that differ (e.g. fast client retries); given last. */
  hostOptions?: Partial<HostOptions>;
}

/** What one user can do in the world, as a conversation reads. */
export interface Actor {
  readonly user: WorldUser;
  /** Sends a message to another user of the world (by name) or to a PIN. */
  send(to: string, content: string): Promise<Message>;
  /** Sends money (`amount` in units, e.g. 5 or 2.50) to a user of the world or a PIN. */
  pay(to: string, amount: number, note?: string): Promise<Transaction>;
}

/**
 * An embedded pinbot in this process, on a virtual clock: a real server over HTTP on a free
 * port with a real store in a temp directory, named users, bots, and a clock the test moves.
 * `advance` and `settle` return when everything they woke has finished, so the line after them
 * sees every effect.
 *
 * @example
 * const world = await createTestWorld({ users: { alice: { balance: 20 }, jar: {} }, bots: [tipJarYaml] });
 * await world.as('alice').pay('jar', 5);
 * await world.advance('10s');
 * expect((await world.inbox('alice')).map((m) => m.content)).toContain('Thanks!');
 * expect(await world.state('karma', 'jar')).toEqual({});   // promises: read through the API or the store
 * await world.close();
 */
export interface TestWorld {
  readonly server: RunningServer;
  readonly clock: VirtualClock;
  readonly url: string;
  /** The server's data directory (in a temp directory that `close` removes). */
  readonly dataDir: string;
  /** The folder the bots are read from (beside `dataDir`). */
  readonly botsDir: string;
  readonly users: Readonly<Record<string, WorldUser>>;
  readonly host: BotHost;
  /**
   * Stops the bots, plugins and server (as a shutdown would) and starts them again on the same
   * data directory and clock: what was persisted is all that is left (state, cursors, inboxes).
   */
  restart(): Promise<void>;
  /** Adds a user (and contacts with users that exist). */
  addUser(name: string, spec?: UserSpec): Promise<WorldUser>;
  /** Acts as a user of the world. */
  as(name: string): Actor;
  /** Adds a bot (YAML text or `{ file }`) and waits until it runs; throws with its problems if invalid. */
  addBot(bot: string | { file: string }): Promise<BotStatus>;
  /** Moves the virtual clock (`'2d'`, `'90s'` or ms), firing everything due on the way, and settles. */
  advance(by: string | number): Promise<void>;
  /** Moves the clock to a time (ISO or ms), like `advance`. */
  advanceTo(at: string | number): Promise<void>;
  /** Waits until everything woken so far has settled (bot runs, polls, jobs), without moving time. */
  settle(): Promise<void>;
  /** The traces of a bot, oldest first. */
  traces(bot: string): Trace[];
  /** Who is in a dialog (`ask`) with a bot now: their PIN, the rule and step, since and until when (ISO). */
  dialogs(bot: string): Array<{ pin: string; name: string; rule: string; step: number; since: string; until?: string }>;
  /** The plugins: status, source, what they register (as `pinbot plugins list` shows). */
  plugins(): PluginReport[];
  /** What a plugin keeps for a bot (`ctx.state`), or shared by every bot (no bot). */
  state(plugin: string, bot?: string): Promise<Record<string, unknown>>;
  /**
   * What a bot remembers of a person (a user of the world by name, or a PIN) — or, given
   * `{ conversation: id }`, of a conversation: the live entries its rules read as `memory`.
   */
  memory(bot: string, whose: string | { conversation: string }): Promise<Record<string, unknown>>;
  /** Seeds what a bot remembers of a person (or conversation), as a `remember` step would (bounds apply). */
  remember(bot: string, whose: string | { conversation: string }, values: Record<string, unknown>): Promise<void>;
  /** An HTTP request to the embedded server (plugin routes: `/plugins/<name>/…`). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Every message in the user's conversations that someone else sent, oldest first. */
  inbox(name: string): Promise<Message[]>;
  /** The user's transactions, newest first (as the API lists them). */
  transfers(name: string): Promise<Transaction[]>;
  close(): Promise<void>;
}

const DEFAULT_START = '2026-01-01T09:00:00Z';

function toMs(at: string | number, what: string): number {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) throw new Error(`${what}: "${at}" is not a time; use ISO 8601 like 2026-03-01T09:00:00Z`);
  return ms;
}

/** The parts of a world, shared by its methods (`server` and `host` change on restart). Internal. */
interface Parts {
  dir: string;
  dataDir: string;
  botsDir: string;
  clock: VirtualClock;
  registry: ProjectRegistry;
  server: RunningServer;
  host: BotHost;
  serve(): Promise<RunningServer>;
  botHost(): BotHost;
  /** Users by name in a Map: a plain object answers `constructor`, `toString`, `__proto__` … */
  byName: Map<string, WorldUser>;
  /** `world.users`: a view of byName without a prototype. */
  users: Record<string, WorldUser>;
  botSeq: number;
}

/** The registry of a world: its plugins must all load (else the temp directory goes). Internal. */
async function worldRegistry(o: TestWorldOptions, dir: string, config: Config, log: Logger) {
  const registry =
    o.registry ?? (await buildRegistry({ config, log, pluginsDir: o.pluginsDir ?? false, plugins: o.plugins ?? [] }));
  const failed = registry.plugins?.problems.filter((p) => !p.warning) ?? [];
  if (failed.length) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`plugins did not load:\n${failed.map(formatPluginProblem).join('\n')}`);
  }
  return registry;
}

/** Starts the parts of a world: its folders, clock, registry, server and bot host. Internal. */
async function startParts(o: TestWorldOptions): Promise<Parts> {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-world-'));
  const dataDir = join(dir, 'data');
  const botsDir = join(dir, 'bots');
  mkdirSync(botsDir, { recursive: true });
  for (const [f, text] of Object.entries(o.botFiles ?? {})) writeFileSync(join(botsDir, basename(f)), text);
  const log = o.log ?? pino({ level: 'silent' });
  const config = configFrom(o.config ?? {});
  const clock = new VirtualClock(toMs(o.start ?? DEFAULT_START, 'start'));
  const registry = await worldRegistry(o, dir, config, log);
  // the test runner reports stray errors itself: no process guard in a test world
  // the world's own bot host answers the admin socket's bots commands, as a serve's does
  // (`pinbot bots trace --data DIR` on a scenario's server kept up by --keep)
  let serverCtx: ServerContext | undefined;
  const botCommands: ServerService = {
    name: 'bots',
    start: (ctx) => void (serverCtx = ctx),
    commands: botAdminCommands(
      () => p.host,
      () => serverCtx,
    ),
  };
  const services =
    o.services === false ? [botCommands] : [ubiService(), pluginsService({ processGuard: false }), botCommands];
  const serve = () => startServer({ dataDir, config, clock, registry, host: '127.0.0.1', port: 0, log, services });
  let server: RunningServer;
  try {
    server = await serve();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const stateDir = join(dataDir, DATA_DIR.bots);
  const botHost = () =>
    new BotHost({
      ...p.server.deployment.botHostDeps({
        env: p.server.env,
        url: p.server.url,
        transport: p.server.inProcess,
        stateDir,
      }),
      registry,
      log,
      clock,
      scheduler: p.server.scheduler,
      dir: botsDir,
      jitter: false,
      stepTimeoutMs: o.stepTimeoutMs ?? parseDuration(config.runtime.step_timeout),
      ...o.hostOptions,
    });
  const p: Parts = {
    dir,
    dataDir,
    botsDir,
    clock,
    registry,
    server,
    host: undefined as unknown as BotHost,
    serve,
    botHost,
    byName: new Map(),
    users: Object.create(null) as Record<string, WorldUser>,
    botSeq: 0,
  };
  p.host = botHost();
  return p;
}

/** A user of the world by name, or a clear error listing them. Internal. */
function userOf(p: Parts, name: string): WorldUser {
  const u = p.byName.get(name);
  if (!u)
    throw new Error(`no user "${name}" in this world; the users are: ${[...p.byName.keys()].join(', ') || 'none'}`);
  return u;
}

const pinOf = (p: Parts, to: string) => p.byName.get(to)?.pin_code ?? to;

/** The users of a world: adding them, acting as them, what they received. Internal. */
function userMethods(p: Parts): Pick<TestWorld, 'addUser' | 'as' | 'inbox' | 'transfers'> {
  return {
    async addUser(name, spec = {}) {
      if (p.byName.has(name)) throw new Error(`a user "${name}" already exists in this world`);
      const { server } = p;
      const made = await server.store.transaction((tx) => {
        const u = createUser(tx, server.env, { name });
        if (spec.balance) grantMoney(tx, server.env, u.id, Math.round(spec.balance * 100));
        for (const other of spec.contacts ?? []) addContact(tx, server.env, u.id, userOf(p, other).id);
        return { u, key: createKey(tx, server.env, u.id).api_key };
      });
      const user: WorldUser = {
        name,
        id: made.u.id,
        pin_code: made.u.pin_code,
        display_name: made.u.display_name,
        api_key: made.key,
        api: createClient({ baseUrl: server.url, apiKey: made.key }),
      };
      p.byName.set(name, user);
      Object.defineProperty(p.users, name, { value: user, enumerable: true, configurable: true });
      return user;
    },
    as(name) {
      const user = userOf(p, name);
      return {
        user,
        send: (to, content) => user.api.messages.send({ recipient_pin: pinOf(p, to), content }),
        pay: async (to, amount, note) =>
          (
            await user.api.wallet.send({
              recipient_pin: pinOf(p, to),
              amount,
              ...(note === undefined ? {} : { note }),
            })
          ).transaction,
      };
    },
    async inbox(name) {
      const user = userOf(p, name);
      const out: Message[] = [];
      for (const c of (await user.api.conversations.list()).conversations) {
        for (const m of (await user.api.conversations.messages(c.id, { limit: 200 })).messages)
          if (m.sender.id !== user.id) out.push(m);
      }
      return out.sort((a, b) => a.timestamp - b.timestamp);
    },
    async transfers(name) {
      return (await userOf(p, name).api.wallet.transactions({ limit: 200 })).transactions;
    },
  };
}

/** A bot's memory of a person (by name or PIN) or a conversation. Internal. */
async function memoryOf(p: Parts, bot: string, whose: string | { conversation: string }) {
  const memory = await p.host.memory(bot);
  if (!memory) {
    const bots = p.host.status().map((s) => s.name);
    throw new Error(`no bot named ${bot} in this world; the bots are: ${bots.join(', ') || 'none'}`);
  }
  return typeof whose === 'string'
    ? { memory, scope: 'person' as const, subject: pinOf(p, whose).trim().toUpperCase() }
    : { memory, scope: 'conversation' as const, subject: whose.conversation };
}

/** What a world's bots and plugins did and keep: traces, dialogs, state, memory. Internal. */
function readMethods(p: Parts): Pick<TestWorld, 'traces' | 'dialogs' | 'plugins' | 'state' | 'memory' | 'remember'> {
  return {
    traces: (bot) => p.host.traces(bot) ?? [],
    dialogs: (bot) =>
      (p.host.runner(bot)?.dialogs() ?? []).map((d) => ({
        pin: d.person.pin_code,
        name: d.person.display_name,
        rule: d.rule,
        step: d.step,
        since: new Date(d.since).toISOString(),
        ...(d.until !== undefined ? { until: new Date(d.until).toISOString() } : {}),
      })),
    plugins: () => p.registry.plugins?.status() ?? [],
    async state(plugin, bot = '') {
      const col = p.server.store.read.col(PluginStates);
      return Object.fromEntries(
        col.ids('scope', `${plugin}\u0000${bot}`).map((id) => [col.get(id)!.key, structuredClone(col.get(id)!.value)]),
      );
    },
    async memory(bot, whose) {
      const { memory, scope, subject } = await memoryOf(p, bot, whose);
      return memory.read(scope, subject);
    },
    async remember(bot, whose, values) {
      const { memory, scope, subject } = await memoryOf(p, bot, whose);
      await memory.apply([{ scope, subject, set: values }]);
    },
  };
}

/** A world's clock, bots and lifetime: restart, addBot, advance, settle, close. Internal. */
function runMethods(
  p: Parts,
): Pick<TestWorld, 'restart' | 'addBot' | 'advance' | 'advanceTo' | 'settle' | 'fetch' | 'close'> {
  const { clock } = p;
  return {
    async restart() {
      await p.host.stop();
      await p.server.close();
      p.server = await p.serve();
      for (const u of p.byName.values()) u.api = createClient({ baseUrl: p.server.url, apiKey: u.api_key });
      p.host = p.botHost();
      const report = await p.host.start();
      for (const b of report) if (b.name) await p.host.runner(b.name)?.started;
      await clock.settle();
    },
    async addBot(bot) {
      const file =
        typeof bot === 'string' ? join(p.botsDir, `bot-${++p.botSeq}.yaml`) : join(p.botsDir, basename(bot.file));
      if (typeof bot === 'string') writeFileSync(file, bot);
      else copyFileSync(bot.file, file);
      const report = await p.host.reload();
      const status = report.find((s) => s.file === file)!;
      if (status.status === 'invalid') throw new Error(`invalid bot:\n${(status.problems ?? []).join('\n')}`);
      await p.host.runner(status.name!)?.started;
      await clock.settle();
      return p.host.status().find((s) => s.file === file)!;
    },
    advance: (by) => {
      const ms = typeof by === 'number' ? by : parseDuration(by);
      if (ms === undefined) throw new Error(`advance: "${by}" is not a duration like 90s, 15m, 2h, 3d`);
      return clock.advance(ms);
    },
    advanceTo: (at) => clock.advanceTo(toMs(at, 'advanceTo')),
    settle: () => clock.settle(),
    fetch: (path, init) => fetch(`${p.server.url}${path}`, init),
    async close() {
      await p.host.stop();
      await p.server.close();
      rmSync(p.dir, { recursive: true, force: true });
    },
  };
}

/** Creates the users of the options (balances first, then contacts, one per pair) and their bots. Internal. */
async function populate(world: TestWorld, p: Parts, o: TestWorldOptions): Promise<void> {
  for (const [name, spec] of Object.entries(o.users ?? {})) await world.addUser(name, { balance: spec.balance });
  for (const [name, spec] of Object.entries(o.users ?? {})) {
    const contacts = (spec.contacts ?? []).filter((c) => c !== name);
    // listed on either side or both: one contact each pair
    if (contacts.length)
      await p.server.store.transaction((tx) =>
        contacts.forEach(
          (c) =>
            contactBetween(tx, userOf(p, name).id, userOf(p, c).id) ??
            addContact(tx, p.server.env, userOf(p, name).id, userOf(p, c).id),
        ),
      );
  }
  for (const bot of o.bots ?? []) await world.addBot(bot);
}

/** Starts a test world. Close it when done (it removes its temp directory). */
export async function createTestWorld(o: TestWorldOptions = {}): Promise<TestWorld> {
  const p = await startParts(o);
  const world: TestWorld = {
    get server() {
      return p.server;
    },
    clock: p.clock,
    dataDir: p.dataDir,
    botsDir: p.botsDir,
    get url() {
      return p.server.url;
    },
    users: p.users,
    get host() {
      return p.host;
    },
    ...runMethods(p),
    ...userMethods(p),
    ...readMethods(p),
  };
  try {
    await populate(world, p, o);
  } catch (err) {
    await world.close();
    throw err;
  }
  return world;
}
