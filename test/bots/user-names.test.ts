import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/runtime/registry.js';
import { loadBot } from '../../src/runtime/define/loader.js';
import { formatProblem } from '../../src/util/yaml-errors.js';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/**
 * Users are named the same way everywhere an action names one: by PIN. A display name in `to:`
 * validated, then failed at 08:00 with a 404; now it is refused with file:line:col and the way to
 * write it (issue 20, item 9).
 */

const registry = createRegistry();
const problems = (text: string) => loadBot('bot.yaml', text, { registry }).problems.map(formatProblem);
const head = 'name: t\nas: alice\nlimits: { max_per_transfer: 5 }\nrules:\n  - on: message.received\n    do:\n';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('a user named in an action is a PIN', () => {
  it.each([
    [
      'send_message to: a display name',
      '      - send_message: { to: Bob, content: hi }\n',
      new RegExp(
        String.raw`^bot\.yaml:7:29: rules\.0\.do\.0\.send_message\.to: to: "Bob" is not a ` +
          String.raw`PIN: actions name users by PIN .* — write the user's PIN \(pinbot ` +
          String.raw`users list shows it\), or a template such as "\{\{ ` +
          String.raw`event\.sender\.pin_code \}\}"$`,
      ),
    ],
    [
      'send_money to: a display name',
      '      - send_money: { to: Bob Smith, amount: 1 }\n',
      /rules\.0\.do\.0\.send_money\.to: to: "Bob Smith" is not a PIN/,
    ],
    [
      'introduce pins: a display name',
      '      - introduce: { pins: [ABC123, Carol] }\n',
      /rules\.0\.do\.0\.introduce\.pins\.1: pins: "Carol" is not a PIN/,
    ],
    [
      'create_group pins: a display name',
      '      - create_group: { name: club, pins: [Carol] }\n',
      /rules\.0\.do\.0\.create_group\.pins\.0: pins: "Carol" is not a PIN/,
    ],
    [
      'request_contact: a display name',
      '      - request_contact: Carol\n',
      /rules\.0\.do\.0\.request_contact: request_contact: "Carol" is not a PIN/,
    ],
  ])('%s is refused at validation', (_what, step, re) => {
    const got = problems(head + step);
    expect(
      got.some((p) => re.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('PINs (any case) and templates are accepted', () => {
    expect(
      problems(
        `${head}      - send_message: { to: abc123, content: hi }\n      - ` +
          `send_message: { to: "{{ event.sender.pin_code }}", content: hi }\n      - ` +
          `request_contact: ABC123\n`,
      ),
    ).toEqual([]);
  });

  it('a template that renders a name fails its step saying so, not with a 404', async () => {
    world = await createTestWorld({ users: { alice: {}, desk: {} } });
    await world.addBot(
      `name: desk\nas: desk\nrules:\n  - id: relay\n    on: message.received\n    ` +
        `do:\n      - send_message: { to: "{{ event.content }}", content: relayed }\n`,
    );
    await world.as('alice').send('desk', 'Bob');
    await world.settle();
    expect(world.traces('desk')[0]).toMatchObject({
      outcome: 'failed',
      message: 'step 1 (send_message) failed: to rendered "Bob", which is not a PIN (6 letters or digits)',
    });
  });
});

describe('two users with one display name (item 10)', () => {
  const desk = (name: string) =>
    `name: ${name}\nas: alice\nrules:\n  - id: hi\n    on: message.received\n    do: [{ reply: "hi from ${name}" }]\n`;

  it('a bot that resolved its user keeps it (by id) across a restart; a new one says how to choose', async () => {
    world = await createTestWorld({ users: { alice: {}, bob: {} } });
    await world.addBot(desk('desk'));
    const twin = await world.addUser('Alice'); // a second user named alice, any case
    await world.restart();
    await world.as('bob').send('alice', 'hello');
    await world.settle();
    expect((await world.inbox('bob')).map((m) => m.content)).toEqual(['hi from desk']);
    expect(world.host.status().find((b) => b.name === 'desk')).toMatchObject({ status: 'running' });

    const fresh = await world.addBot(desk('desk2'));
    expect(fresh.status).toBe('waiting');
    expect(fresh.message).toBe(
      `as: 2 users are named "alice" (PINs ${world.users.alice!.pin_code}, ` +
        `${twin.pin_code}): write the PIN of the one you mean instead of the name ` +
        `(pinbot users list)`,
    );
  });
});
