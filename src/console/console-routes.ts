import type { Express, NextFunction, Request, Response } from 'express';
import { VirtualClock } from '../clock/virtual-clock.js';
import type { ConsoleSession } from './access.js';
import type { ConsoleState } from './console-state.js';
import type { html } from './html.js';
import { page } from './layout.js';
import { type CallCommand, commandsOf, type ServerCommands } from '../services/commands.js';

/** A page handler of the console, with the request's session. */
export type Handler = (req: Request, res: Response, s: ConsoleSession) => Promise<void> | void;

/**
 * What a section of the console (console/routes-*.ts) adds its pages and forms with: one line a
 * route (`r.get('/console/x', (req, res, s) => r.send(…))`), each answered through the same
 * few helpers.
 */
export interface ConsoleRoutes {
  st: ConsoleState;
  get(path: string, fn: Handler): void;
  post(path: string, fn: Handler): void;
  /** Sends a page of the layout. */
  send(
    req: Request,
    res: Response,
    s: ConsoleSession,
    title: string,
    section: string,
    body: ReturnType<typeof html>,
    liveUser?: string,
  ): void;
  /** Redirects with a one-time note. */
  back(res: Response, s: ConsoleSession, to: string, ok: boolean, text: string): void;
  /** Answers a short text (`404 no such bot`, a refusal): the console's one error shape. */
  plain(res: Response, status: number, text: string): void;
  /** Runs an admin command (the console acts through the admin commands, as the CLI does). */
  command: CallCommand<ServerCommands>;
  /**
   * On a virtual clock, what a console action made due now (the bots it woke, a resumed bot's
   * first poll) runs now, without moving time. Not awaited: the page comes back at once and
   * shows their work live.
   */
  settleSoon(): void;
}

/** The session of a request (set by the sign-in check). Internal. */
export const sessionOf = (res: Response) => res.locals.session as ConsoleSession;

/** Answers a short text: the console's one shape for refusals and errors. */
export function plain(res: Response, status: number, text: string): void {
  res.status(status).type('text/plain').send(text);
}

/** The helpers the sections of the console add their routes to `app` with. */
export function consoleRoutes(app: Express, st: ConsoleState): ConsoleRoutes {
  const wrap = (fn: Handler) => (req: Request, res: Response, next: NextFunction) => {
    Promise.resolve(fn(req, res, sessionOf(res))).catch(next);
  };
  return {
    st,
    get: (path, fn) => void app.get(path, wrap(fn)),
    post: (path, fn) => void app.post(path, wrap(fn)),
    send(req, res, s, title, section, body, liveUser) {
      // a live refresh does not use up the one-time note
      const keep = req.get('x-console-live') ? s.flash : undefined;
      res.type('html').send(page({ title, section, session: s, body, seq: res.locals.seq as number, liveUser }));
      if (keep) s.flash = keep;
    },
    back(res, s, to, ok, text) {
      s.flash = { ok, text };
      res.redirect(303, to);
    },
    plain,
    command: commandsOf(st.ctx),
    settleSoon() {
      const clock = st.ctx.clock;
      if (clock instanceof VirtualClock)
        void clock
          .settle()
          .catch((err: unknown) => st.ctx.log.warn({ err }, 'console: settling the virtual clock failed'));
    },
  };
}
