import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { createClient, type ClientOptions } from '../../client/client.js';
import { createRateBudget, type RateBudget } from '../../client/rate-budget.js';
import type { Clock } from '../../clock/clock.js';
import type { Scheduler } from '../../clock/scheduler.js';
import { formatProblem, type FileProblem } from '../../util/yaml-errors.js';
import type { CompiledBot } from '../define/bot.js';
import { BotRunner } from '../bot/bot-runner.js';
import { waitingOffTheClock } from '../../util/step-timeout.js';
import type { BotPlacement, ChangeFeed, IdentityProvider, InboxFeed, StateStores } from '../ports.js';
import { BotState } from '../state/bot-state.js';
import type { BotEvent } from '../contract/types.js';
import { fencedStore } from '../state/fenced-store.js';
import { loadBot } from '../define/loader.js';
import type { Registry } from '../contract/registry.js';
import { TraceLog, type Trace } from '../state/traces.js';
import type { UserRef } from '../../client/types.js';

export interface HostOptions {
  registry: Registry;
  log: Logger;
  clock: Clock;
  scheduler: Scheduler;
  /** Where keys/, traces/ and remote/ (the state of remote bots) live: `DATA/bots`. */
  stateDir: string;
  /** The bots folder (every *.yaml / *.yml), or explicit files. */
  dir?: string;
  files?: string[];
  /**
   * The server this process serves: bots with `server: embedded` and `as:` use it. With
   * `changes`, its bots are woken by the changes that concern them.
   */
  embedded?: { url: string; identity: IdentityProvider; changes?: ChangeFeed; inbox?: InboxFeed };
  /** Where bots keep their state (cursors, inbox, vars; and traces, when it gives `traceArchive`). */
  stateStores: StateStores;
  /** Every bot talks to this base URL (`pinbot bots run --server URL`). */
  server?: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Variables bot files may read anywhere (config `bots.env_allow`); by default only in key/server. */
  envAllow?: readonly string[];
  /** Remote servers bot files may name (config `bots.allowed_servers`); `server` is added to them. */
  allowedServers?: readonly string[];
  /** Client settings (tests make retries fast). */
  client?: Partial<ClientOptions>;
  jitter?: boolean;
  retryBaseMs?: number;
  /** Working time an action, a rule's conditions or a poll source may take (`runtime.step_timeout`). */
  stepTimeoutMs?: number;
  /**
   * Woken bots (embedded) still poll their sources this often, as a safety net
   * (`runtime.safety_poll`, default 10 minutes).
   */
  safetyPollMs?: number;
  /**
   * Shares the bots out with other processes on the same database (driver postgres): this host
   * runs only the bots whose lease it holds, and every write of their state is fenced by it.
   */
  placement?: BotPlacement;
  /** Told of every trace as a bot records it (the web console's live timeline). */
  onTrace?: (trace: Trace) => void;
}

/** One bot file as the host sees it. */
export interface BotStatus {
  name?: string;
  file: string;
  /** `elsewhere`: another process on the database runs it (its lease is theirs). */
  status: 'running' | 'starting' | 'waiting' | 'failed' | 'stopped' | 'invalid' | 'disabled' | 'elsewhere' | 'paused';
  message?: string;
  version?: string;
  dry_run?: boolean;
  problems?: string[];
  /** ISO time of the last finished poll. */
  last_poll?: string;
  /** ISO time (bot clock) of the last rule run (traced). */
  last_run?: string;
  /** What is worth fixing in a valid file (file:line:col: …). */
  warnings?: string[];
}

interface Slot {
  file: string;
  text: string;
  /** The bot's name, when the file got that far. */
  name?: string;
  bot?: CompiledBot;
  problems: FileProblem[];
  warnings?: FileProblem[];
  runner?: BotRunner;
  traces?: TraceLog;
  /** Paused by the operator (`pause`): not run until `resume` or a change of its file. */
  paused?: boolean;
}

/**
 * Runs the bots of a folder (or a list of files): validates them all first, starts the valid
 * ones and reports the rest; `reload()` re-reads the files — a changed file is validated and
 * swapped in, and if the new text is invalid the running version is kept; a removed file stops
 * its bot. Each bot runs on its own (BotRunner): an error or a 401 in one never stops another.
 *
 * @example
 * const host = new BotHost({ registry, log, clock, scheduler, stateDir: 'data/bots', dir: 'bots', embedded });
 * const report = await host.start();
 */
