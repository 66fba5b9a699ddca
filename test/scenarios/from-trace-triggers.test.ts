import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import type { Trace } from '../../src/runtime/index.js';
import { FromTraceError, SCENARIO_EVENTS, scenarioFromTrace } from '../../src/scenario/from-trace.js';
import { loadAll, runAll } from '../../src/scenario/run-all.js';
import { createTestWorld } from '../../src/testing/world.js';
import { tempDir } from '../helpers/api.js';

/**
 * Runs of every trigger a scenario can cause — a contact request, a contact added, an
 * introduction received and completed, a transfer the bot sent accepted or declined — each turned into a
 * scenario: it passes against the unchanged bot and fails once the bot's answer is broken. A
 * schedule's run is refused, naming the events that can be recreated.
 */
const tmp = tempDir('pinbot-from-trace-triggers-');
afterAll(() => tmp.cleanup());

const SOCIAL = `name: social
as: Social Club
rules:
  - id: welcome
    on: contact_request.received
    do:
      - accept
      - reply: "Hello {{ event.requester.display_name }}, {{ me.display_name }} is your contact now"
  - id: added
    on: contact.added
    do:
      - reply: "Glad to be in touch, {{ event.contact.display_name }}"
  - id: intro
    on: introduction.received
    do:
      - accept
      - reply: "Thanks {{ event.introducer.display_name }} for the introduction"
  - id: intro-done
    on: introduction.completed
    do:
      - reply: "Hello, {{ event.introducer.display_name }} introduced us"
  - id: paid
    on: transfer.accepted
    do:
      - reply: "Thank you for accepting {{ event.amount }}"
  - id: refused
    on: transfer.declined
    do:
      - reply: "Sorry you did not want {{ event.amount }}"
  - id: morning
    on: { schedule: "0 9 * * *" }
    do:
      - set: { mornings: 1 }
`;
/** The same bot answering otherwise: every reply says something else. */
const BROKEN = SOCIAL.replace(/reply: "/g, 'reply: "Oops. ');

async function runFile(file: string) {
  const { scenarios, problems } = await loadAll([file]);
  expect(problems).toEqual([]);
  return (await runAll(scenarios, { parallel: 1 })).results[0]!;
}

/** The traces of the first event of a type (each rule's run of it). */
const runOf = (traces: Trace[], type: string) => {
  const t = traces.find((x) => x.event.type === type && x.outcome === 'done');
  if (!t) throw new Error(`no run of ${type} in ${traces.map((x) => x.event.type).join(', ')}`);
  return t.event.key;
};

describe('runs of every trigger a scenario can cause, turned into scenarios', () => {
  it('pass against the unchanged bot and fail against a broken one; a schedule is refused', async () => {
    const project = join(tmp.dir, 'project');
    mkdirSync(join(project, 'bots'), { recursive: true });
    mkdirSync(join(project, 'scenarios'));
    writeFileSync(join(project, 'config.yaml'), ''); // the project root: scenarios read files inside it
    const botFile = join(project, 'bots/social.yaml');
    writeFileSync(botFile, SOCIAL);
    const world = await createTestWorld({
      users: { alice: {}, bob: {}, carol: {}, 'Social Club': { balance: 10 } },
    });
    const written: Array<[string, string]> = [];
    try {
      await world.addBot(SOCIAL);
      const { alice, bob, carol } = world.users;
      const social = world.users['Social Club'];
      await alice!.api.contacts.request({ pin_code: social!.pin_code });
      await world.settle();
      const intro = await bob!.api.introductions.create({
        participant_pins: [social!.pin_code, carol!.pin_code],
        message: 'you two should talk',
      });
      await world.settle();
      await carol!.api.introductions.accept(intro.id);
      await world.settle();
      const tx = await social!.api.wallet.send({ recipient_pin: carol!.pin_code, amount: 2, note: 'for you' });
      await carol!.api.wallet.accept(tx.transaction.id);
      await world.settle();
      const refused = await social!.api.wallet.send({ recipient_pin: alice!.pin_code, amount: 3 });
      await alice!.api.wallet.decline(refused.transaction.id);
      await world.settle();
      await world.advance('1d'); // the schedule fires
      const traces = world.traces('social');

      for (const type of SCENARIO_EVENTS.filter((t) => !['transfer.received', 'message.received'].includes(t))) {
        const text = scenarioFromTrace({ traces, run: runOf(traces, type), botFile: '../bots/social.yaml' });
        const file = join(project, `scenarios/${type.replace('.', '-')}.yaml`);
        writeFileSync(file, text);
        written.push([type, file]);
      }
      expect(written.map(([t]) => t)).toEqual([
        'transfer.accepted',
        'transfer.declined',
        'contact_request.received',
        'contact.added',
        'introduction.received',
        'introduction.completed',
      ]);
      const doc = (type: string) => parse(scenarioFromTrace({ traces, run: runOf(traces, type), botFile: 'x' }));
      // what each recreates, and what it expects
      expect(doc('contact_request.received').steps).toEqual([
        {
          name: 'alice asks the bot to be a contact',
          as: 'alice',
          request: 'POST /contacts/request',
          body: { pin_code: "{{ users['Social Club'].pin_code }}" },
          expect: { status: 201 },
        },
        { expect_event: { contact_request: { from: 'alice', to: 'Social Club', status: 'accepted' }, within: '1m' } },
        {
          expect_event: {
            message: { from: 'Social Club', to: 'alice', content: 'Hello alice, Social Club is your contact now' },
            within: '1m',
          },
        },
      ]);
      expect(
        doc('introduction.received').steps.map((s: Record<string, unknown>) => s.name ?? Object.keys(s)[0]),
      ).toEqual(['bob introduces the bot', 'carol accepts too', 'expect_event', 'expect_event']);
      expect(doc('introduction.completed').steps.at(-1)).toEqual({
        expect_event: {
          message: { from: 'Social Club', to: 'carol', content: 'Hello, bob introduced us' },
          within: '1m',
        },
      });
      expect(doc('transfer.accepted').users).toEqual({ carol: {}, 'Social Club': { balance: 2 } });

      // the schedule cannot be caused by a scenario: refused, naming what can
      expect(() => scenarioFromTrace({ traces, run: runOf(traces, 'schedule'), botFile: 'x' })).toThrow(
        new FromTraceError(
          `a schedule event cannot be recreated by a scenario (a scenario can cause ` +
            `${SCENARIO_EVENTS.join(', ')}): write its steps by hand — see ` +
            `docs/scenarios.md`,
        ),
      );
    } finally {
      await world.close();
    }

    for (const [type, file] of written) {
      const r = await runFile(file);
      expect([type, r.status, r.steps.find((s) => s.status === 'failed')?.error]).toEqual([type, 'passed', undefined]);
    }
    writeFileSync(botFile, BROKEN);
    for (const [type, file] of written) {
      const r = await runFile(file);
      expect([type, r.status]).toEqual([type, 'failed']);
      expect(r.steps.find((s) => s.status === 'failed')?.label).toMatch(/expect_event message/);
    }
  }, 240_000);
});
