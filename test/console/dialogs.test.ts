import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { configFrom } from '../../src/config/load.js';
import { consoleService } from '../../src/console/service.js';
import type { VirtualClock } from '../../src/clock/virtual-clock.js';
import type { Trace } from '../../src/runtime/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { DialogView } from '../../src/services/bot-dialogs.js';
import { defaultServices } from '../../src/services/index.js';
import { tempDir } from '../helpers/api.js';
import { hostFetch } from '../helpers/host-fetch.js';
import { eventually } from '../helpers/serve-child.js';

// The console's Dialogs section of a bot page: who waits in a dialog, and its End button (issue 29 item 7).
const EVIL = `"'><img src=x onerror=alert(1)><script>alert(2)</script>`;
const SHOP = `name: shop
as: Shop
create_user: true
rules:
  - id: order
    on: message.received
    if: { content: { matches: "^order" } }
    do:
      - ask: { question: ${JSON.stringify(`Size? {{ event.content }}`)}, save: size, timeout: 10m }
      - reply: "got {{ answers.size }}"
`;
const FORM = 'application/x-www-form-urlencoded';

let server: RunningServer | undefined;
let tmp: { dir: string; cleanup: () => void } | undefined;
afterEach(async () => {
  await server?.close();
  tmp?.cleanup();
  server = tmp = undefined;
});

async function serve(): Promise<RunningServer> {
  tmp = tempDir('pinbot-console-dialogs-');
  const bots = join(tmp.dir, 'bots');
  mkdirSync(bots);
  writeFileSync(join(bots, 'shop.yaml'), SHOP);
  server = await startServer({
    dataDir: join(tmp.dir, 'data'),
    config: configFrom({ bots: { dir: bots }, rate_limits: { enabled: false } }),
    host: '127.0.0.1',
    port: 0,
    virtualClock: Date.parse('2026-11-21T12:00:00Z'),
    log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
    services: [...defaultServices(), consoleService()],
  });
  return server;
}

/**
 * Signs in as a browser would (the link's host name); returns a fetch of console paths with the
 * cookie, and the CSRF token. */
async function signIn(s: RunningServer) {
  const link = new URL(((await s.command!('console.link')) as { url: string }).url);
  const cookie = (await hostFetch(link.href)).headers.get('set-cookie')!.split(';')[0]!;
  const at = (path: string, init: Parameters<typeof hostFetch>[1] = {}) =>
    hostFetch(`${link.origin}${path}`, { ...init, headers: { cookie, ...init.headers } });
  const page = await (await at('/console/users')).text();
  return { at, csrf: /name="csrf-token" content="([^"]+)"/.exec(page)![1]! };
}

/** A person named `name` sends "order …" to the shop bot; resolves once they wait in its dialog. */
async function startDialog(s: RunningServer, name: string, content: string): Promise<DialogView> {
  const status = await eventually(
    async () => {
      const { bots } = (await s.command!('bots.status')) as {
        bots: Array<{ name?: string; status: string; message?: string }>;
      };
      return bots.find((b) => b.name === 'shop' && b.status === 'running');
    },
    15_000,
    'the shop bot to run',
  );
  const shopPin = /\(([A-Z0-9]{6})\)/.exec(status.message ?? '')![1]!;
  const { api_key } = (await s.command!('users.add', { name })) as { api_key: string };
  await createClient({ baseUrl: s.url, apiKey: api_key }).messages.send({ recipient_pin: shopPin, content });
  return eventually(
    async () => {
      await (s.clock as VirtualClock).settle(); // the virtual clock runs what is due now
      const { dialogs } = (await s.command!('bots.dialogs', { name: 'shop' })) as { dialogs: DialogView[] };
      return dialogs.find((d) => d.person.startsWith(name) && d.waiting);
    },
    15_000,
    `${name} in a dialog`,
  );
}

describe('console: a bot page shows its dialogs and ends one', () => {
  it('lists who waits (person, rule, question, since, until); End ends it, traced ' +
    'dialog_ended; a bad PIN changes nothing', async () => {
    const s = await serve();
    const d = await startDialog(s, 'Alice', 'order tea');
    expect(d).toMatchObject({ rule: 'order', question: 'Size? order tea' });
    expect(d.until).toBeDefined();
    const { at, csrf } = await signIn(s);
    let page = await (await at('/console/bots/shop')).text();
    const row = /<tr data-dialog="([A-Z0-9]{6})">[\s\S]*?<\/tr>/.exec(page)!;
    expect(row[1]).toBe(d.pin);
    for (const part of [`Alice (${d.pin})`, '<td>order</td>', 'Size? order tea', d.since, d.until!, '>End</button>'])
      expect(row[0]).toContain(part);

    // no CSRF token: refused, the dialog stays
    const post = (o: Record<string, string>) =>
      at('/console/bots/shop/dialogs/end', {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: new URLSearchParams(o).toString(),
      });
    expect((await post({ pin: d.pin })).status).toBe(403);
    // not a PIN: a clear error on the page, the dialog stays
    const bad = await post({ _csrf: csrf, pin: 'nope' });
    expect(bad.status).toBe(303);
    page = await (await at('/console/bots/shop')).text();
    expect(page).toContain('is not a PIN');
    expect(((await s.command!('bots.dialogs', { name: 'shop' })) as { dialogs: DialogView[] }).dialogs).toHaveLength(1);

    const ok = await post({ _csrf: csrf, pin: d.pin, conversation: d.conversation });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/console/bots/shop');
    page = await (await at('/console/bots/shop')).text();
    expect(page).toContain(`ended: Alice (${d.pin})`);
    expect(page).not.toContain('data-dialog=');
    expect(page).toContain('No one is in a dialog with shop now.');
    const { traces } = (await s.command!('bots.trace', { name: 'shop', limit: 20 })) as { traces: Trace[] };
    expect(traces.some((t) => t.reason === 'dialog_ended')).toBe(true);
  }, 60_000);

  it('a display name and a question with markup are shown as text, attributes included', async () => {
    const s = await serve();
    const d = await startDialog(s, `A${EVIL}`, `order ${EVIL}`);
    expect(d.question).toBe(`Size? order ${EVIL}`);
    const { at } = await signIn(s);
    const page = await (await at('/console/bots/shop')).text();
    expect(page).toContain('data-dialog=');
    expect(page).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(page).not.toMatch(/<img|<script>alert|onerror=alert\(1\)>|"'>/);
  }, 60_000);
});
