import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import { iso } from '../clock/clock.js';
import { VirtualClock } from '../clock/virtual-clock.js';
import { Users, type User } from '../domain/users/users.js';
import type { BotStatus, Trace } from '../runtime/index.js';
import type { PluginReport } from '../plugin-api/host.js';
import type { ConsoleSession } from './access.js';
import type { ActedRequest } from './act-as.js';
import { html } from './html.js';
import { page } from './layout.js';
import { latencyBuckets, notRunReasons } from './metric-history.js';
import { botBody, botsBody } from './pages-bots.js';
import { botToolRoutes } from './routes-bot-tools.js';
import { clockBody, pluginsBody } from './pages-misc.js';
import { recordAndScenarioRoutes, type Handler } from './routes-record.js';
import type { ConsoleState } from './console-state.js';
import { userBody, usersBody } from './pages-users.js';
import { cookieOf, COOKIE, crossSite, hostOf, isLoopback, SECURITY_HEADERS, setSessionCookie } from './security.js';
import { loadUserView } from './user-view.js';
import { BOT_NAME } from '../util/bot-name.js';
import type { DialogView } from '../services/bot-dialogs.js';

const ASSETS = join(dirname(fileURLToPath(import.meta.url)), 'assets');
const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};
/** An id of the API in a console path (nothing else reaches an /api/v1 path). */
const API_ID = /^[a-z]{3,5}_[0-9a-z]{4,40}$/;
/** Steps a recording holds at most (a scenario longer than this is better written in parts). */
const MAX_RECORDED = 1000;

export type { ConsoleState } from './console-state.js';

/** The session of a request (set by the sign-in check). Internal. */
const sessionOf = (res: Response) => res.locals.session as ConsoleSession;

