import { afterEach, describe, expect, it } from 'vitest';
import { createTestWorld, type TestWorld } from '../../src/testing/world.js';

/** Templates are strict at run time: a field the event does not have fails the step, traced. */

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('strict variables at run time', () => {
  it(
    'a template that reads a field this event lacks fails its step with the reason, ' + 'instead of rendering empty',
    async () => {
      world = await createTestWorld({ users: { alice: { balance: 10 }, desk: {} } });
      // valid: message events have content (the rule also listens to transfers, which have not)
      await world.addBot(`name: desk
as: desk
rules:
  - id: echo
    on: [message.received, transfer.received]
    do:
      - reply: "you said {{ event.content }}"
  - id: note
    on: transfer.received
    do:
      - reply: "note: {{ event.note | default: 'none' }}"
`);
      await world.as('alice').pay('desk', 2);
      await world.advance('10s');
      expect((await world.inbox('alice')).map((m) => m.content)).toEqual(['note: none']);
      const echo = world.traces('desk').find((t) => t.rule === 'echo')!;
      expect(echo).toMatchObject({ outcome: 'failed', reason: 'failed' });
      expect(echo.message).toContain('event.content is not set: transfer.received events have no "content"');
    },
  );
});
