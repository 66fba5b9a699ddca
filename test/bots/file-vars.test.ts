import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { AdminError } from '../../src/admin/errors.js';
import { botVarsCommand, formatBotVars } from '../../src/services/bot-vars.js';
import { formatTrace } from '../../src/runtime/index.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

/** A bot with a cap in its file; "raise" sets it by a rule, every message counts. */
const capped = (cap: number, word = 'cap') => `name: capped
as: Capped
create_user: true
vars: { cap: ${cap}, greeting: hi }
rules:
  - id: raise
    on: message.received
    if: { content: { equals: raise } }
    do:
      - set: { cap: 7 }
  - id: say
    on: message.received
    if: { not: { content: { equals: raise } } }
    do:
      - reply: "${word} {{ vars.cap }} count {{ vars.count | default: 0 }}"
      - set: { count: "{{ vars.count | default: 0 | plus: 1 }}" }
`;

describe('vars: edited in the bot file', () => {
  it(
    'a changed value wins on reload, values set by rules stay, and the start says so in ' + 'its log line and trace',
    async () => {
      const lines: string[] = [];
      const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
      w = await botWorld({ bots: { 'capped.yaml': capped(10) }, host: { log } });
      await w.host.start();
      await w.host.runner('capped')!.started;
      expect(w.host.status()[0]).toMatchObject({ status: 'running' });
      const alice = await w.user('Alice');
      const pin = w.botUser('capped').pin_code;
      const say = async (text: string) => {
        await alice.api.messages.send({ recipient_pin: pin, content: text });
        await w.poll('capped');
        await w.host.runner('capped')!.idle();
        const [conv] = (await alice.api.conversations.list()).conversations;
        return (await alice.api.conversations.messages(conv!.id)).messages.at(-1)!.content;
      };
      expect(await say('a')).toBe('cap 10 count 0');

      w.writeBot('capped.yaml', capped(3));
      await w.host.reload();
      await w.host.runner('capped')!.started;
      // the file changed cap: it wins; count (written by set:) stays
      expect(await say('b')).toBe('cap 3 count 1');
      const note = 'vars.cap: 10 → 3 from the file';
      const started = lines
        .map((l) => JSON.parse(l) as { msg: string; vars?: unknown })
        .filter((l) => l.msg.startsWith('bot capped running'));
      expect(started.at(-1)!.msg).toMatch(new RegExp(`^bot capped running as Capped \\(\\w+\\); ${note}$`));
      expect(started.at(-1)!.vars).toEqual([{ key: 'cap', from: 10, to: 3 }]);
      const trace = w.host.traces('capped', 20)!.find((t) => t.event.type === 'vars')!;
      expect(trace).toMatchObject({ rule: '(file)', outcome: 'done', message: note });
      expect(formatTrace(trace)).toContain(`capped › (file)  the file changed vars  → done (0 ms) — ${note}`);

      // a rule sets cap; a reload that leaves cap as it was in the file keeps the rule's value
      await say('raise');
      w.writeBot('capped.yaml', capped(3, 'limit'));
      await w.host.reload();
      await w.host.runner('capped')!.started;
      expect(await say('c')).toBe('limit 7 count 2');
      expect(w.host.traces('capped', 20)!.filter((t) => t.event.type === 'vars')).toHaveLength(1);

      // `pinbot bots vars` shows them, and --reset sets them back to the file's
      const ctx = { store: w.server.store, env: w.server.env, extra: { 'bots.vars': botVarsCommand } };
      const shown = await runAdminCommand(ctx, 'bots.vars', { name: 'capped' });
      expect(shown).toEqual({
        bot: 'capped',
        vars: { cap: 7, greeting: 'hi', count: 3 },
        file_vars: { cap: 3, greeting: 'hi' },
      });
      expect(formatBotVars(shown as never)).toBe(
        'capped:\n  vars.cap = 7  (the file says 3; set by a rule since)\n  vars.count ' +
          '= 3  (not in the file: set by a rule)\n  vars.greeting = "hi"\n',
      );
      expect(await runAdminCommand(ctx, 'bots.vars', { name: 'capped', reset: true })).toMatchObject({
        vars: { cap: 3, greeting: 'hi' },
        reset: true,
      });
      expect(await say('d')).toBe('limit 3 count 0');
      await expect(runAdminCommand(ctx, 'bots.vars', { name: 'caped' })).rejects.toThrow(
        new AdminError(
          'no bot named caped has variables in this store; did you mean "capped"?: a ' +
            'bot has them once it has started (a bot of a remote server keeps them under ' +
            'DATA/bots/remote); see `pinbot bots list`',
        ),
      );
    },
  );
});
