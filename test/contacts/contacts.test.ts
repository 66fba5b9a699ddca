import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../helpers/api.js';
import { caller, socialState } from '../helpers/social.js';

type Who = Awaited<ReturnType<TestApi['user']>>;

/** The spec's section 3, "Contact request transitions", one test per row, plus API.md's cases. */
describe('contacts: state table', () => {
  let api: TestApi;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    api = await testApi({ memory: true });
    call = caller(api);
  });
  afterAll(() => api.close());

  const u = (w: Who) => ({ id: w.user.id, display_name: w.user.display_name, pin_code: w.user.pin_code });
  let n = 0;
  /** Two fresh users, so each row starts from (none). */
  const pair = async () => [await api.user(`A${++n}`), await api.user(`B${n}`)] as const;
  const request = (from: Who, to: Who) =>
    call(from, 'post', '/contacts/request', { body: { pin_code: to.user.pin_code } });
  const pending = async (who: Who) => (await call(who, 'get', '/contacts/requests/pending')).body.requests;
  const contacts = async (who: Who) => (await call(who, 'get', '/contacts')).body.contacts;
  const check = async (who: Who, other: Who) =>
    (await call(who, 'get', '/contacts/check/:pin', { params: { pin: other.user.pin_code } })).body;
  const answer = (who: Who, id: string, what: 'accept' | 'decline') =>
    call(who, 'post', `/contacts/requests/:id/${what}`, { params: { id } });

  it(
    '(none) → POST /contacts/request with a PIN → awaiting the recipient; the recipient ' +
      'sees it in /contacts/requests/pending',
    async () => {
      const [a, b] = await pair();
      const r = await call(a, 'post', '/contacts/request', { body: { pin_code: ` ${b.user.pin_code.toLowerCase()}` } });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^creq_/),
        requester: u(a),
        recipient: u(b),
        status: 'pending',
        created_at: '2026-11-21T12:00:00.000Z',
      });
      expect(await pending(b)).toEqual([{ id: r.body.id, requester: u(a), created_at: r.body.created_at }]);
      expect(await pending(a)).toEqual([]); // outgoing requests are not listed as pending for the requester
      expect(await contacts(a)).toEqual([]);
      expect(await check(a, b)).toEqual({
        is_contact: false,
        user: { id: b.user.id, display_name: b.user.display_name },
      });
    },
  );

  it('awaiting → accept by the recipient → accepted; a mutual contact is created', async () => {
    const [a, b] = await pair();
    const req = await request(a, b);
    const r = await answer(b, req.body.id, 'accept');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      message: expect.any(String),
      contact: { id: expect.stringMatching(/^con_/), contact: u(a), created_at: expect.any(String) },
    });
    expect(await contacts(b)).toEqual([r.body.contact]);
    expect(await contacts(a)).toEqual([{ ...r.body.contact, contact: u(b) }]); // the same entry id on both sides
    expect(await pending(b)).toEqual([]);
    expect((await check(a, b)).is_contact).toBe(true);
    expect((await check(b, a)).is_contact).toBe(true);
  });

  it('awaiting → decline by the recipient → declined; no contact', async () => {
    const [a, b] = await pair();
    const req = await request(a, b);
    const r = await answer(b, req.body.id, 'decline');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: expect.any(String) });
    expect(await pending(b)).toEqual([]);
    expect(await contacts(a)).toEqual([]);
    expect(await contacts(b)).toEqual([]);
    expect((await check(b, a)).is_contact).toBe(false);
    // Declined is final for that request; the requester may ask again.
    expect((await answer(b, req.body.id, 'accept')).body.error.code).toBe('contact_request_not_pending');
    expect((await request(a, b)).status).toBe(201);
  });

  it('contact → DELETE /contacts/:id → removed on both sides', async () => {
    const [a, b] = await pair();
    const req = await request(a, b);
    const { contact } = (await answer(b, req.body.id, 'accept')).body;
    const r = await call(a, 'delete', '/contacts/:id', { params: { id: contact.id } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: expect.any(String) });
    expect(await contacts(a)).toEqual([]);
    expect(await contacts(b)).toEqual([]);
    expect((await check(b, a)).is_contact).toBe(false);
    const again = await call(b, 'delete', '/contacts/:id', { params: { id: contact.id } });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('contact_not_found');
    expect((await request(b, a)).body.status).toBe('pending'); // they can start over
  });

  it('mutual pending requests become a contact: the second request answers 201 accepted', async () => {
    const [a, b] = await pair();
    const first = await request(a, b);
    const second = await request(b, a);
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ requester: u(b), recipient: u(a), status: 'accepted' });
    expect((await contacts(a)).map((c: { contact: unknown }) => c.contact)).toEqual([u(b)]);
    expect((await contacts(b)).map((c: { contact: unknown }) => c.contact)).toEqual([u(a)]);
    expect(await pending(b)).toEqual([]);
    expect((await answer(b, first.body.id, 'accept')).body.error.code).toBe('contact_request_not_pending');
  });

  it('already contacts: 409 already_contacts (either direction)', async () => {
    const [a, b] = await pair();
    await answer(b, (await request(a, b)).body.id, 'accept');
    const before = socialState(api.store);
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const r = await request(x, y);
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('already_contacts');
    }
    expect(socialState(api.store)).toBe(before);
  });

  it('a pending request from the caller exists: 409 request_exists', async () => {
    const [a, b] = await pair();
    await request(a, b);
    const before = socialState(api.store);
    const r = await request(a, b);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('request_exists');
    expect(socialState(api.store)).toBe(before);
  });

  it('accept/decline: the requester gets 403, anyone else 404, a second answer 409', async () => {
    const [a, b] = await pair();
    const [c] = await pair();
    const req = await request(a, b);
    const before = socialState(api.store);
    for (const what of ['accept', 'decline'] as const) {
      const own = await answer(a, req.body.id, what);
      expect([own.status, own.body.error.code]).toEqual([403, 'forbidden']);
      const stranger = await answer(c, req.body.id, what);
      expect([stranger.status, stranger.body.error.code]).toEqual([404, 'contact_request_not_found']);
      expect((await answer(c, 'creq_0000000000000000000000', what)).body).toEqual(stranger.body);
    }
    expect(socialState(api.store)).toBe(before);
    await answer(b, req.body.id, 'accept');
    const after = socialState(api.store);
    for (const what of ['accept', 'decline'] as const) {
      const r = await answer(b, req.body.id, what);
      expect([r.status, r.body.error.code]).toEqual([409, 'contact_request_not_pending']);
    }
    expect(socialState(api.store)).toBe(after);
  });

  it(
    'GET /contacts/check/:pin: unknown PIN 404 user_not_found, own PIN 400 ' + 'cannot_target_self, PINs normalised',
    async () => {
      const [a, b] = await pair();
      const unknown = await call(a, 'get', '/contacts/check/:pin', { params: { pin: 'ZZZZZZZ' } });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'user_not_found']);
      const self = await call(a, 'get', '/contacts/check/:pin', { params: { pin: a.user.pin_code } });
      expect([self.status, self.body.error.code]).toEqual([400, 'cannot_target_self']);
      const lower = await call(a, 'get', '/contacts/check/:pin', { params: { pin: b.user.pin_code.toLowerCase() } });
      expect(lower.body.user.id).toBe(b.user.id);
    },
  );

  it('lists are newest first', async () => {
    const [hub] = await pair();
    const others = [];
    for (let i = 0; i < 3; i++) {
      api.clock.set(api.clock.now() + 1000);
      const [o] = await pair();
      others.push(o);
      await request(o, hub);
    }
    expect((await pending(hub)).map((r: { requester: { id: string } }) => r.requester.id)).toEqual(
      others.map((o) => o.user.id).reverse(),
    );
    for (const r of [...(await pending(hub))].reverse()) await answer(hub, r.id, 'accept');
    expect((await contacts(hub)).map((c: { contact: { id: string } }) => c.contact.id)).toEqual(
      others.map((o) => o.user.id).reverse(),
    );
  });
});
