import { AdminError } from '../admin/errors.js';
import type { Request, Response } from 'express';
import { Users, type User } from '../domain/users/users.js';
import type { ActedRequest } from './act-as.js';
import type { ConsoleRoutes } from './console-routes.js';
import type { ConsoleState } from './console-state.js';
import { userBody, usersBody } from './pages-users.js';
import { loadUserView } from './user-view.js';

/** An id of the API in a console path (nothing else reaches an /api/v1 path). */
export const API_ID = /^[a-z]{3,5}_[0-9a-z]{4,40}$/;
/** Steps a recording holds at most (a scenario longer than this is better written in parts). */
export const MAX_RECORDED = 1000;

/** What a form asks the API as the user: a request, or a refusal (its note). */
type Build = (
  b: Record<string, string>,
  p: Record<string, string>,
) => { method: string; path: string; body?: unknown } | string;

/** The user of a `:id` path, or a 404 answered. Internal. */
function userOr404(r: ConsoleRoutes, req: Request, res: Response): User | undefined {
  const id = String(req.params.id);
  const u = API_ID.test(id) ? r.st.ctx.store.read.col(Users).get(id) : undefined;
  if (!u) r.plain(res, 404, 'no such user');
  return u;
}

/** The Users section: the list, adding a user, a user's page. */
export function userRoutes(r: ConsoleRoutes): void {
  const { st, get, post, send, back } = r;
  const users = () =>
    [...st.ctx.store.read.col(Users).all()].sort((a, b) => a.display_name.localeCompare(b.display_name));
  get('/console/users', (req, res, s) => send(req, res, s, 'Users', 'users', usersBody(users(), s)));
  post('/console/users', async (req, res, s) => {
    const b = req.body as Record<string, string>;
    const balance = (b.balance ?? '').trim();
    const given = balance && balance !== '0';
    try {
      const made = await r.command('users.add', {
        name: b.name ?? '',
        ...(given ? { balance } : {}),
      });
      const text = `created ${made.display_name} (${made.pin_code})${given ? ` with ${balance}` : ''}`;
      back(res, s, `/console/users/${made.id}`, true, text);
    } catch (err) {
      back(
        res,
        s,
        '/console/users',
        false,
        AdminError.wordedFor(err, (arg) => arg),
      );
    }
  });
  get('/console/users/:id', async (req, res, s) => {
    const u = userOr404(r, req, res);
    if (!u) return;
    const body = userBody(u, loadUserView(st.ctx.store.read, st.ctx.env, u), s, users());
    send(req, res, s, u.display_name, 'users', body, u.id);
  });
  actRoutes(r);
}

/** The note of a form's answer: `Alice: POST /wallet/send → 201`, the error, or the balance read. Internal. */
function noteOf(u: User, r: { method: string; path: string }, answer: { status: number; body: unknown }): string {
  const err = (answer.body as { error?: { code?: string; message?: string } } | null)?.error;
  const balance =
    r.path === '/wallet/balance' ? ` (balance ${(answer.body as { balance?: number } | null)?.balance})` : '';
  return `${u.display_name}: ${r.method} ${r.path} → ${answer.status}${err ? ` ${err.code}: ${err.message}` : balance}`;
}

/** A form that becomes one request as the user; its answer is the note on the next page. Internal. */
function act(r: ConsoleRoutes, path: string, build: Build): void {
  const { st, back } = r;
  r.post(`/console/users/:id${path}`, async (req, res, s) => {
    const u = userOr404(r, req, res);
    if (!u) return;
    const home = `/console/users/${u.id}`;
    const params = req.params as Record<string, string>;
    for (const [k, v] of Object.entries(params))
      if (k !== 'id' && !API_ID.test(v)) return back(res, s, home, false, `${k}: not an id`);
    const q = build(req.body as Record<string, string>, params);
    if (typeof q === 'string') return back(res, s, home, false, q);
    const balanceBefore = st.recording.on ? await balanceIfFirst(st, u) : undefined;
    const answer = await st.act.request(u, q.method, q.path, q.body);
    if (st.recording.on && st.recording.steps.length < MAX_RECORDED) {
      const user = { id: u.id, display_name: u.display_name, pin_code: u.pin_code };
      const { method, path: to, body } = q;
      const acted: ActedRequest = { user, method, path: to, body, status: answer.status, answer: answer.body };
      st.recording.steps.push({ kind: 'request', req: acted, balanceBefore });
    }
    r.settleSoon();
    back(res, s, home, answer.status < 400, noteOf(u, q, answer));
  });
}

/** The forms of a user's page, each one request as the user. Internal. */
function actRoutes(r: ConsoleRoutes): void {
  const pin = (v: string | undefined) => (v ?? '').trim().toUpperCase();
  const amount = (v: string | undefined) => (/^\d+(\.\d{1,2})?$/.test((v ?? '').trim()) ? Number(v) : (v ?? '').trim());
  act(r, '/check-balance', () => ({ method: 'GET', path: '/wallet/balance' }));
  act(r, '/send-message', (b) => ({
    method: 'POST',
    path: '/messages/send',
    body: { recipient_pin: pin(b.to), content: b.content ?? '' },
  }));
  act(r, '/send-money', (b) => ({
    method: 'POST',
    path: '/wallet/send',
    body: { recipient_pin: pin(b.to), amount: amount(b.amount), ...(b.note ? { note: b.note } : {}) },
  }));
  act(r, '/request-contact', (b) => ({ method: 'POST', path: '/contacts/request', body: { pin_code: pin(b.to) } }));
  act(r, '/introduce', (b) => ({
    method: 'POST',
    path: '/introductions',
    body: {
      participant_pins: (b.pins ?? '').split(',').map(pin).filter(Boolean),
      ...(b.message ? { message: b.message } : {}),
    },
  }));
  act(r, '/conversations/:cid/messages', (b, p) => ({
    method: 'POST',
    path: `/conversations/${p.cid}/messages`,
    body: { content: b.content ?? '' },
  }));
  for (const answer of ['accept', 'decline']) {
    act(r, `/transactions/:tid/${answer}`, (_b, p) => ({
      method: 'POST',
      path: `/wallet/transactions/${p.tid}/${answer}`,
    }));
    act(r, `/contact-requests/:rid/${answer}`, (_b, p) => ({
      method: 'POST',
      path: `/contacts/requests/${p.rid}/${answer}`,
    }));
    act(r, `/introductions/:iid/${answer}`, (_b, p) => ({ method: 'POST', path: `/introductions/${p.iid}/${answer}` }));
  }
}

/** While recording: the balance of a user not yet in the recording (a replay starts them with it). Internal. */
async function balanceIfFirst(st: ConsoleState, u: User): Promise<number | undefined> {
  if (st.recording.steps.some((x) => x.kind === 'request' && x.req.user.id === u.id)) return undefined;
  const r = await st.act.request(u, 'GET', '/wallet/balance', undefined);
  return (r.body as { balance?: number } | null)?.balance;
}
