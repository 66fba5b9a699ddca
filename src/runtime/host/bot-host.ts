import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { BotMemory } from '../state/memory.js';
import { resolve } from 'node:path';
import { formatProblem } from '../../util/yaml-errors.js';
import type { BotRunner } from '../bot/bot-runner.js';
import type { BotEvent } from '../contract/types.js';
import type { CompiledBot } from '../define/bot.js';
import { loadBot } from '../define/loader.js';
import { isRun, type Trace } from '../state/traces.js';
import type { BotStatus, HostOptions, Slot } from './host-options.js';
import { HostPlacement } from './placement.js';
import { BotSlots } from './slots.js';

export type { BotStatus, HostOptions } from './host-options.js';

/**
 * Runs the bots of a folder (or a list of files): validates them all first, starts the valid
 * ones and reports the rest; `reload()` re-reads the files — a changed file is validated and
 * swapped in, and if the new text is invalid the running version is kept; a removed file stops
 * its bot. Each bot runs on its own (BotRunner): an error or a 401 in one never stops another.
 *
 * @example
 * const host = new BotHost({ registry, log, clock, scheduler, dir: 'bots', embedded });
 * const report = await host.start();
 */
export class BotHost {
  /** The bot files, their runners, and the turns changes to them take. */
  private readonly bots: BotSlots;
  private readonly slots: Map<string, Slot>;
  /** The file of each bot name: lookups by name stay O(1) with 10,000 bots. */
  private readonly byName: Map<string, string>;
  /** Placement across processes (or none: every bot runs here). */
  private readonly placed: HostPlacement;

  constructor(private readonly o: HostOptions) {
    this.bots = new BotSlots(o);
    this.slots = this.bots.slots;
    this.byName = this.bots.byName;
    this.placed = new HostPlacement(o, this.bots);
  }

  /**
   * Loads every file and starts the valid bots (with a placement: those whose lease this
   * process gets). Returns the status of each file.
   */
  async start(): Promise<BotStatus[]> {
    const report = await this.reload();
    if (!this.o.placement) return report;
    await this.placed.attach();
    // the bots this process got start before it reports
    await this.bots.turns.idle();
    return this.status();
  }

