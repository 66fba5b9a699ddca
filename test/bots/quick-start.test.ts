import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callAdmin } from '../../src/admin/socket.js';
import { createClient } from '../../src/client/client.js';
import type { BotStatus } from '../../src/runtime/host/bot-host.js';
import { tempDir } from '../helpers/api.js';
import { eventually, spawnServe, type ServeChild } from '../helpers/serve-child.js';

let child: ServeChild | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  if (child && child.proc.exitCode === null) {
    child.proc.kill('SIGTERM');
    await child.exited;
  }
  cleanup?.();
});

describe('quick start: `npm start` with the shipped examples on a fresh data directory', () => {
  it('a tip of 5 sent with curl is accepted and thanked, and `pinbot bots trace tip-jar` shows the run', {
    timeout: 120_000,
  }, async () => {
    const tmp = tempDir('pinbot-quickstart-');
    cleanup = tmp.cleanup;
    const data = join(tmp.dir, 'data');
    child = await spawnServe(['--data', data]); // ./config.yaml and ./bots, as npm start
    // the shipped examples (a project's own bots beside them do not count)
    const examples = ['faq', 'greeter', 'refunder', 'reminder', 'tip-jar'];
    const status = await eventually(
      async () => {
        const { bots } = (await callAdmin(data, 'bots.status')) as { bots: BotStatus[] };
        const mine = bots.filter((b) => examples.includes(b.name ?? ''));
        // running: their users' changes wake them (a first poll of messages waits for one)
        return mine.length === 5 && mine.every((b) => b.status === 'running') ? mine : undefined;
      },
      60_000,
      'the five example bots to run',
    );
    expect(status.map((b) => [b.name, b.status]).sort()).toEqual([
      ['faq', 'running'],
      ['greeter', 'running'],
      ['refunder', 'running'],
      ['reminder', 'running'],
      ['tip-jar', 'running'],
    ]);
    const jarPin = /\(([A-Z0-9]{6})\)/.exec(status.find((b) => b.name === 'tip-jar')!.message!)![1]!;
    const bob = (await callAdmin(data, 'users.add', { name: 'Bob', balance: '20' })) as { api_key: string };
    // curl -X POST $URL/api/v1/wallet/send -H "X-API-Key: …" -d '{"recipient_pin":"…","amount":5}'
    const res = await fetch(`${child.url}/api/v1/wallet/send`, {
      method: 'POST',
      headers: { 'X-API-Key': bob.api_key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ recipient_pin: jarPin, amount: 5 }),
    });
    expect(res.status).toBe(201);
    const { transaction } = (await res.json()) as { transaction: { id: string } };
    const api = createClient({ baseUrl: child.url, apiKey: bob.api_key });
    const thanked = await eventually(
      async () => {
        const [conv] = (await api.conversations.list()).conversations;
        return conv?.last_message?.content;
      },
      30_000,
      'the thank-you',
    );
    expect(thanked).toBe('Thank you Bob for the tip of 5!');
    expect((await api.wallet.transactions()).transactions.find((t) => t.id === transaction.id)!.status).toBe(
      'accepted',
    );
    const trace = spawnSync(process.execPath, ['bin/pinbot.js', 'bots', 'trace', 'tip-jar', '--data', data], {
      encoding: 'utf8',
    });
    expect(trace.status).toBe(0);
    expect(trace.stdout).toMatch(
      /tip-jar › thank-small-tips {2}transfer\.received 5 from Bob \([A-Z0-9]{6}\) {2}→ done/,
    );
    expect(trace.stdout).toContain('if ✓ amount max 10  (amount = 5)');
    expect(trace.stdout).toContain('do ✓ accept → accepted');
    expect(trace.stdout).toContain('do ✓ reply → "Thank you Bob for the tip of 5!"');
    expect(trace.stdout).toMatch(/tip-jar › refuse-large-tips .*NOT RUN: condition_false/);
  });
});
