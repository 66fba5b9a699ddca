import { UnauthorizedError } from '../client/errors.js';
import { withStepTimeout } from '../util/step-timeout.js';
import type { CompiledBot } from './bot.js';
import type { Registry } from './registry.js';
import type { BotState } from './state.js';
import type { BotEvent, SourceContext } from './types.js';

export interface PollOutcome {
  cursors: Record<string, unknown>;
  events: BotEvent[];
  /** Sources that failed this time (their cursors did not move). */
  errors: Array<{ source: string; error: unknown }>;
}

/**
 * Runs the poll sources a bot needs, side by side, from their persisted cursors, each under
 * the step timeout. Events of
 * types no enabled rule listens to are dropped (their cursor still moves). A failed source
 * keeps its cursor, so it reads the same items next time; a 401 is thrown at once.
 */
export async function pollSources(bot: CompiledBot, registry: Registry, state: BotState, ctx: SourceContext, timeoutMs: number): Promise<PollOutcome> {
  const wanted = new Set(bot.rules.filter((r) => r.enabled).flatMap((r) => r.triggers.map((t) => t.def.name)));
  const out: PollOutcome = { cursors: {}, events: [], errors: [] };
  const results = await Promise.allSettled(
    bot.sources.map(async (name) => {
      const source = registry.sources.get(name)!;
      // each source is held work of its own: its waits (pacing, Retry-After) park only it
      const release = ctx.clock.hold(`bot ${bot.name}: poll ${name}`);
      try {
        // under a timeout and an error boundary: a hung or throwing source fails this poll of it only
        const polled = await withStepTimeout(`poll source ${name}`, timeoutMs, (signal) => source.poll({ ...ctx, signal }, state.cursor(name)), ctx.signal);
        return { name, ...polled };
      } finally {
        release();
      }
    }),
  );
  results.forEach((r, i) => {
    if (r.status === 'rejected') {
      if (r.reason instanceof UnauthorizedError) throw r.reason;
      out.errors.push({ source: bot.sources[i]!, error: r.reason });
      return;
    }
    out.cursors[r.value.name] = r.value.cursor;
    for (const e of r.value.events) if (wanted.has(e.type)) out.events.push({ ...e, at: ctx.clock.now() });
  });
  return out;
}
