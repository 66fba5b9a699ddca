import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Users } from '../domain/users/users.js';
import { type ConsoleRoutes, consoleRoutes, plain, sessionOf } from './console-routes.js';
import type { ConsoleState } from './console-state.js';
import { html } from './html.js';
import { page } from './layout.js';
import { botToolRoutes } from './routes-bot-tools.js';
import { botRoutes } from './routes-bots.js';
import { clockRoutes, pluginRoutes } from './routes-clock.js';
import { recordRoutes, scenarioRoutes } from './routes-record.js';
import { API_ID, userRoutes } from './routes-users.js';
import { COOKIE, cookieOf, crossSite, hostOf, isLoopback, SECURITY_HEADERS, setSessionCookie } from './security.js';

const ASSETS = join(dirname(fileURLToPath(import.meta.url)), 'assets');
const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

export type { ConsoleState } from './console-state.js';

/**
 * The sections of the console, in menu order: each adds its pages and forms
 * (console/routes-*.ts). A new section is one line here; a new page one line in its section.
 */
const SECTIONS: ReadonlyArray<(r: ConsoleRoutes) => void> = [
  botRoutes,
  botToolRoutes,
  userRoutes,
  clockRoutes,
  recordRoutes,
  scenarioRoutes,
  pluginRoutes,
];

/** A page of the layout refused with `status` (sign-in problems). Internal. */
function refusedPage(res: Response, status: number, title: string, body: ReturnType<typeof html>): void {
  res.status(status).type('html').send(page({ title, body }));
}

/**
 * What every request gets before its page: the security headers, a loopback host only (no DNS
 * rebinding), the two static files and the sign-in link. Internal.
 */
function openDoors(app: express.Express, st: ConsoleState): void {
  const assets = Object.fromEntries(Object.keys(ASSET_TYPES).map((f) => [f, readFileSync(join(ASSETS, f))]));
  app.use((req, res, next) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    // a page of another site whose name points at 127.0.0.1 (DNS rebinding) names its own host
    const host = hostOf(req.headers.host).toLowerCase();
    if (st.loopbackOnly && !isLoopback(host) && host !== st.access.host)
      return plain(res, 421, 'the console answers only to a loopback host name (127.0.0.1, localhost, [::1])');
    next();
  });
  app.get('/console/assets/:file', (req, res) => {
    const f = String(req.params.file);
    if (!Object.hasOwn(assets, f)) return plain(res, 404, 'not found');
    res.type(ASSET_TYPES[f]!).send(assets[f]);
  });
  app.get('/console/signin', (req, res) => {
    // the session's cookie is for the link's own host name: signed in elsewhere, it would go to
    // every other listener of that name (the link is not used up)
    if (st.access.host && hostOf(req.headers.host).toLowerCase() !== st.access.host)
      return refusedPage(
        res,
        403,
        'Sign-in refused',
        html`<h1>Open the sign-in link exactly as it was printed</h1><p>It names a host of its own (<code>….localhost</code>, which the browser finds on this computer); the console signs in only there. Copy the whole link that <code>pinbot console</code> printed.</p>`,
      );
    const s = st.access.redeem(String(req.query.token ?? ''));
    if (!s)
      return refusedPage(
        res,
        403,
        'Sign-in refused',
        html`<h1>This sign-in link does not work</h1><p>It was already used, it expired, or it was mistyped. Get a new one with <code>pinbot console</code> (in the project folder, while the server runs).</p>`,
      );
    setSessionCookie(res, s.id, req.secure);
    res.redirect(303, '/console/bots');
  });
}

/**
 * Everything else needs a session (checked before a body is read: nothing from outside is
 * parsed); a change also its CSRF token, from this site only. Internal.
 */
function checkSession(app: express.Express, st: ConsoleState): void {
  app.use((req, res, next) => {
    // a live refresh does not keep a session alive: only what the operator does
    const s = st.access.session(
      cookieOf(req, COOKIE),
      hostOf(req.headers.host),
      req.get('x-console-live') !== undefined,
    );
    if (!s)
      return refusedPage(
        res,
        401,
        'Sign in',
        html`<h1>Sign in</h1><p>Run <code>pinbot console</code> in the project folder (while <code>pinbot serve</code> runs) and open the one-time link it prints.</p>`,
      );
    res.locals.session = s;
    next();
  });
  app.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 }));
  app.use((req, res, next) => {
    const s = sessionOf(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const token = req.get('x-csrf-token') ?? (req.body as Record<string, unknown> | undefined)?._csrf;
      if (crossSite(req) || !st.access.csrfOk(s, token))
        return plain(
          res,
          403,
          'refused: this change carries no valid CSRF token (or comes from another ' +
            'site). Reload the console page and try again.',
        );
    }
    // the changes this page's data already holds: taken before anything is read
    res.locals.seq = st.live.seq;
    next();
  });
}

/** The console's own routes beside its sections: the start page and the live feed. Internal. */
function homeRoutes({ st, get }: ConsoleRoutes): void {
  get('/console', (_req, res) => res.redirect(303, '/console/bots'));
  get('/console/events', (req, res) => {
    // a user's page asks for the changes of its user only
    const user = String(req.query.user ?? '');
    st.live.attach(res, API_ID.test(user) && st.ctx.store.read.col(Users).get(user) ? { user } : {});
  });
}

/** What ends a request no route answered, or one that failed. Internal. */
function endings(app: express.Express, st: ConsoleState): void {
  app.use((_req: Request, res: Response) => plain(res, 404, 'not found in the console'));
  app.use((err: Error & { status?: unknown; expose?: unknown }, _req: Request, res: Response, _next: NextFunction) => {
    // a body the parser refuses (too large, too many fields) is the sender's error, not ours
    if (err.expose === true && typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
      if (!res.headersSent) plain(res, err.status, `refused: ${err.message}`);
      return;
    }
    st.ctx.log.error({ err }, 'console request failed');
    if (!res.headersSent) plain(res, 500, `the console failed: ${err.message}`);
  });
}

/**
 * The console's routes under /console: sign-in, the pages of each section, their forms (each
 * checked for its CSRF token), the live feed and the two static files. An express app (forms,
 * redirects, cookies: where express serves), mounted behind pinbot's HTTP edge (api/edge/);
 * returned as a request listener of two arguments (an express app takes a third as its `next`,
 * and the edge hands mounted services the call as a third).
 */
export function consoleApp(st: ConsoleState): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // as the API's edge: behind a TLS proxy the operator trusts, the session cookie is Secure
  app.set('trust proxy', st.ctx.env.config.server.trust_proxy);
  openDoors(app, st);
  checkSession(app, st);
  const r = consoleRoutes(app, st);
  homeRoutes(r);
  for (const section of SECTIONS) section(r);
  endings(app, st);
  return (req, res) => app(req, res);
}
