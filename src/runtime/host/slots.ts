import { Serial } from '../../util/serial.js';
import { BotRunner } from '../bot/bot-runner.js';
import { BotIdentities } from '../bot/identity.js';
import type { CompiledBot } from '../define/bot.js';
import { TraceLog } from '../state/traces.js';
import type { HostOptions, Slot } from './host-options.js';

/**
 * The bot files of a host and what runs them, which the host and its placement share: the
 * slots (by file and by bot name), the start of a slot's bot (`launch`) and its halt, the
 * identities of the bots, and the turns changes take (a reload, a placement change, a pause:
 * one at a time).
 */
export class BotSlots {
  readonly slots = new Map<string, Slot>();
  /** The file of each bot name: lookups by name stay O(1) with 10,000 bots. */
  readonly byName = new Map<string, string>();
  /** Who each bot is: its key, its client on its user's rate budget, the users bots act as. */
  readonly identities: BotIdentities;
  /** Reloads and placement changes, one at a time. */
  readonly turns = new Serial();
  /** The host stopped: no bot starts any more. */
  stopped = false;

  constructor(private readonly o: HostOptions) {
    this.identities = new BotIdentities({ clock: o.clock, client: o.client, embedded: o.embedded?.identity });
  }

  /** Runs `fn` after the reloads and placement changes before it. */
  serialised<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.turns.run(fn);
  }

  /** The slot whose running (or last valid) version has this name. */
  named(name: string): Slot | undefined {
    const file = this.byName.get(name);
    const s = file === undefined ? undefined : this.slots.get(file);
    return s?.bot?.name === name ? s : undefined;
  }

  /** Stops a slot's bot here (its file stays loaded). */
  async halt(slot: Slot): Promise<void> {
    const runner = slot.runner;
    if (!runner) return;
    slot.runner = undefined;
    await runner.stop();
  }

  /**
   * Starts a slot's bot: its storage and trace history, as the deployment answers for it, and
   * its runner. `firstSpreadMs`: its first polls come sooner (a bot taken over from another
   * process may have missed events).
   */
  async launch(slot: Slot, bot: CompiledBot, firstSpreadMs?: number): Promise<void> {
    const remote = (this.o.server ?? bot.server) !== 'embedded';
    const base = remote ? (this.o.server ?? bot.server) : this.o.embedded!.url;
    const storage = this.o.storage.forBot(bot.name, { remote });
    const where = storage.traces;
    // a history kept in an archive is read afresh at each start: the bot may have run elsewhere since
    if ('archive' in where) await slot.traces?.close();
    const traceError = (err: unknown) =>
      this.o.log.warn(
        { bot: bot.name, err },
        `bot ${bot.name}: its trace history could not be read or written (it runs on; traces are diagnostics)`,
      );
    const traces =
      'archive' in where
        ? await TraceLog.over(where.archive, bot.traceLimit, traceError)
        : (slot.traces ?? TraceLog.open(where.file, bot.traceLimit));
    traces.setLimit(bot.traceLimit);
    traces.onAdd = this.o.onTrace;
    slot.traces = traces;
    const log = this.o.log.child({ bot: bot.name });
    const runner = new BotRunner({
      bot,
      registry: this.o.registry,
      openStore: storage.open,
      orderedStore: storage.ordered === true,
      traces,
      log,
      clock: this.o.clock,
      scheduler: this.o.scheduler,
      dryRun: this.o.dryRun === true || bot.dryRun,
      jitter: this.o.jitter,
      retryBaseMs: this.o.retryBaseMs,
      stepTimeoutMs: this.o.stepTimeoutMs,
      changes: remote ? undefined : this.o.embedded?.changes,
      safetyPollMs: this.o.safetyPollMs,
      firstSpreadMs,
      // shared out between processes: pushes received by another process arrive in the inbox
      inbox: storage.inbox,
      identity: this.identities.of(bot, {
        base,
        remote,
        log,
        headers: storage.headers,
        transport: remote ? undefined : this.o.embedded?.transport,
      }),
    });
    slot.runner = runner;
    runner.start();
  }
}