export class BotHost {
  private readonly slots = new Map<string, Slot>();
  /** The file of each bot name: lookups by name stay O(1) with 10,000 bots. */
  private readonly byName = new Map<string, string>();
  private readonly budgets = new Map<string, RateBudget>();
  /** Users the bots of this host act as (for `ignore_bots`). */
  private readonly botUsers = new Set<string>();
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly o: HostOptions) {}

  /**
   * Loads every file and starts the valid bots (with a placement: those whose lease this
   * process gets). Returns the status of each file.
   */
  async start(): Promise<BotStatus[]> {
    const report = await this.reload();
    if (!this.o.placement) return report;
    await this.o.placement.attach({ run: (name) => void this.serialised(() => this.runPlaced(name)), halt: (name) => this.serialised(() => this.haltPlaced(name)) });
    // the bots this process got start before it reports
    await this.chain;
    return this.status();
  }

  /** Runs `fn` after the reloads and placement changes before it. Internal. */
  private serialised<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The placement gave this process the bot: start it (its state is read afresh). Internal. */
  private async runPlaced(name: string): Promise<void> {
    const slot = this.named(name);
    if (this.stopped || !slot?.bot || !slot.bot.enabled || slot.runner) return;
    // what it missed while it moved is read within a second (not spread over its poll)
    await this.launch(slot, slot.bot, 1000);
  }

  /** The placement takes the bot away: stop it here. Internal. */
  private async haltPlaced(name: string): Promise<void> {
    const slot = this.named(name);
    if (!slot?.runner) return;
    const runner = slot.runner;
    slot.runner = undefined;
    await runner.stop();
  }

  /**
   * Pauses a running bot: its runner stops, its file stays loaded, its cursors stay where they
   * are — the events that come meanwhile wait and are handled after `resume`. A change of its
   * file starts it again. Not with bots shared out between processes (use `enabled: false`).
   * Returns whether it was paused.
   */
  pause(name: string): Promise<boolean> {
    return this.serialised(async () => {
      const slot = this.named(name);
      if (this.o.placement || !slot?.runner) return false;
      const runner = slot.runner;
      slot.runner = undefined;
      slot.paused = true;
      await runner.stop();
      this.o.log.info({ bot: name }, `bot ${name} paused`);
      return true;
    });
  }

  /** Starts a paused bot again; returns whether it was paused. */
  resume(name: string): Promise<boolean> {
    return this.serialised(async () => {
      const slot = this.named(name);
      if (this.stopped || !slot?.paused || !slot.bot || slot.runner) return false;
      slot.paused = false;
      await this.launch(slot, slot.bot);
      this.o.log.info({ bot: name }, `bot ${name} resumed`);
      return true;
    });
  }

  /** Re-reads the files (serialised: a reload waits for the one before). */
  reload(): Promise<BotStatus[]> {
    return this.serialised(() => this.doReload());
  }

  files(): string[] {
    if (this.o.files) return this.o.files.map((f) => resolve(f));
    if (!this.o.dir || !existsSync(this.o.dir)) return [];
    return readdirSync(this.o.dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .map((f) => resolve(this.o.dir!, f));
  }

  private async doReload(): Promise<BotStatus[]> {
    if (this.stopped) return this.status();
    const files = this.files();
    for (const [file, slot] of this.slots) {
      if (!files.includes(file) || !existsSync(file)) {
        if (slot.runner) this.o.log.info({ bot: slot.bot?.name, file }, `bot ${slot.bot?.name} stopped: its file was removed`);
        await slot.runner?.stop();
        await slot.traces?.close();
        this.slots.delete(file);
        if (slot.bot && this.byName.get(slot.bot.name) === file) this.byName.delete(slot.bot.name);
        this.botUsers.clear();
        for (const s of this.slots.values()) if (s.runner?.me) this.botUsers.add(s.runner.me.id);
      }
    }
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue; // removed between listing and reading: the next reload sees it gone
      }
      const slot = this.slots.get(file);
      if (slot && slot.text === text) continue;
      const res = loadBot(file, text, { registry: this.o.registry, env: this.o.env, envAllow: this.o.envAllow, allowedServers: [...(this.o.allowedServers ?? []), ...(this.o.server ? [this.o.server] : [])] });
      const bot = res.bot;
      for (const w of res.warnings ?? []) this.o.log.warn({ file }, `warning: ${formatProblem(w)}`);
      const problems = [...res.problems];
      if (bot) {
        const other = this.named(bot.name);
        if (other && other.file !== file) problems.push({ file, line: 1, col: 1, path: 'name', message: `the bot name "${bot.name}" is also used by ${other.file}`, hint: 'give each bot its own name' });
        const runtime = this.runtimeProblem(bot);
        if (runtime) problems.push({ file, line: 1, col: 1, path: 'server', message: runtime });
      }
      if (problems.length || !bot) {
        for (const p of problems) this.o.log.error({ file }, formatProblem(p));
        if (slot?.runner) {
          this.o.log.warn({ bot: slot.bot?.name, file }, `bot ${slot.bot?.name}: the new file is invalid; the running version is kept`);
          this.slots.set(file, { ...slot, text, problems });
        } else {
          await slot?.traces?.close();
          this.slots.set(file, { file, text, problems, name: bot?.name });
        }
        continue;
      }
      if (slot?.runner) {
        this.o.log.info({ bot: bot.name, file, version: bot.version }, `bot ${bot.name} reloaded`);
        await slot.runner.stop();
      }
      // the history goes on with the new version (a renamed bot starts its own)
      const sameName = slot?.bot?.name === bot.name;
      if (!sameName) await slot?.traces?.close();
      const next: Slot = { file, text, bot, problems: [], warnings: res.warnings, traces: sameName ? slot?.traces : undefined };
      this.slots.set(file, next);
      if (slot?.bot && slot.bot.name !== bot.name && this.byName.get(slot.bot.name) === file) this.byName.delete(slot.bot.name);
      this.byName.set(bot.name, file);
      if (bot.enabled && (!this.o.placement || this.o.placement.owns(bot.name))) await this.launch(next, bot);
    }
    this.o.placement?.offer([...this.slots.values()].flatMap((s) => (s.bot?.enabled && this.named(s.bot.name) === s ? [s.bot.name] : [])));
    return this.status();
  }

  /** Why this process cannot run the bot at all, if it cannot. Internal. */
  private runtimeProblem(bot: CompiledBot): string | undefined {
    const server = this.o.server ?? bot.server;
    if (server === 'embedded' && !this.o.embedded) return 'server: embedded needs `pinbot serve`; run it there, or pass --server URL';
    if ('as' in bot.identity && (server !== 'embedded' || !this.o.embedded)) return 'as: works only with the embedded server of `pinbot serve`; use key: ${env:PINBOT_KEY_NAME} to run against a remote server';
    return undefined;
  }

  private async launch(slot: Slot, bot: CompiledBot, firstSpreadMs?: number): Promise<void> {
    const remote = (this.o.server ?? bot.server) !== 'embedded';
    const base = remote ? (this.o.server ?? bot.server) : this.o.embedded!.url;
    const placement = this.o.placement;
    // shared out between processes, every bot keeps its state in the shared store, fenced by its lease
    const kind = remote && !placement ? 'remote' : 'embedded';
    // a history kept in an archive is read afresh at each start: the bot may have run elsewhere since
    const archive = this.o.stateStores.traceArchive?.(bot.name);
    if (archive) await slot.traces?.close();
    const traceError = (err: unknown) => this.o.log.warn({ bot: bot.name, err }, `bot ${bot.name}: its trace history could not be read or written (it runs on; traces are diagnostics)`);
    const tracesFile = join(this.o.stateDir, remote ? 'remote/traces' : 'traces', `${bot.name}.jsonl`);
    const traces = archive ? await TraceLog.over(archive, bot.traceLimit, traceError) : (slot.traces ?? TraceLog.open(tracesFile, bot.traceLimit));
    traces.setLimit(bot.traceLimit);
    traces.onAdd = this.o.onTrace;
    slot.traces = traces;
    const log = this.o.log.child({ bot: bot.name });
    const runner = new BotRunner({
      bot,
      registry: this.o.registry,
      openStore: async () => {
        const store = await this.o.stateStores.open(kind);
        return placement ? fencedStore(store, placement.fence(bot.name)) : store;
      },
      traces,
      log,
      clock: this.o.clock,
      scheduler: this.o.scheduler,
      dryRun: this.o.dryRun === true || bot.dryRun,
      jitter: this.o.jitter,
      retryBaseMs: this.o.retryBaseMs,
      stepTimeoutMs: this.o.stepTimeoutMs,
      isBot: (id) => this.botUsers.has(id) || (!remote && this.o.embedded?.identity.isBotUser?.(id) === true),
      changes: remote ? undefined : this.o.embedded?.changes,
      safetyPollMs: this.o.safetyPollMs,
      firstSpreadMs,
      // shared out between processes: pushes received by another process arrive in the inbox
      inbox: placement ? this.o.embedded?.inbox : undefined,
      identify: async (signal) => {
        let apiKey: string;
        let known: UserRef | undefined;
        let keyId: string | undefined;
        if ('key' in bot.identity) apiKey = bot.identity.key;
        else {
          const r = await this.o.embedded!.identity.keyFor({ bot: bot.name, as: bot.identity.as, createUser: bot.identity.createUser });
          if (r.created) log.info({ user: r.user.pin_code }, `bot ${bot.name}: new API key for ${r.user.display_name} (${r.user.pin_code})`);
          apiKey = r.apiKey;
          // the embedded server said who the key is: no GET /me (10,000 bots start faster)
          if (r.user.id) known = { id: r.user.id, display_name: r.user.display_name, pin_code: r.user.pin_code };
          keyId = r.keyId;
        }
        // waits of the client (pacing, Retry-After, backoff) are on the clock, and park the
        // bot's held work while they last (see Clock.hold)
        const sleep = (ms: number, signal?: AbortSignal) => waitingOffTheClock(() => this.o.clock.sleep(ms, signal, { parked: true }));
        const client = (budget: RateBudget) =>
          createClient({ baseUrl: base, apiKey, budget, sleep, owner: bot.name, onRetry: (i) => log.debug(i, 'retrying a request'), ...this.o.client });
        const newBudget = () => createRateBudget({ now: () => this.o.clock.now(), sleep });
        const probe = client(newBudget());
        const me = known ?? (await probe.me({ signal }));
        this.botUsers.add(me.id);
        // the server counts every key of a user together: bots acting as one user share one budget
        const budgetKey = `${base}\u0000${me.id}`;
        let budget = this.budgets.get(budgetKey);
        if (!budget) this.budgets.set(budgetKey, (budget = newBudget()));
        const api = client(budget);
        api.http.lastDate = probe.http.lastDate;
        return { api, me, keyId };
      },
    });
    slot.runner = runner;
    runner.start();
  }

  /** The state of every bot file. */
  status(): BotStatus[] {
    return [...this.slots.values()].map((s) => {
      const invalid = s.problems.length ? s.problems.map(formatProblem) : undefined;
      const base = { name: s.bot?.name ?? s.name, file: s.file, version: s.bot?.version, dry_run: s.bot ? this.o.dryRun === true || s.bot.dryRun : undefined, warnings: s.warnings?.length ? s.warnings.map(formatProblem) : undefined };
      if (!s.runner && s.bot?.enabled && this.o.placement && !invalid) {
        const owner = this.o.placement.ownerOf(s.bot.name);
        return { ...base, status: 'elsewhere', message: owner ? `runs in process ${owner}` : 'waiting for its lease (another process had it)' };
      }
      if (!s.runner && s.paused) return { ...base, status: 'paused', message: 'paused by the operator; its events wait until it is resumed', problems: invalid, last_run: s.traces?.list(1)[0]?.at };
      if (!s.runner) return { ...base, status: s.bot && !s.bot.enabled ? 'disabled' : 'invalid', problems: invalid, message: s.bot && !s.bot.enabled ? 'enabled: false' : undefined };
      const lastPoll = s.runner.lastPollAt ? new Date(s.runner.lastPollAt).toISOString() : undefined;
      const lastRun = s.traces?.list(1)[0]?.at;
      return { ...base, status: s.runner.status, message: invalid ? `running the previous version; the file has problems` : s.runner.message, problems: invalid, last_poll: lastPoll, last_run: lastRun };
    });
  }

  /**
   * With bots shared out between processes: queues a pushed event (a plugin's push source) for
   * the bots listening to `trigger` that are valid here but run in another process, in their
   * inbox in the shared store, exactly once per key; their owner handles it (InboxFeed).
   * Returns the bots it was queued for.
   */
  async pushElsewhere(trigger: string, event: Omit<BotEvent, 'at'>, onlyBot?: string): Promise<string[]> {
    const names = this.listenersElsewhere(trigger).filter((n) => onlyBot === undefined || n === onlyBot);
    const out: string[] = [];
    if (names.length === 0) return out;
    const store = await this.o.stateStores.open('embedded');
    for (const name of names) {
      if (await new BotState(store, name).push(`push:${trigger}`, { ...event, at: this.o.clock.now() })) out.push(name);
    }
    return out;
  }

  /** The bots with an enabled rule on `trigger` that are valid here but run in another process. */
  listenersElsewhere(trigger: string): string[] {
    if (!this.o.placement || this.stopped) return [];
    const out: string[] = [];
    for (const s of this.slots.values()) {
      const bot = s.bot;
      if (!bot?.enabled || s.runner || this.named(bot.name) !== s) continue;
      if (bot.rules.some((r) => r.enabled && r.triggers.some((t) => t.def.name === trigger))) out.push(bot.name);
    }
    return out;
  }

  runner(name: string): BotRunner | undefined {
    return this.named(name)?.runner;
  }

  /** The recent traces of a bot, in the order they finished; undefined for an unknown bot. */
  traces(name: string, limit?: number): Trace[] | undefined {
    return this.named(name)?.traces?.list(limit);
  }

  /** The slot whose running (or last valid) version has this name. Internal. */
  private named(name: string): Slot | undefined {
    const file = this.byName.get(name);
    const s = file === undefined ? undefined : this.slots.get(file);
    return s?.bot?.name === name ? s : undefined;
  }

  async stop(): Promise<void> {
    // the leases go back first (halting the bots), so the other processes take them at once
    await this.o.placement?.stop();
    this.stopped = true;
    await this.chain;
    await Promise.all([...this.slots.values()].map((s) => s.runner?.stop()));
    await Promise.all([...this.slots.values()].map((s) => s.traces?.close()));
    await this.o.stateStores.close();
  }
}