/**
 * The console's routes under /console: sign-in, the pages, their forms (each checked for its
 * CSRF token), the live feed and the two static files.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function consoleApp(st: ConsoleState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // as the API's app: behind a TLS proxy the operator trusts, the session cookie is Secure
  app.set('trust proxy', st.ctx.env.config.server.trust_proxy);
  const assets = Object.fromEntries(Object.keys(ASSET_TYPES).map((f) => [f, readFileSync(join(ASSETS, f))]));
  app.use((req, res, next) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    // a page of another site whose name points at 127.0.0.1 (DNS rebinding) names its own host
    const host = hostOf(req.headers.host).toLowerCase();
    if (st.loopbackOnly && !isLoopback(host) && host !== st.access.host)
      return void res
        .status(421)
        .type('text/plain')
        .send('the console answers only to a loopback host name (127.0.0.1, localhost, [::1])');
    next();
  });
  app.get('/console/assets/:file', (req, res) => {
    const f = String(req.params.file);
    if (!Object.hasOwn(assets, f)) return void res.status(404).type('text/plain').send('not found');
    res.type(ASSET_TYPES[f]!).send(assets[f]);
  });
  app.get('/console/signin', (req, res) => {
    // the session's cookie is for the link's own host name: signed in elsewhere, it would go to
    // every other listener of that name (the link is not used up)
    if (st.access.host && hostOf(req.headers.host).toLowerCase() !== st.access.host) {
      res
        .status(403)
        .type('html')
        .send(
          page({
            title: 'Sign-in refused',
            body: html`<h1>Open the sign-in link exactly as it was printed</h1><p>It names a host of its own (<code>….localhost</code>, which the browser finds on this computer); the console signs in only there. Copy the whole link that <code>pinbot console</code> printed.</p>`,
          }),
        );
      return;
    }
    const s = st.access.redeem(String(req.query.token ?? ''));
    if (!s) {
      res
        .status(403)
        .type('html')
        .send(
          page({
            title: 'Sign-in refused',
            body: html`<h1>This sign-in link does not work</h1><p>It was already used, it expired, or it was mistyped. Get a new one with <code>pinbot console</code> (in the project folder, while the server runs).</p>`,
          }),
        );
      return;
    }
    setSessionCookie(res, s.id, req.secure);
    res.redirect(303, '/console/bots');
  });
  // everything else needs a session (checked before a body is read: nothing from outside is
  // parsed); a change also its CSRF token, from this site only
  app.use((req, res, next) => {
    // a live refresh does not keep a session alive: only what the operator does
    const s = st.access.session(
      cookieOf(req, COOKIE),
      hostOf(req.headers.host),
      req.get('x-console-live') !== undefined,
    );
    if (!s) {
      res
        .status(401)
        .type('html')
        .send(
          page({
            title: 'Sign in',
            body: html`<h1>Sign in</h1><p>Run <code>pinbot console</code> in the project folder (while <code>pinbot serve</code> runs) and open the one-time link it prints.</p>`,
          }),
        );
      return;
    }
    res.locals.session = s;
    next();
  });
  app.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 }));
  app.use((req, res, next) => {
    const s = sessionOf(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const token = req.get('x-csrf-token') ?? (req.body as Record<string, unknown> | undefined)?._csrf;
      if (crossSite(req) || !st.access.csrfOk(s, token)) {
        res
          .status(403)
          .type('text/plain')
          .send(
            'refused: this change carries no valid CSRF token (or comes from another site). Reload the console page and try again.',
          );
        return;
      }
    }
    // the changes this page's data already holds: taken before anything is read
    res.locals.seq = st.live.seq;
    next();
  });
  const get = (path: string, fn: Handler) => app.get(path, wrap(fn));
  const post = (path: string, fn: Handler) => app.post(path, wrap(fn));
  const wrap = (fn: Handler) => (req: Request, res: Response, next: NextFunction) => {
    Promise.resolve(fn(req, res, sessionOf(res))).catch(next);
  };
  const send = (
    req: Request,
    res: Response,
    s: ConsoleSession,
    title: string,
    section: string,
    body: ReturnType<typeof html>,
    liveUser?: string,
  ) => {
    // a live refresh does not use up the one-time note
    const keep = req.get('x-console-live') ? s.flash : undefined;
    res.type('html').send(page({ title, section, session: s, body, seq: res.locals.seq as number, liveUser }));
    if (keep) s.flash = keep;
  };
  const back = (res: Response, s: ConsoleSession, to: string, ok: boolean, text: string) => {
    s.flash = { ok, text };
    res.redirect(303, to);
  };
  /**
   * On a virtual clock, what a console action made due now (the bots it woke, a resumed bot's
   * first poll) runs now, without moving time. Not awaited: the page comes back at once and
   * shows their work live.
   */
  const settleSoon = () => {
    const clock = st.ctx.clock;
    if (clock instanceof VirtualClock)
      void clock
        .settle()
        .catch((err: unknown) => st.ctx.log.warn({ err }, 'console: settling the virtual clock failed'));
  };
  const command = async <T>(name: string, args: Record<string, unknown> = {}): Promise<T> =>
    st.ctx.command!(name, args) as Promise<T>;

  get('/console', (_req, res) => res.redirect(303, '/console/bots'));
  get('/console/events', (req, res) => {
    // a user's page asks for the changes of its user only
    const user = String(req.query.user ?? '');
    st.live.attach(res, API_ID.test(user) && st.ctx.store.read.col(Users).get(user) ? { user } : {});
  });

  // bots
  get('/console/bots', async (req, res, s) => {
    const { bots } = await command<{ bots: BotStatus[] }>('bots.status').catch(() => ({ bots: [] as BotStatus[] }));
    send(
      req,
      res,
      s,
      'Bots',
      'bots',
      botsBody(bots, s, { health: st.history.health(), series: (bot, w) => st.history.botSeries(bot, w) }),
    );
  });
  post('/console/bots/reload', async (_req, res, s) => {
    const { bots } = await command<{ bots: BotStatus[] }>('bots.reload');
    settleSoon();
    back(res, s, '/console/bots', true, `reloaded: ${bots.length} bot file${bots.length === 1 ? '' : 's'}`);
  });
  for (const verb of ['pause', 'resume'] as const) {
    post(`/console/bots/:name/${verb}`, async (req, res, s) => {
      const name = String(req.params.name);
      if (!BOT_NAME.test(name)) return void res.status(404).type('text/plain').send('no such bot');
      try {
        await command(`bots.${verb}`, { name });
        settleSoon();
        back(
          res,
          s,
          `/console/bots/${encodeURIComponent(name)}`,
          true,
          `${name} ${verb === 'pause' ? 'paused' : 'resumed'}`,
        );
      } catch (err) {
        back(res, s, `/console/bots/${encodeURIComponent(name)}`, false, (err as Error).message);
      }
    });
  }
  post('/console/bots/:name/dialogs/end', async (req, res, s) => {
    const name = String(req.params.name);
    if (!BOT_NAME.test(name)) return void res.status(404).type('text/plain').send('no such bot');
    const to = `/console/bots/${encodeURIComponent(name)}`;
    const body = req.body as Record<string, unknown>;
    try {
      const { ended } = await command<{ ended: DialogView[] }>('bots.end_dialog', {
        name,
        pin: String(body.pin ?? ''),
        ...(typeof body.conversation === 'string' && body.conversation ? { conversation: body.conversation } : {}),
      });
      settleSoon();
      back(res, s, to, true, `ended: ${ended.map((d) => d.person).join(', ')}`);
    } catch (err) {
      back(res, s, to, false, (err as Error).message);
    }
  });
  get('/console/bots/:name', async (req, res, s) => {
    const name = String(req.params.name);
    if (!BOT_NAME.test(name)) return void res.status(404).type('text/plain').send('no such bot');
    const { bots } = await command<{ bots: BotStatus[] }>('bots.status').catch(() => ({ bots: [] as BotStatus[] }));
    const traces = await command<{ traces: Trace[] }>('bots.trace', { name, limit: 100 }).then(
      (r) => r.traces,
      () => [] as Trace[],
    );
    const dialogs = await command<{ dialogs: DialogView[] }>('bots.dialogs', { name }).then(
      (r) => r.dialogs,
      () => undefined,
    );
    send(
      req,
      res,
      s,
      `Bot ${name}`,
      'bots',
      botBody(
        {
          name,
          status: bots.find((b) => b.name === name),
          traces,
          onlyNotRun: req.query.why === '1',
          latency: latencyBuckets(name),
          reasons: notRunReasons(name),
          dialogs,
          scenarioEvents: st.scenarios?.fromTraceEvents,
        },
        s,
      ),
    );
  });

  // users
  const users = () =>
    [...st.ctx.store.read.col(Users).all()].sort((a, b) => a.display_name.localeCompare(b.display_name));
  const userOr404 = (req: Request, res: Response): User | undefined => {
    const id = String(req.params.id);
    const u = API_ID.test(id) ? st.ctx.store.read.col(Users).get(id) : undefined;
    if (!u) res.status(404).type('text/plain').send('no such user');
    return u;
  };
  get('/console/users', (req, res, s) => send(req, res, s, 'Users', 'users', usersBody(users(), s)));
  post('/console/users', async (req, res, s) => {
    const b = req.body as Record<string, string>;
    const balance = (b.balance ?? '').trim();
    try {
      const made = await command<{ id: string; display_name: string; pin_code: string }>('users.add', {
        name: b.name ?? '',
        ...(balance && balance !== '0' ? { balance } : {}),
      });
      back(
        res,
        s,
        `/console/users/${made.id}`,
        true,
        `created ${made.display_name} (${made.pin_code})${balance && balance !== '0' ? ` with ${balance}` : ''}`,
      );
    } catch (err) {
      back(res, s, '/console/users', false, (err as Error).message.replace(/^--/, ''));
    }
  });
  get('/console/users/:id', async (req, res, s) => {
    const u = userOr404(req, res);
    if (!u) return;
    send(
      req,
      res,
      s,
      u.display_name,
      'users',
      userBody(u, loadUserView(st.ctx.store.read, st.ctx.env, u), s, users()),
      u.id,
    );
  });
  /** A form that becomes one request as the user; its answer is the note on the next page. */
  const act = (
    path: string,
    build: (
      b: Record<string, string>,
      p: Record<string, string>,
    ) => { method: string; path: string; body?: unknown } | string,
  ) =>
    post(`/console/users/:id${path}`, async (req, res, s) => {
      const u = userOr404(req, res);
      if (!u) return;
      const params = req.params as Record<string, string>;
      for (const [k, v] of Object.entries(params))
        if (k !== 'id' && !API_ID.test(v)) return void back(res, s, `/console/users/${u.id}`, false, `${k}: not an id`);
      const r = build(req.body as Record<string, string>, params);
      if (typeof r === 'string') return void back(res, s, `/console/users/${u.id}`, false, r);
      const balanceBefore = st.recording.on ? await balanceIfFirst(st, u) : undefined;
      const answer = await st.act.request(u, r.method, r.path, r.body);
      if (st.recording.on && st.recording.steps.length < MAX_RECORDED) {
        const req: ActedRequest = {
          user: { id: u.id, display_name: u.display_name, pin_code: u.pin_code },
          method: r.method,
          path: r.path,
          body: r.body,
          status: answer.status,
          answer: answer.body,
        };
        st.recording.steps.push({ kind: 'request', req, balanceBefore });
      }
      settleSoon();
      const err = (answer.body as { error?: { code?: string; message?: string } } | null)?.error;
      const balance =
        r.path === '/wallet/balance' ? ` (balance ${(answer.body as { balance?: number } | null)?.balance})` : '';
      back(
        res,
        s,
        `/console/users/${u.id}`,
        answer.status < 400,
        `${u.display_name}: ${r.method} ${r.path} → ${answer.status}${err ? ` ${err.code}: ${err.message}` : balance}`,
      );
    });
  const pin = (v: string | undefined) => (v ?? '').trim().toUpperCase();
  const amount = (v: string | undefined) => (/^\d+(\.\d{1,2})?$/.test((v ?? '').trim()) ? Number(v) : (v ?? '').trim());
  act('/check-balance', () => ({ method: 'GET', path: '/wallet/balance' }));
  act('/send-message', (b) => ({
    method: 'POST',
    path: '/messages/send',
    body: { recipient_pin: pin(b.to), content: b.content ?? '' },
  }));
  act('/send-money', (b) => ({
    method: 'POST',
    path: '/wallet/send',
    body: { recipient_pin: pin(b.to), amount: amount(b.amount), ...(b.note ? { note: b.note } : {}) },
  }));
  act('/request-contact', (b) => ({ method: 'POST', path: '/contacts/request', body: { pin_code: pin(b.to) } }));
  act('/introduce', (b) => ({
    method: 'POST',
    path: '/introductions',
    body: {
      participant_pins: (b.pins ?? '').split(',').map(pin).filter(Boolean),
      ...(b.message ? { message: b.message } : {}),
    },
  }));
  act('/conversations/:cid/messages', (b, p) => ({
    method: 'POST',
    path: `/conversations/${p.cid}/messages`,
    body: { content: b.content ?? '' },
  }));
  for (const answer of ['accept', 'decline']) {
    act(`/transactions/:tid/${answer}`, (_b, p) => ({
      method: 'POST',
      path: `/wallet/transactions/${p.tid}/${answer}`,
    }));
    act(`/contact-requests/:rid/${answer}`, (_b, p) => ({
      method: 'POST',
      path: `/contacts/requests/${p.rid}/${answer}`,
    }));
    act(`/introductions/:iid/${answer}`, (_b, p) => ({ method: 'POST', path: `/introductions/${p.iid}/${answer}` }));
  }

  // the clock
  get('/console/clock', (req, res, s) =>
    send(
      req,
      res,
      s,
      'Clock',
      'clock',
      clockBody({ now: iso(st.ctx.clock.now()), virtual: st.ctx.clock.virtual, jobs: st.jobs }, s),
    ),
  );
  const moveClock = (name: 'clock.advance' | 'clock.set', field: 'duration' | 'iso') =>
    post(`/console/clock/${name.slice(6)}`, async (req, res, s) => {
      const value = String((req.body as Record<string, string>)[field] ?? '').trim();
      const before = st.ctx.clock.now();
      // the console's Set time moves forward only (a recording replays clock steps forward; a
      // day already paid would be crossed again): `pinbot clock set` is the operator's tool to go back
      const to = Date.parse(value);
      if (name === 'clock.set' && Number.isFinite(to) && to < before) {
        return void back(
          res,
          s,
          '/console/clock',
          false,
          `the clock moves forward only: ${iso(to)} is before now (${iso(before)}); give a later time`,
        );
      }
      try {
        const r = await command<{ now: string }>(name, { [field]: value });
        if (st.recording.on && st.recording.steps.length < MAX_RECORDED)
          st.recording.steps.push(
            name === 'clock.advance'
              ? { kind: 'clock', advanceMs: st.ctx.clock.now() - before }
              : { kind: 'clock', setIso: r.now },
          );
        st.live.changed('clock');
        back(res, s, '/console/clock', true, `now ${r.now}`);
      } catch (err) {
        back(
          res,
          s,
          '/console/clock',
          false,
          (err as Error).message.replace(/^DURATION/, 'the duration').replace(/^ISO/, 'the time'),
        );
      }
    });
  moveClock('clock.advance', 'duration');
  moveClock('clock.set', 'iso');

  recordAndScenarioRoutes({ st, get, post, send, back });
  botToolRoutes({ st, get, post, send, back });

  // plugins
  get('/console/plugins', async (req, res, s) => {
    const r = await command<{ plugins: PluginReport[]; problems: string[] }>('plugins.status').catch(() => ({
      plugins: [],
      problems: [],
    }));
    send(req, res, s, 'Plugins', 'plugins', pluginsBody(r));
  });

  app.use((_req: Request, res: Response) => void res.status(404).type('text/plain').send('not found in the console'));
  app.use((err: Error & { status?: unknown; expose?: unknown }, _req: Request, res: Response, _next: NextFunction) => {
    // a body the parser refuses (too large, too many fields) is the sender's error, not ours
    if (err.expose === true && typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
      if (!res.headersSent) res.status(err.status).type('text/plain').send(`refused: ${err.message}`);
      return;
    }
    st.ctx.log.error({ err }, 'console request failed');
    if (!res.headersSent) res.status(500).type('text/plain').send(`the console failed: ${err.message}`);
  });
  return app;
}

/** While recording: the balance of a user not yet in the recording (a replay starts them with it). Internal. */
async function balanceIfFirst(st: ConsoleState, u: User): Promise<number | undefined> {
  if (st.recording.steps.some((x) => x.kind === 'request' && x.req.user.id === u.id)) return undefined;
  const r = await st.act.request(u, 'GET', '/wallet/balance', undefined);
  return (r.body as { balance?: number } | null)?.balance;
}
