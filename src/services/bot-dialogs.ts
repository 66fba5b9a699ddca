import { AdminError, type CommandTable, defineCommand } from '../admin/commands.js';
import { BotInbox, type BotHost, type DialogRecord } from '../runtime/index.js';
import type { ReadView } from '../store/core/types.js';

/** One dialog as `pinbot bots dialogs` and the console show it. */
export interface DialogView {
  person: string;
  pin: string;
  conversation: string;
  rule: string;
  step: number;
  since: string;
  asked_at?: string;
  until?: string;
  waiting: boolean;
  queued: number;
  /** The question last sent, as rendered (from the run's write-ahead record), when known. */
  question?: string;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The question an ask step sent, as written ahead with its run. Internal. */
function questionOf(r: DialogRecord, read: ReadView | undefined): string | undefined {
  const sp = read?.col(BotInbox).get(r.entry)?.runs[r.rule]?.steps[r.step];
  // an ask step's rendered args, or a plugin step's waiting ctx.ask
  const q = sp?.asking?.question ?? (sp?.args as { question?: unknown } | undefined)?.question;
  return typeof q === 'string' ? q : undefined;
}

/** A dialog record as shown (with its question when the store is given). */
export function dialogView(r: DialogRecord, read?: ReadView): DialogView {
  const question = questionOf(r, read);
  return {
    person: `${r.person.display_name} (${r.person.pin_code})`,
    pin: r.person.pin_code,
    conversation: r.conversation,
    rule: r.rule,
    step: r.step,
    since: iso(r.since)!,
    asked_at: iso(r.asked_at),
    until: iso(r.until),
    waiting: r.waiting,
    queued: r.queue.length,
    ...(question === undefined ? {} : { question }),
  };
}

/**
 * The admin commands of dialogs (issue 29): `bots.dialogs` lists who is in a dialog with a bot
 * now and since when; `bots.end_dialog` ends a person's waiting dialogs (traced `dialog_ended`).
 * They ask the process that runs the bot.
 */
export function dialogCommands(host: () => BotHost | undefined) {
  const runnerOf = (args: Record<string, unknown>) => {
    const name = String(args.name ?? '');
    const runner = host()?.runner(name);
    if (!runner) throw new AdminError(`no bot named ${name} runs in this process; see \`pinbot bots list\``);
    return { name, runner };
  };
  return {
    'bots.dialogs': defineCommand<{ name: string }>()(async (ctx, args) => {
      const { name, runner } = runnerOf(args);
      return { bot: name, dialogs: runner.dialogs().map((d) => dialogView(d, ctx.store.read)) };
    }),
    'bots.end_dialog': defineCommand<{ name: string; pin: string; conversation?: string }>()(async (_ctx, args) => {
      const { name, runner } = runnerOf(args);
      const pin = String(args.pin ?? '')
        .trim()
        .toUpperCase();
      if (!/^[A-Z0-9]{6}$/.test(pin))
        throw new AdminError(
          `--pin: "${String(args.pin ?? '')}" is not a PIN (6 letters or digits); ` +
            `\`pinbot bots dialogs ${name}\` lists who is in a dialog`,
        );
      const had = runner.dialogs().filter((d) => d.person.pin_code === pin);
      if (had.length === 0)
        throw new AdminError(`${pin} is in no dialog with ${name}; \`pinbot bots dialogs ${name}\` lists who is`);
      const ended = await runner.endDialogs(
        pin,
        args.conversation === undefined ? undefined : String(args.conversation),
      );
      if (ended.length === 0)
        throw new AdminError(`${pin}'s dialog with ${name} is handling an answer right now; try again in a moment`);
      return { bot: name, ended: ended.map((d) => dialogView(d)) };
    }),
  } satisfies CommandTable;
}
