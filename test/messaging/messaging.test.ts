import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, socialState } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

describe('messaging', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  let alice: Who, bob: Who, carol: Who, dave: Who;
  beforeAll(async () => {
    api = await testApi({ config: { messaging: { max_length: 4000, max_group_size: 4 } } });
    call = caller(api);
    [alice, bob, carol, dave] = [
      await api.user('Alice'),
      await api.user('Bob'),
      await api.user('Carol'),
      await api.user('Dave'),
    ];
  });
  afterAll(() => api.close());

  const u = (w: Who) => ({ id: w.user.id, display_name: w.user.display_name, pin_code: w.user.pin_code });

  it('POST /messages/send creates the direct conversation once and reuses it', async () => {
    const first = await call(alice, 'post', '/messages/send', {
      body: { recipient_pin: ` ${bob.user.pin_code.toLowerCase()} `, content: 'hi Bob' },
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      content: 'hi Bob',
      sender: u(alice),
      created_at: new Date(first.body.timestamp).toISOString(),
    });
    expect(first.body.id).toMatch(/^msg_/);
    expect(first.body.conversation_id).toMatch(/^cnv_/);
    const reply = await call(bob, 'post', '/messages/send', {
      body: { recipient_pin: alice.user.pin_code, content: 'hi Alice' },
    });
    expect(reply.body.conversation_id).toBe(first.body.conversation_id);
    expect(reply.body.timestamp).toBeGreaterThan(first.body.timestamp);
    const conv = await call(alice, 'get', '/conversations/:id', { params: { id: first.body.conversation_id } });
    expect(conv.body).toEqual({
      id: first.body.conversation_id,
      type: 'direct',
      name: null,
      participants: [u(alice), u(bob)],
      last_message: reply.body,
      created_at: '2026-11-21T12:00:00.000Z',
      updated_at: new Date(reply.body.timestamp).toISOString(),
    });
  });

  it('POST /conversations direct answers 201 when new, 200 with the same conversation after', async () => {
    const made = await call(carol, 'post', '/conversations', { body: { participant_pin: dave.user.pin_code } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      type: 'direct',
      name: null,
      participants: [u(carol), u(dave)],
      last_message: null,
    });
    const again = await call(dave, 'post', '/conversations', { body: { participant_pin: carol.user.pin_code } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(made.body);
    const viaSend = await call(dave, 'post', '/messages/send', {
      body: { recipient_pin: carol.user.pin_code, content: 'yo' },
    });
    expect(viaSend.body.conversation_id).toBe(made.body.id);
  });

  it('POST /conversations group: the caller plus 1 to max_group_size - 1 others, always new', async () => {
    const g = await call(alice, 'post', '/conversations', {
      body: { participant_pins: [bob.user.pin_code, carol.user.pin_code, dave.user.pin_code], name: '  Team  ' },
    });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({
      type: 'group',
      name: 'Team',
      participants: [u(alice), u(bob), u(carol), u(dave)],
      last_message: null,
    });
    const two = await call(alice, 'post', '/conversations', {
      body: { participant_pins: [bob.user.pin_code], name: 'Just us' },
    });
    expect(two.status).toBe(201);
    expect(two.body.id).not.toBe(g.body.id);
    expect(two.body.type).toBe('group');
    const msg = await call(carol, 'post', '/conversations/:id/messages', {
      params: { id: g.body.id },
      body: { content: 'hello team' },
    });
    expect(msg.status).toBe(201);
    expect(msg.body).toMatchObject({ conversation_id: g.body.id, sender: u(carol), content: 'hello team' });
    for (const who of [alice, bob, dave]) {
      const page = await call(who, 'get', '/conversations/:id/messages', { params: { id: g.body.id } });
      expect(page.body.messages).toEqual([msg.body]);
    }
  });

  it('content is counted in code points and kept as sent', async () => {
    const conv = await call(alice, 'post', '/conversations', { body: { participant_pin: carol.user.pin_code } });
    const emoji = '😀'.repeat(4000); // 8000 UTF-16 units, 4000 code points
    const ok = await call(alice, 'post', '/conversations/:id/messages', {
      params: { id: conv.body.id },
      body: { content: emoji },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.content).toBe(emoji);
    const before = socialState(api.store);
    const tooLong = await call(alice, 'post', '/conversations/:id/messages', {
      params: { id: conv.body.id },
      body: { content: emoji + 'x' },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details[0].path).toBe('body.content');
    expect(socialState(api.store)).toBe(before);
    const spaced = await call(alice, 'post', '/conversations/:id/messages', {
      params: { id: conv.body.id },
      body: { content: '  padded  ' },
    });
    expect(spaced.body.content).toBe('  padded  ');
  });

  it('GET /conversations lists only the caller’s, by last activity, newest first', async () => {
    const { body } = await call(bob, 'get', '/conversations');
    const ids = body.conversations.map((c: { id: string }) => c.id);
    for (const c of body.conversations) expect(c.participants.map((p: { id: string }) => p.id)).toContain(bob.user.id);
    const times = body.conversations.map((c: { updated_at: string }) => c.updated_at);
    expect([...times].sort().reverse()).toEqual(times);
    // A message in the oldest conversation moves it to the top.
    const oldest = ids[ids.length - 1];
    api.clock.set(api.clock.now() + 60_000);
    const m = await call(bob, 'post', '/conversations/:id/messages', {
      params: { id: oldest },
      body: { content: 'bump' },
    });
    const after = await call(bob, 'get', '/conversations');
    expect(after.body.conversations[0].id).toBe(oldest);
    expect(after.body.conversations[0].last_message).toEqual(m.body);
    expect(after.body.conversations).toHaveLength(ids.length);
    const daves = await call(dave, 'get', '/conversations');
    for (const c of daves.body.conversations)
      expect(c.participants.map((p: { id: string }) => p.id)).toContain(dave.user.id);
    const aliceBob = body.conversations.find(
      (c: { type: string; participants: unknown[] }) =>
        c.type === 'direct' && c.participants.length === 2 && JSON.stringify(c.participants).includes(alice.user.id),
    );
    expect(daves.body.conversations.map((c: { id: string }) => c.id)).not.toContain(aliceBob.id);
  });

  it('timestamps strictly increase even when the clock stands still or steps back', async () => {
    const conv = await call(alice, 'post', '/conversations', {
      body: { participant_pins: [dave.user.pin_code], name: 'clock' },
    });
    const ts: number[] = [];
    const t0 = api.clock.now();
    for (const at of [t0, t0, t0 - 10_000, t0 + 5, t0 + 5, t0 + 1_000]) {
      api.clock.set(at);
      const r = await call(dave, 'post', '/conversations/:id/messages', {
        params: { id: conv.body.id },
        body: { content: `at ${at}` },
      });
      ts.push(r.body.timestamp);
    }
    expect(ts).toEqual([t0, t0 + 1, t0 + 2, t0 + 5, t0 + 6, t0 + 1_000]);
  });

  it('paging: since, limit, has_more and timestamp', async () => {
    const conv = await call(bob, 'post', '/conversations', {
      body: { participant_pins: [carol.user.pin_code], name: 'paging' },
    });
    const id = conv.body.id;
    const empty = await call(bob, 'get', '/conversations/:id/messages', { params: { id } });
    expect(empty.body).toEqual({ messages: [], timestamp: 0, has_more: false });
    const sent = [];
    for (let i = 0; i < 7; i++)
      sent.push(
        (await call(bob, 'post', '/conversations/:id/messages', { params: { id }, body: { content: `m${i}` } })).body,
      );
    const page = (query: string) =>
      call(carol, 'get', '/conversations/:id/messages', { params: { id }, query }).then((r) => r.body);
    // Without since: the newest `limit`, oldest first; has_more when older ones exist.
    expect(await page('limit=3')).toEqual({ messages: sent.slice(4), timestamp: sent[6].timestamp, has_more: true });
    expect(await page('limit=7')).toEqual({ messages: sent, timestamp: sent[6].timestamp, has_more: false });
    expect(await page('')).toEqual({ messages: sent, timestamp: sent[6].timestamp, has_more: false });
    // With since: strictly after, oldest first; has_more when newer ones remain.
    expect(await page('since=0&limit=3')).toEqual({
      messages: sent.slice(0, 3),
      timestamp: sent[2].timestamp,
      has_more: true,
    });
    expect(await page(`since=${sent[2].timestamp}&limit=3`)).toEqual({
      messages: sent.slice(3, 6),
      timestamp: sent[5].timestamp,
      has_more: true,
    });
    expect(await page(`since=${sent[5].timestamp}&limit=3`)).toEqual({
      messages: sent.slice(6),
      timestamp: sent[6].timestamp,
      has_more: false,
    });
    expect(await page(`since=${sent[6].timestamp}`)).toEqual({
      messages: [],
      timestamp: sent[6].timestamp,
      has_more: false,
    });
    expect(await page(`since=${sent[0].timestamp - 1}&limit=1`)).toEqual({
      messages: [sent[0]],
      timestamp: sent[0].timestamp,
      has_more: true,
    });
    expect(await page(`since=${sent[6].timestamp + 99}`)).toEqual({
      messages: [],
      timestamp: sent[6].timestamp + 99,
      has_more: false,
    });
  });

  it.each([
    ['since=-1', 'query.since'],
    ['since=abc', 'query.since'],
    ['since=1.5', 'query.since'],
    ['since=', 'query.since'],
    ['limit=0', 'query.limit'],
    ['limit=201', 'query.limit'],
    ['limit=ten', 'query.limit'],
    ['before=msg_1', 'query.before'],
  ])('GET messages with %s is 400 validation_failed naming %s', async (query, path) => {
    const conv = await call(alice, 'post', '/conversations', { body: { participant_pin: bob.user.pin_code } });
    const r = await call(alice, 'get', '/conversations/:id/messages', { params: { id: conv.body.id }, query });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('limit=200 is accepted', async () => {
    const conv = await call(alice, 'post', '/conversations', { body: { participant_pin: bob.user.pin_code } });
    const r = await call(alice, 'get', '/conversations/:id/messages', {
      params: { id: conv.body.id },
      query: 'limit=200',
    });
    expect(r.status).toBe(200);
  });
});
