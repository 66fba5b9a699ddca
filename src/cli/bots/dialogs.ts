import { askServer } from '../admin-client.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import type { DialogView } from '../../services/bot-dialogs.js';
import { serverRunning } from './shared.js';

/** A dialog as one line: who, since when, which rule and step, until when its answer is due. */
export function formatDialog(d: DialogView): string {
  const where = d.conversation === 'direct' ? 'direct' : d.conversation;
  const state = d.waiting ? `waiting until ${d.until ?? '?'}` : 'handling an answer';
  const asked = d.question ? `  asked ${JSON.stringify(d.question.slice(0, 60))}` : '';
  return (
    `${d.person.padEnd(24)} since ${d.since}  rule ${d.rule} step ${d.step}${asked}  ` +
    `${state}  in ${where}${d.queued ? `  (${d.queued} unread)` : ''}`
  );
}

/**
 * `pinbot bots dialogs NAME` (who is in a dialog with a bot now, and since when) and
 * `pinbot bots end-dialog NAME --pin PIN` (ends that person's waiting dialog). Both ask the
 * running server: dialogs live with the bots that hold them.
 */
export function registerDialogCommands(bots: Command): void {
  const running = (data: string) => {
    const dir = resolve(data);
    if (!serverRunning(dir))
      throw new AdminError(`no server runs on ${dir}; dialogs live with the bots of a running \`pinbot serve\``);
    return dir;
  };
  bots
    .command('dialogs')
    .description('who is in a dialog (ask) with a bot now, since when, and until when their answer is due')
    .argument('<name>')
    .option('--data <dir>', 'data directory', './data')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { data: string; json?: boolean }) => {
      const r = await askServer(running(opts.data), 'bots.dialogs', { name });
      if (opts.json) return void process.stdout.write(JSON.stringify(r) + '\n');
      if (r.dialogs.length === 0) return void process.stdout.write(`nobody is in a dialog with ${name}\n`);
      process.stdout.write(r.dialogs.map(formatDialog).join('\n') + '\n');
    });
  bots
    .command('end-dialog')
    .description(
      "ends a person's waiting dialog with a bot (traced dialog_ended; their next message is an ordinary one)",
    )
    .argument('<name>')
    .requiredOption('--pin <pin>', 'the person (their PIN)')
    .option('--conversation <id>', 'only the dialog in this conversation')
    .option('--data <dir>', 'data directory', './data')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { pin: string; conversation?: string; data: string; json?: boolean }) => {
      const r = await askServer(running(opts.data), 'bots.end_dialog', {
        name,
        pin: opts.pin,
        conversation: opts.conversation,
      });
      if (opts.json) return void process.stdout.write(JSON.stringify(r) + '\n');
      process.stdout.write(r.ended.map((d) => `ended: ${formatDialog(d)}`).join('\n') + '\n');
    });
}
