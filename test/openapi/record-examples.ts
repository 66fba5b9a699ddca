import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { runAdminCommand } from '../../src/admin/commands.js';
import { operationId } from '../../src/api/openapi.js';
import type { RecordedCall, RecordedExamples } from '../../src/api/openapi/examples.js';
import { allRoutes } from '../../src/api/routes.js';
import { configFrom } from '../../src/config/load.js';
import type { VirtualClock } from '../../src/clock/virtual-clock.js';
import { startServer } from '../../src/server.js';

interface Person {
  name: string;
  pin: string;
  key: string;
}

type Json = any; // the answers are read field by field below

/**
 * Runs a real `pinbot serve` (in this process, on a temp dir and a virtual clock) through a
 * story that reaches every operation of /api/v1 — successes and typical refusals — and records
 * each request and answer: the examples of /openapi.json (`npm run openapi-examples` writes
 * them to src/api/openapi/examples.json). Deterministic but for ids.
 *
 * @example
 * const recorded = await recordExamples();
 */
export async function recordExamples(): Promise<RecordedExamples> {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-examples-'));
  const log = pino({ level: 'silent' });
  const config = configFrom({
    rate_limits: { enabled: true, general: { limit: 1000, window: '1m' }, intros: { limit: 2, window: '1h' } },
  });
  const server = await startServer({
    dataDir: dir,
    config,
    port: 0,
    log,
    services: [],
    virtualClock: Date.parse('2026-11-21T16:12:24Z'),
  });
  const clock = server.clock as VirtualClock;
  const operations: Record<string, RecordedCall[]> = {};
  const routeOf = new Map(allRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r]));
  try {
    const admin = { store: server.store, env: server.env, log };
    const person = async (name: string, balance?: number): Promise<Person> => {
      const r = (await runAdminCommand(admin, 'users.add', { name, ...(balance ? { balance } : {}) })) as {
        pin_code: string;
        api_key: string;
      };
      return { name, pin: r.pin_code, key: r.api_key };
    };
    const [alice, bob, carol, dave] = [
      await person('Alice', 25),
      await person('Bob', 10),
      await person('Carol'),
      await person('Dave'),
    ];

    let keys = 0;
    /** One request, recorded under its operation. */
    const call = async (
      who: Person | undefined,
      method: string,
      template: string,
      o: {
        name: string;
        params?: Record<string, string>;
        query?: Record<string, string | number>;
        body?: unknown;
        idempotencyKey?: string;
      },
    ): Promise<Json> => {
      clock.set(clock.now() + 1500);
      const route = routeOf.get(`${method} ${template}`);
      if (!route) throw new Error(`no route ${method} ${template}`);
      const path = template.replace(/:(\w+)/g, (_m, k: string) => encodeURIComponent(o.params![k]!));
      const qs = o.query
        ? `?${new URLSearchParams(Object.entries(o.query).map(([k, v]) => [k, String(v)])).toString()}`
        : '';
      const headers: Record<string, string> = {};
      if (who) headers['X-API-Key'] = who.key;
      const recordedHeaders: Record<string, string> = {};
      if (method === 'POST') {
        headers['Content-Type'] = 'application/json';
        headers['Idempotency-Key'] = recordedHeaders['Idempotency-Key'] =
          o.idempotencyKey ?? `${o.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-${++keys}`;
      }
      const res = await fetch(`${server.url}/api/v1${path}${qs}`, {
        method,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
      });
      const response = (await res.json()) as Json;
      (operations[operationId(route)] ??= []).push({
        name: o.name,
        ...(o.params ? { params: o.params } : {}),
        ...(o.query ? { query: o.query } : {}),
        ...(method === 'POST' ? { headers: recordedHeaders } : {}),
        ...(o.body !== undefined ? { body: o.body } : {}),
        status: res.status,
        response,
      });
      return response;
    };

    // Profile and wallet.
    const me = await call(alice, 'GET', '/me', { name: 'Alice' });
    await call(undefined, 'GET', '/me', { name: 'no key' });
    const balance = await call(alice, 'GET', '/wallet/balance', { name: 'balance' });
    const trial = await call(alice, 'GET', '/wallet/subscription', { name: 'trial' });
    const tip = await call(alice, 'POST', '/wallet/send', {
      name: 'a tip',
      body: { recipient_pin: bob.pin, amount: 5, note: 'for the bot' },
    });
    const lunch = await call(alice, 'POST', '/wallet/send', {
      name: 'lunch',
      body: { recipient_pin: bob.pin, amount: 12.5, note: 'lunch' },
    });
    await call(carol, 'POST', '/wallet/send', { name: 'too much', body: { recipient_pin: bob.pin, amount: 3 } });
    await call(alice, 'POST', '/wallet/send', {
      name: 'three decimals',
      body: { recipient_pin: bob.pin, amount: 1.005 },
    });
    await call(bob, 'GET', '/wallet/pending', { name: 'two transfers' });
    await call(bob, 'POST', '/wallet/transactions/:id/accept', { name: 'accept', params: { id: tip.transaction.id } });
    await call(bob, 'POST', '/wallet/transactions/:id/accept', {
      name: 'again',
      params: { id: tip.transaction.id },
      idempotencyKey: 'accept-again',
    });
    await call(alice, 'POST', '/wallet/transactions/:id/accept', {
      name: 'the sender',
      params: { id: lunch.transaction.id },
    });
    await call(bob, 'POST', '/wallet/transactions/:id/decline', {
      name: 'decline',
      params: { id: lunch.transaction.id },
    });
    const page = await call(alice, 'GET', '/wallet/transactions', { name: 'first page', query: { limit: 2 } });
    await call(alice, 'GET', '/wallet/transactions', {
      name: 'next page',
      query: { limit: 2, before: page.transactions[1].id },
    });

    // Messaging.
    const hi = await call(alice, 'POST', '/messages/send', {
      name: 'hi Bob',
      body: { recipient_pin: bob.pin, content: 'Hi Bob! Thanks for the bot.' },
    });
    await call(alice, 'POST', '/conversations', { name: 'direct (exists)', body: { participant_pin: bob.pin } });
    await call(carol, 'POST', '/conversations', { name: 'direct (new)', body: { participant_pin: dave.pin } });
    const group = await call(alice, 'POST', '/conversations', {
      name: 'group',
      body: { participant_pins: [bob.pin, carol.pin], name: 'Bot builders' },
    });
    await call(alice, 'POST', '/conversations', {
      name: 'unknown PIN',
      body: { participant_pins: [bob.pin, 'ZZZZZZ'], name: 'Oops' },
    });
    await call(carol, 'POST', '/conversations/:id/messages', {
      name: 'to the group',
      params: { id: group.id },
      body: { content: 'Hello builders!' },
    });
    await call(carol, 'POST', '/conversations/:id/messages', {
      name: 'empty',
      params: { id: group.id },
      body: { content: '   ' },
    });
    const convs = await call(alice, 'GET', '/conversations', { name: 'first page', query: { limit: 1 } });
    await call(alice, 'GET', '/conversations', { name: 'next page', query: { limit: 1, before: convs.next_before } });
    await call(bob, 'GET', '/conversations/:id', { name: 'the group', params: { id: group.id } });
    await call(dave, 'GET', '/conversations/:id', { name: 'not a member', params: { id: group.id } });
    await call(bob, 'GET', '/conversations/:id/messages', {
      name: 'since 0',
      params: { id: hi.conversation_id },
      query: { since: 0, limit: 50 },
    });
    const inbox = await call(bob, 'GET', '/messages', { name: 'first read', query: { since: 0, limit: 50 } });
    await call(bob, 'GET', '/messages', { name: 'next read', query: { after: inbox.next_after, limit: 50 } });
    await call(carol, 'POST', '/conversations/:id/leave', { name: 'leave', params: { id: group.id } });
    await call(alice, 'POST', '/conversations/:id/leave', { name: 'a direct one', params: { id: hi.conversation_id } });

    // Introductions.
    const intro = await call(alice, 'POST', '/introductions', {
      name: 'Bob and Dave',
      body: { participant_pins: [bob.pin, dave.pin], message: 'You both build bots!' },
    });
    const other = await call(alice, 'POST', '/introductions', {
      name: 'Carol and Dave',
      body: { participant_pins: [carol.pin, dave.pin] },
    });
    await call(alice, 'POST', '/introductions', {
      name: 'over the hourly limit',
      body: { participant_pins: [carol.pin, bob.pin] },
    });
    await call(dave, 'GET', '/introductions/pending', { name: 'two' });
    await call(bob, 'POST', '/introductions/:id/accept', { name: 'first acceptance', params: { id: intro.id } });
    await call(dave, 'POST', '/introductions/:id/accept', { name: 'last acceptance', params: { id: intro.id } });
    await call(alice, 'POST', '/introductions/:id/accept', { name: 'the introducer', params: { id: other.id } });
    await call(carol, 'POST', '/introductions/:id/decline', { name: 'decline', params: { id: other.id } });
    await call(dave, 'GET', '/introductions', { name: 'made or in' });

    // Contacts.
    const req = await call(alice, 'POST', '/contacts/request', { name: 'to Carol', body: { pin_code: carol.pin } });
    await call(alice, 'POST', '/contacts/request', {
      name: 'again',
      body: { pin_code: carol.pin },
      idempotencyKey: 'to-carol-again',
    });
    const req2 = await call(bob, 'POST', '/contacts/request', { name: 'from Bob', body: { pin_code: carol.pin } });
    await call(carol, 'GET', '/contacts/requests/pending', { name: 'two' });
    const accepted = await call(carol, 'POST', '/contacts/requests/:id/accept', {
      name: 'accept',
      params: { id: req.id },
    });
    await call(carol, 'POST', '/contacts/requests/:id/decline', { name: 'decline', params: { id: req2.id } });
    await call(carol, 'GET', '/contacts', { name: 'Alice' });
    await call(carol, 'GET', '/contacts/check/:pin', { name: 'a contact', params: { pin: alice.pin } });
    await call(carol, 'DELETE', '/contacts/:id', { name: 'remove', params: { id: accepted.contact.id } });
    await call(carol, 'DELETE', '/contacts/:id', { name: 'again', params: { id: accepted.contact.id } });

    const errorExample = operations[operationId(routeOf.get('GET /conversations/:id')!)]!.find(
      (c) => c.status === 404,
    )!.response;
    return {
      note:
        'Recorded from a real server run by `npm run openapi-examples` ' +
        '(test/openapi/record-examples.ts); test/openapi/examples.test.ts checks them.',
      operations,
      schemas: {
        Pin: [me.pin_code],
        Amount: [5, 12.5],
        Id: [group.id],
        User: [me],
        Message: [hi],
        Error: [errorExample],
        Transaction: [tip.transaction],
        Balance: [balance],
        Subscription: [trial],
        Conversation: [group],
        Introduction: [intro],
      },
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