  /** Runs `fn` after the reloads and placement changes before it. Internal. */
  private serialised<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.bots.serialised(fn);
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
      if (this.bots.stopped || !slot?.paused || !slot.bot || slot.runner) return false;
      slot.paused = false;
      await this.bots.launch(slot, slot.bot);
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
    if (this.bots.stopped) return this.status();
    const files = this.files();
    // a Set: with 10,000 bots, files.includes per slot is 10^8 comparisons per reload
    const listed = new Set(files);
    for (const [file, slot] of this.slots) {
      if (!listed.has(file) || !existsSync(file)) {
        if (slot.runner)
          this.o.log.info({ bot: slot.bot?.name, file }, `bot ${slot.bot?.name} stopped: its file was removed`);
        await slot.runner?.stop();
        await slot.traces?.close();
        this.slots.delete(file);
        if (slot.bot && this.byName.get(slot.bot.name) === file) this.byName.delete(slot.bot.name);
        this.bots.identities.keepOnly([...this.slots.values()].flatMap((s) => (s.runner?.me ? [s.runner.me.id] : [])));
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
      const res = loadBot(file, text, {
        registry: this.o.registry,
        env: this.o.env,
        envAllow: this.o.envAllow,
        allowedServers: [...(this.o.allowedServers ?? []), ...(this.o.server ? [this.o.server] : [])],
      });
      const bot = res.bot;
      for (const w of res.warnings ?? []) this.o.log.warn({ file }, `warning: ${formatProblem(w)}`);
      const problems = [...res.problems];
      if (bot) {
        const other = this.named(bot.name);
        if (other && other.file !== file)
          problems.push({
            file,
            line: 1,
            col: 1,
            path: 'name',
            message: `the bot name "${bot.name}" is also used by ${other.file}`,
            hint: 'give each bot its own name',
          });
        const runtime = this.runtimeProblem(bot);
        if (runtime) problems.push({ file, line: 1, col: 1, path: 'server', message: runtime });
      }
      if (problems.length || !bot) {
        for (const p of problems) this.o.log.error({ file }, formatProblem(p));
        if (slot?.runner) {
          this.o.log.warn(
            { bot: slot.bot?.name, file },
            `bot ${slot.bot?.name}: the new file is invalid; the running version is kept`,
          );
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
      const next: Slot = {
        file,
        text,
        bot,
        problems: [],
        warnings: res.warnings,
        traces: sameName ? slot?.traces : undefined,
      };
      this.slots.set(file, next);
      if (slot?.bot && slot.bot.name !== bot.name && this.byName.get(slot.bot.name) === file)
        this.byName.delete(slot.bot.name);
      this.byName.set(bot.name, file);
      if (bot.enabled && this.placed.mayRun(bot.name)) await this.bots.launch(next, bot);
    }
    this.placed.offer();
    return this.status();
  }

  /** Why this process cannot run the bot at all, if it cannot. Internal. */
  private runtimeProblem(bot: CompiledBot): string | undefined {
    const server = this.o.server ?? bot.server;
    if (server === 'embedded' && !this.o.embedded)
      return 'server: embedded needs `pinbot serve`; run it there, or pass --server URL';
    if ('as' in bot.identity && (server !== 'embedded' || !this.o.embedded))
      return (
        'as: works only with the embedded server of `pinbot serve`; use key: ' +
        '${env:PINBOT_KEY_NAME} to run against a remote server'
      );
    return undefined;
  }

  /** Why a bot waits for the clock (`serve --virtual-clock`: a change held until `clock advance`), if it does. */
  waitingForClock(name: string): string | undefined {
    return this.named(name)?.runner?.waitingForClock;
  }

  /** The state of every bot file. */
  status(): BotStatus[] {
    return [...this.slots.values()].map((s) => {
      const invalid = s.problems.length ? s.problems.map(formatProblem) : undefined;
      const base = {
        name: s.bot?.name ?? s.name,
        file: s.file,
        version: s.bot?.version,
        dry_run: s.bot ? this.o.dryRun === true || s.bot.dryRun : undefined,
        warnings: s.warnings?.length ? s.warnings.map(formatProblem) : undefined,
      };
      const away = invalid ? undefined : this.placed.elsewhere(s);
      if (away) return { ...base, ...away };
      if (!s.runner && s.paused)
        return {
          ...base,
          status: 'paused',
          message: 'paused by the operator; its events wait until it is resumed',
          problems: invalid,
          last_run: s.traces?.list().filter(isRun).at(-1)?.at,
        };
      if (!s.runner)
        return {
          ...base,
          status: s.bot && !s.bot.enabled ? 'disabled' : 'invalid',
          problems: invalid,
          message: s.bot && !s.bot.enabled ? 'enabled: false' : undefined,
        };
      const lastPoll = s.runner.lastPollAt ? new Date(s.runner.lastPollAt).toISOString() : undefined;
      const runs = s.traces?.list().filter(isRun) ?? [];
      const said = invalid ? `running the previous version; the file has problems` : s.runner.message;
      const message = [said, failingNote(runs, s.bot?.name), s.runner.waitingForClock].filter(Boolean).join('; ');
      return {
        ...base,
        status: s.runner.status,
        message,
        problems: invalid,
        last_poll: lastPoll,
        last_run: runs.at(-1)?.at,
      };
    });
  }

  /**
   * With bots shared out between processes: queues a pushed event (a plugin's push source) for
   * the bots listening to `trigger` that run in another process (see HostPlacement).
   */
  pushElsewhere(trigger: string, event: Omit<BotEvent, 'at'>, onlyBot?: string): Promise<string[]> {
    return this.placed.pushElsewhere(trigger, event, onlyBot);
  }

  /** The bots with an enabled rule on `trigger` that are valid here but run in another process. */
  listenersElsewhere(trigger: string): string[] {
    return this.placed.listenersElsewhere(trigger);
  }

  runner(name: string): BotRunner | undefined {
    return this.named(name)?.runner;
  }

  /**
   * The memory of a bot (its file's bounds and ttl) over the store its state lives in — the
   * shared store, unfenced, when bots are shared out between processes (an operator may read and
   * forget whichever process runs the bot); undefined for an unknown bot.
   */
  async memory(name: string): Promise<BotMemory | undefined> {
    const bot = this.named(name)?.bot;
    if (!bot) return undefined;
    const remote = (this.o.server ?? bot.server) !== 'embedded';
    const store = this.o.storage.shared
      ? await this.o.storage.shared()
      : await this.o.storage.forBot(bot.name, { remote }).open();
    return new BotMemory(store, bot.name, bot.memory, () => this.o.clock.now());
  }

  /** The recent traces of a bot, in the order they finished; undefined for an unknown bot. */
  traces(name: string, limit?: number): Trace[] | undefined {
    return this.named(name)?.traces?.list(limit);
  }

  /** The slot whose running (or last valid) version has this name. Internal. */
  private named(name: string): Slot | undefined {
    return this.bots.named(name);
  }

  async stop(): Promise<void> {
    // the leases go back first (halting the bots), so the other processes take them at once
    await this.placed.stop();
    this.bots.stopped = true;
    await this.bots.turns.idle();
    await Promise.all([...this.slots.values()].map((s) => s.runner?.stop()));
    await Promise.all([...this.slots.values()].map((s) => s.traces?.close()));
    await this.o.storage.close();
  }
}

/**
 * `its last 3 runs failed (api) — pinbot bots trace tip-jar` when a running bot's latest runs
 * failed (a bot that is up but not working is not just "running"). Internal.
 */
function failingNote(runs: readonly Trace[], name: string | undefined): string | undefined {
  let n = 0;
  while (n < runs.length && runs[runs.length - 1 - n]!.outcome === 'failed') n++;
  if (!n) return undefined;
  const reasons = [...new Set(runs.slice(-n).map((t) => t.reason ?? 'failed'))].join(', ');
  return `its last ${n > 1 ? `${n} runs` : 'run'} failed (${reasons})${name ? ` — pinbot bots trace ${name}` : ''}`;
}
