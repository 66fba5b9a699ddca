import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import type { Trace } from '../../src/runtime/state/traces.js';
import type { MemoryView } from '../../src/services/bot-memory.js';
import { tempDir } from '../helpers/api.js';
import { eventually, killAll, spawnServe, type ServeChild } from '../helpers/serve-child.js';

const children: ServeChild[] = [];
const temps: Array<() => void> = [];
afterEach(async () => {
  await killAll(children.splice(0));
  for (const t of temps.splice(0)) t();
});

const counter = `name: counter
as: Counter
create_user: true
poll: 1s
rules:
  - id: count
    on: message.received
    do:
      - remember: { seen: "{{ memory.seen | default: 0 | plus: 1 }}", last: "{{ event.content }}" }
      - reply: "seen you {{ memory.seen }} times"
`;

function setup() {
  const tmp = tempDir('pinbot-memory-');
  temps.push(tmp.cleanup);
  const data = join(tmp.dir, 'data');
  const bots = join(tmp.dir, 'bots');
  mkdirSync(bots);
  writeFileSync(join(bots, 'counter.yaml'), counter);
  const config = join(tmp.dir, 'config.yaml');
  writeFileSync(
    config,
    `rate_limits: { enabled: false }\nbots: { dir: ${JSON.stringify(bots)} ` +
      `}\nruntime: { safety_poll: 1s }\nlog: { level: info }\n`,
  );
  return { data, config, args: ['--data', data, '--config', config] };
}

async function botPin(data: string): Promise<string> {
  const b = await eventually(
    async () => {
      const { bots } = (await callAdmin(data, 'bots.status')) as { bots: BotStatus[] };
      return bots.find((x) => x.name === 'counter' && x.last_poll);
    },
    40_000,
    'the bot to poll',
  );
  return /\(([A-Z0-9]{6})\)/.exec(b.message ?? '')![1]!;
}

const cli = (args: string[]) =>
  spawnSync(process.execPath, [join(import.meta.dirname, '../../bin/pinbot.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, PINBOT_FROM_SOURCE: '1' },
  });

describe('memory across kill -9', () => {
  it('killed after the memory write but before the step was recorded: the step runs ' +
    'again and does not count twice; memory survives; the CLI shows and forgets', {
    timeout: 120_000,
  }, async () => {
    const s = setup();
    const first = await spawnServe(s.args, { PINBOT_CRASH_AT: 'after-action:counter:count:0' });
    children.push(first);
    const pin = await botPin(s.data);
    const alice = (await callAdmin(s.data, 'users.add', { name: 'Alice' })) as { api_key: string; pin_code: string };
    await createClient({ baseUrl: first.url, apiKey: alice.api_key }).messages.send({
      recipient_pin: pin,
      content: 'hi',
    });
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    const second = await spawnServe(s.args);
    children.push(second);
    const api = createClient({ baseUrl: second.url, apiKey: alice.api_key });
    const done = await eventually(
      async () => {
        const { traces } = (await callAdmin(s.data, 'bots.trace', { name: 'counter' })) as { traces: Trace[] };
        return traces.find((t) => t.outcome === 'done');
      },
      40_000,
      'the resumed run',
    );
    expect(done).toMatchObject({
      resumed: true,
      steps: [
        { action: 'remember', status: 'done', result: { remembered: { seen: 1, last: 'hi' } } },
        { action: 'reply' },
      ],
    });
    await api.messages.send({ recipient_pin: pin, content: 'again' });
    const [conv] = (await api.conversations.list()).conversations;
    const said = await eventually(
      async () => {
        const m = (await api.conversations.messages(conv!.id)).messages.map((x) => x.content);
        return m.length === 4 ? m : undefined;
      },
      40_000,
      'the second reply',
    );
    expect(said).toEqual(['hi', 'seen you 1 times', 'again', 'seen you 2 times']);

    const view = (await callAdmin(s.data, 'bots.memory', { name: 'counter', person: alice.pin_code })) as MemoryView;
    expect(view.subjects).toMatchObject([
      { scope: 'person', subject: alice.pin_code, entries: { seen: { value: 2 }, last: { value: 'again' } } },
    ]);

    // the CLI on the running server: erase a person
    const out = cli([
      'bots',
      'memory',
      'counter',
      '--person',
      alice.pin_code,
      '--forget-all',
      '--data',
      s.data,
      '--config',
      s.config,
    ]);
    expect(out.stderr).toBe('');
    expect(out.stdout).toMatch(
      /^forgot every key\ncounter: 0 of 10000 keys, 0 of 4194304 bytes\n {2}\(nothing remembered\)\n$/,
    );

    // … and on a stopped one, from the data directory
    await api.messages.send({ recipient_pin: pin, content: 'back' });
    await eventually(
      async () => ((await api.conversations.messages(conv!.id)).messages.length === 6 ? true : undefined),
      40_000,
      'the third reply',
    );
    second.proc.kill('SIGKILL');
    await second.exited;
    const offline = cli(['bots', 'memory', 'counter', '--json', '--data', s.data, '--config', s.config]);
    expect(offline.stderr).toBe('');
    expect(JSON.parse(offline.stdout)).toMatchObject({
      bot: 'counter',
      subjects: [{ subject: alice.pin_code, entries: { seen: { value: 1 }, last: { value: 'back' } } }],
    });
    const wrong = cli(['bots', 'memory', 'counter', '--forget', 'seen', '--data', s.data, '--config', s.config]);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toMatch(/--forget and --forget-all need --person PIN \(or --conversation ID\)/);
  });
});
