import type { PollLoop } from './poll-loop.js';
import type { RunnerOptions } from './runner-options.js';

/** `runtime.safety_poll` when nothing says otherwise: woken sources are polled this often anyway. */
export const DEFAULT_SAFETY_POLL_MS = 600_000;

/** What decides when a bot's sources are polled: of the runner's options, these. */
type WakeUpOptions = Pick<RunnerOptions, 'bot' | 'registry' | 'changes' | 'safetyPollMs'>;

/**
 * When a bot's sources are polled. On the embedded server (`changes`) a source with topics is
 * polled as soon as a change of its topics concerns the bot's user, and otherwise only every
 * `runtime.safety_poll`; other sources keep the bot's `poll`. Changes heard before polling
 * starts are kept and woken then.
 */
export class WakeUps {
  private loop?: PollLoop;
  /** Topics of changes heard before polling started (woken then). */
  private early = new Set<string>();

  constructor(private readonly c: WakeUpOptions) {}

  private topicsOf(source: string): readonly string[] | undefined {
    return this.c.registry.sources.get(source)?.topics;
  }

  /** Whether changes wake this source (so its cadence is only the safety poll). */
  woken(source: string): boolean {
    return this.c.changes !== undefined && (this.topicsOf(source)?.length ?? 0) > 0;
  }

  /** How often the source is polled when nothing wakes it. */
  intervalOf(source: string): number {
    return this.woken(source)
      ? Math.max(this.c.bot.pollMs, this.c.safetyPollMs ?? DEFAULT_SAFETY_POLL_MS)
      : this.c.bot.pollMs;
  }

  /**
   * Listens for changes of the bot's user (before the baseline is taken: nothing between the
   * two is missed). The bot's own messages are never its events: its replies wake nothing.
   * Returns the unsubscribe, or undefined without a change feed.
   */
  listen({ userId, ownKey }: { userId: string; ownKey?: string }): (() => void) | undefined {
    return this.c.changes?.subscribe(userId, (topics, byKey) => {
      if (ownKey !== undefined && byKey === ownKey && topics.has('messages')) {
        const rest = new Set([...topics].filter((t) => t !== 'messages'));
        if (rest.size) this.changed(rest);
        return;
      }
      this.changed(topics);
    });
  }

  /** Polling started: changes wake its sources from now on (and those heard before, now). */
  attach(loop: PollLoop): void {
    this.loop = loop;
    if (this.early.size) this.changed(this.early);
    this.early = new Set();
  }

  /** A change concerns the bot's user: poll the sources that look for it (or note it until polling starts). */
  private changed(topics: ReadonlySet<string>): void {
    if (!this.loop) {
      for (const t of topics) this.early.add(t);
      return;
    }
    this.loop.wake(
      this.c.bot.sources.filter((s) => !this.topicsOf(s)?.length || this.topicsOf(s)!.some((t) => topics.has(t))),
    );
  }
}
