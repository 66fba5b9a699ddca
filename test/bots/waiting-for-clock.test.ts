import { afterEach, describe, expect, it } from 'vitest';
import { botAdminCommands } from '../../src/services/bots.js';
import { formatBotLine } from '../../src/cli/bots-commands.js';
import { botWorld, ECHO_BOT, type BotWorld } from '../helpers/bots.js';

let w: BotWorld;
afterEach(() => w?.close());

describe('a bot on a virtual clock (serve --virtual-clock)', () => {
  it(
    'says it is waiting for the clock while a change is held until the clock moves: ' + 'bots list, trace, console',
    async () => {
      w = await botWorld({ bots: { 'echo.yaml': ECHO_BOT } });
      await w.host.start();
      await w.host.runner('echo')!.started;
      await w.clock.settle();
      const alice = await w.user('Alice');
      expect(w.host.status()[0]!.message).not.toMatch(/waiting for the clock/);

      await alice.api.messages.send({ recipient_pin: w.botUser('echo').pin_code, content: 'hi' });
      const held =
        'waiting for the clock: a change to poll (1 source) is held until the virtual ' +
        'clock moves — pinbot clock advance 1s';
      const [status] = w.host.status();
      expect(status).toMatchObject({ status: 'running', message: expect.stringContaining(held) });
      expect(formatBotLine(status!)).toContain(held);
      const commands = botAdminCommands(
        () => w.host,
        () => undefined,
      );
      expect(await commands['bots.trace']!({} as never, { name: 'echo' })).toEqual({
        bot: 'echo',
        traces: [],
        waiting: held,
      });

      // the clock moves: the change is polled, the bot answers, nothing waits
      await w.clock.settle();
      expect(w.host.status()[0]!.message).not.toMatch(/waiting/);
      expect(await commands['bots.trace']!({} as never, { name: 'echo' })).not.toHaveProperty('waiting');
      const [conv] = (await alice.api.conversations.list()).conversations;
      expect((await alice.api.conversations.messages(conv!.id)).messages.at(-1)!.content).toBe('echo hi');
    },
  );

  it('bots list does not call a bot whose last runs failed just "running"', async () => {
    w = await botWorld({
      bots: {
        'bad.yaml': ECHO_BOT.replace('name: echo', 'name: bad').replace(
          '- reply: "echo {{ event.content }}"',
          '- send_message: { to: ZZZZZZ, content: x }',
        ),
      },
    });
    await w.host.start();
    await w.host.runner('bad')!.started;
    const alice = await w.user('Alice');
    for (const text of ['a', 'b']) {
      await alice.api.messages.send({ recipient_pin: w.botUser('bad').pin_code, content: text });
      await w.clock.settle();
      await w.host.runner('bad')!.idle();
    }
    expect(w.host.status()[0]!.message).toMatch(
      /^as Echo \(\w+\); its last 2 runs failed \(api\) — pinbot bots trace bad$/,
    );
  });
});
