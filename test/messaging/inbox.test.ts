import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../helpers/api.js';

/** `GET /messages` (extension): new messages across every conversation of the caller, by cursor. */
describe('GET /messages', () => {
  let api: TestApi;
  beforeEach(async () => {
    api = await testApi();
  });
  afterEach(() => api.close());

  const send = (from: { headers: Record<string, string> }, pin: string, content: string) =>
    api.http.post('/api/v1/messages/send').set(from.headers).send({ recipient_pin: pin, content }).expect(201);
  const inbox = (who: { headers: Record<string, string> }, query: Record<string, string | number>) =>
    api.http.get('/api/v1/messages').set(who.headers).query(query);

  it('pages every new message of every conversation once, in the order written, with its conversation', async () => {
    const bot = await api.user('Bot');
    const people = await Promise.all(['A', 'B', 'C'].map((n) => api.user(n)));
    const outsider = await api.user('Outsider');
    const group = await api.http
      .post('/api/v1/conversations')
      .set(people[0]!.headers)
      .send({ participant_pins: [bot.user.pin_code, people[1]!.user.pin_code], name: 'g' })
      .expect(201);
    const written: string[] = [];
    for (let i = 0; i < 12; i++) {
      const p = people[i % 3]!;
      if (i % 4 === 3) {
        // the group is A, B and the bot
        const r = await api.http
          .post(`/api/v1/conversations/${group.body.id}/messages`)
          .set(people[i % 2]!.headers)
          .send({ content: `g${i}` })
          .expect(201);
        written.push(r.body.id);
      } else written.push((await send(p, bot.user.pin_code, `d${i}`)).body.id);
      // messages the bot is not in are not its business
      await send(outsider, people[0]!.user.pin_code, `x${i}`);
      if (i % 5 === 0) await api.clock.advance(1);
    }
    const seen: string[] = [];
    let q: Record<string, string | number> = { since: 0, limit: 5 };
    for (let round = 0; ; round++) {
      const r = await inbox(bot, q).expect(200);
      for (const m of r.body.messages) {
        seen.push(m.id);
        const c = r.body.conversations.find((c: { id: string }) => c.id === m.conversation_id);
        expect(c.participants.map((u: { id: string }) => u.id)).toContain(bot.user.id);
      }
      // each conversation once
      expect(new Set(r.body.conversations.map((c: { id: string }) => c.id)).size).toBe(r.body.conversations.length);
      q = { after: r.body.next_after, limit: 5 };
      if (!r.body.has_more) break;
      expect(round).toBeLessThan(5);
    }
    expect(seen).toEqual(written);
    // nothing new: the same cursor gives nothing, and says so again
    const idle = await inbox(bot, q).expect(200);
    expect(idle.body).toMatchObject({ messages: [], conversations: [], has_more: false, next_after: q.after });
    // a new message after the cursor comes next, once
    const late = await send(people[2]!, bot.user.pin_code, 'late');
    const next = await inbox(bot, q).expect(200);
    expect(next.body.messages.map((m: { id: string }) => m.id)).toEqual([late.body.id]);
  });

  it('since: only later messages; the cursor keeps to it while it leaves one out, then reads by id', async () => {
    const bot = await api.user('Bot');
    const a = await api.user('A');
    const b = await api.user('B');
    await send(a, bot.user.pin_code, 'history');
    await api.clock.advance(10);
    const start = api.clock.now();
    await api.clock.advance(10);
    const fresh = [await send(b, bot.user.pin_code, 'fresh 1'), await send(b, bot.user.pin_code, 'fresh 2')];
    // the clock set back: a later message with an older timestamp, in another conversation
    api.clock.set(start - 5);
    const c = await api.user('C');
    const back = await send(c, bot.user.pin_code, 'written later, stamped earlier');
    const first = await inbox(bot, { since: start, limit: 1 }).expect(200);
    expect(first.body.messages.map((m: { id: string }) => m.id)).toEqual([fresh[0]!.body.id]);
    expect(first.body.has_more).toBe(true);
    // `back` lies beyond the cursor's id but before `since`: the cursor keeps since
    expect(first.body.next_after).toBe(`${start}.${fresh[0]!.body.id}`);
    const rest = await inbox(bot, { after: first.body.next_after }).expect(200);
    expect(rest.body.messages.map((m: { id: string }) => m.id)).toEqual([fresh[1]!.body.id]);
    // nothing more: the cursor moves past what since left out, and reads by id from now on
    expect(rest.body).toMatchObject({ has_more: false, next_after: `0.${back.body.id}` });
    const now = await send(a, bot.user.pin_code, 'now (stamped before since too)');
    const later = await inbox(bot, { after: rest.body.next_after }).expect(200);
    expect(later.body.messages.map((m: { id: string }) => m.id)).toEqual([now.body.id]);
  });

  it('bad input is 400 naming the field; nothing without a key; conditional reads give 304', async () => {
    const bot = await api.user('Bot');
    for (const after of ['x', '12', `1.usr_abc`, '1.msg_ABC', `${'9'.repeat(17)}.`]) {
      const r = await inbox(bot, { after }).expect(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(r.body.error.details)).toContain('after');
    }
    for (const since of ['-1', '1.5', '0x10', 'abc']) await inbox(bot, { since }).expect(400);
    const both = await inbox(bot, { since: 0, after: '0.' }).expect(400);
    expect(both.body.error.details[0].path).toBe('query.since');
    await inbox(bot, { limit: 201 }).expect(400);
    await inbox(bot, { cursor: '0.' }).expect(400);
    await api.http.get('/api/v1/messages').expect(401);
    const first = await inbox(bot, { after: '0.' }).expect(200);
    const tag = first.headers.etag as string;
    expect(tag).toBeTruthy();
    await api.http
      .get('/api/v1/messages')
      .set(bot.headers)
      .set('If-None-Match', tag)
      .query({ after: '0.' })
      .expect(304);
  });

  it('counts against the rate limit like any read', async () => {
    await api.close();
    api = await testApi({ config: { rate_limits: { enabled: true, general: { limit: 3, window: '1m' } } } });
    const bot = await api.user('Bot');
    for (let i = 0; i < 3; i++) await inbox(bot, { since: i }).expect(200);
    const r = await inbox(bot, { since: 9 }).expect(429);
    expect(r.body.error.code).toBe('rate_limited');
  });
});
