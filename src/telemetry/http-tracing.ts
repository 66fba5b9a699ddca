/**
 * The server span of every HTTP request, when tracing is on (telemetry/tracing.ts): a child of
 * the caller's `traceparent` (a bot of another pinbot, any traced client), named by method and
 * route pattern (`POST /api/v1/messages/send`), never by a path with ids in it. The handler
 * runs in the span's context, so the commit, and the bots the commit wakes, are its children.
 * `createHttpServer` wraps its listener with it only while tracing is on: off, it costs nothing.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { routeOf } from './http-metrics.js';
import { extractTraceContext } from './tracing.js';

/** `listener` with a server span around each request. */
export function traceRequests(listener: RequestListener): RequestListener {
  const tracer = trace.getTracer('pinbot');
  return (req: IncomingMessage, res: ServerResponse) => {
    const parent = extractTraceContext(req.headers);
    const method = req.method ?? 'GET';
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    res.once('close', () => {
      const route = routeOf(req);
      span.updateName(`${method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('pinbot.aborted', true);
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => listener(req, res));
  };
}
