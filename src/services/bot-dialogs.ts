import { AdminError, type AdminCommand } from '../admin/commands.js';
import type { BotHost, DialogRecord } from '../runtime/index.js';

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
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** A dialog record as shown. */
export function dialogView(r: DialogRecord): DialogView {
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
  };
}

/**
 * The admin commands of dialogs (issue 29): `bots.dialogs` lists who is in a dialog with a bot
 * now and since when; `bots.end_dialog` ends a person's waiting dialogs (traced `dialog_ended`).
 * They ask the process that runs the bot.
 */
export function dialogCommands(host: () => BotHost | undefined): Record<string, AdminCommand> {
  const runnerOf = (args: Record<string, unknown>) => {
    const name = String(args.name ?? '');
    const runner = host()?.runner(name);
    if (!runner) throw new AdminError(`no bot named ${name} runs in this process; see \`pinbot bots list\``);
    return { name, runner };
  };
  return {
    'bots.dialogs': async (_ctx, args) => {
      const { name, runner } = runnerOf(args);
      return { bot: name, dialogs: runner.dialogs().map(dialogView) };
    },
    'bots.end_dialog': async (_ctx, args) => {
      const { name, runner } = runnerOf(args);
      const pin = String(args.pin ?? '')
        .trim()
        .toUpperCase();
      if (!/^[A-Z0-9]{6}$/.test(pin))
        throw new AdminError(
          `--pin: "${String(args.pin ?? '')}" is not a PIN (6 letters or digits); \`pinbot bots dialogs ${name}\` lists who is in a dialog`,
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
      return { bot: name, ended: ended.map(dialogView) };
    },
  };
}
