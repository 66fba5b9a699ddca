import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';

/** What `createHttpServer` makes its requests and responses of (node's `createServer` options). */
export interface RequestClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/** Copies the own properties (methods, getters, `app`) of `from` onto `to`. Internal. */
function copyOwn(from: object, to: object): void {
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(from))) {
    if (name !== 'constructor') Object.defineProperty(to, name, d);
  }
}

/**
 * Request and response classes for `app` whose instances are born with express's methods
 * (`req.ip`, `req.query`, `res.append`, … and `app`), and the listener that serves them.
 *
 * Why: express gives every request and response its methods by changing their prototypes
 * (`Object.setPrototypeOf` in `app.handle`). V8 then no longer shares the hidden class of those
 * objects, so each property set on them afterwards — by express's router (`req.params`,
 * `req.baseUrl`, …) and by our middleware (`req.user`, `req.id`, …) — builds a new one: about
 * 1.7 µs a property on this machine, over 10 µs a request (bench/read, `node --cpu-prof`; a
 * request created this way costs 0.05 µs for the same properties). Made by these classes, a
 * request is already what express would make of it, and the listener hands it straight to the
 * app's router, the same middleware in the same order. A request made otherwise (supertest on
 * `app`, a server created without these classes) goes through `app` as usual. `direct`, when
 * given, is offered each request first and returns true when it has taken it (the API's own
 * paths, which need none of the router's layers).
 *
 * @example
 * const { classes, listener } = requestClasses(app, done);
 * createServer({ ...classes }, listener).listen(0);
 */
export function requestClasses(
  app: Express,
  done: (err: unknown, req: Request, res: Response) => void,
  direct?: (req: Request, res: Response) => boolean,
): { classes: RequestClasses; listener: RequestListener } {
  class AppRequest extends IncomingMessage {}
  class AppResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {}
  copyOwn(Object.getPrototypeOf(app.request) as object, AppRequest.prototype);
  copyOwn(app.request, AppRequest.prototype);
  copyOwn(Object.getPrototypeOf(app.response) as object, AppResponse.prototype);
  copyOwn(app.response, AppResponse.prototype);
  const router = (app as Express & { router: { handle(req: Request, res: Response, done: NextFunction): void } })
    .router;
  const listener: RequestListener = (req, res) => {
    if (!(req instanceof AppRequest) || !(res instanceof AppResponse)) return void app(req, res);
    // what app.handle does besides changing prototypes (x-powered-by is off)
    const r = req as unknown as Request;
    const s = res as unknown as Response;
    r.res = s;
    s.locals = Object.create(null) as Response['locals'];
    if (direct?.(r, s)) return;
    router.handle(r, s, (err?: unknown) => done(err, r, s));
  };
  return { classes: { IncomingMessage: AppRequest, ServerResponse: AppResponse as typeof ServerResponse }, listener };
}
