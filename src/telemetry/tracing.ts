/**
 * OpenTelemetry traces. The code speaks only `@opentelemetry/api` (a few kB, no-ops until an SDK
 * registers); the SDK (`@opentelemetry/sdk-node`, telemetry/otel-sdk.ts) is imported, and
 * configured by the standard `OTEL_*` environment variables, only when an exporter is asked for
 * (`tracingWanted`). Until then every helper here is one flag test: no span, no context, no
 * AsyncLocalStorage (which on Node 20 would cost every promise of the process).
 *
 * One trace follows a message (docs/operations.md "Traces"): the sender's request (server span)
 * → its commit → the bot woken → the poll → the rule run (bot, rule, outcome, reason) → each step
 * → the bot's own API request (client span, `traceparent` sent, so a remote pinbot's server span
 * joins the trace).
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Context, Span } from '@opentelemetry/api';

/**
 * `@opentelemetry/api`, loaded when tracing starts: every function below does nothing (or only
 * calls its `fn`) while tracing is off, so a process that never traces never loads it (its
 * CommonJS build is some 40 files: a tenth of `pinbot bots validate`'s start-up). Internal.
 */
let api: typeof OtelApi | undefined;

/**
 * The API's span kinds and status codes (OpenTelemetry's numbering, fixed by its
 * specification), so callers can name them while the API is not loaded.
 */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const satisfies Record<
  keyof typeof OtelApi.SpanKind,
  OtelApi.SpanKind
>;
export type SpanKind = OtelApi.SpanKind;
export const SpanStatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const satisfies Record<
  keyof typeof OtelApi.SpanStatusCode,
  OtelApi.SpanStatusCode
>;

let on = false;
let stopSdk: (() => Promise<void>) | undefined;

/** Whether spans are being made (an SDK was started). */
export function tracingOn(): boolean {
  return on;
}

/**
 * Whether the environment asks for trace export: `OTEL_TRACES_EXPORTER` (not `none`), or an
 * OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); never
 * with `OTEL_SDK_DISABLED=true`.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters?.length) return !exporters.every((e) => e === 'none');
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the SDK when the environment asks for it (`tracingWanted`), before the server is
 * made; returns whether it did. `warn` hears the SDK's warnings and errors (an exporter that
 * cannot reach its collector). `stopTracing` flushes and stops it.
 *
 * @example if (await startTracing()) log.info('traces: exported (OTEL_*)');
 */
export async function startTracing(
  env: NodeJS.ProcessEnv = process.env,
  warn: (msg: string) => void = () => undefined,
): Promise<boolean> {
  if (on || !tracingWanted(env)) return on;
  api = await import('@opentelemetry/api');
  const { startSdk } = await import('./otel-sdk.js');
  stopSdk = await startSdk(env, warn);
  on = true;
  return true;
}

/** Exports what is left and stops the SDK (a clean shutdown); nothing when it was not started. */
export async function stopTracing(): Promise<void> {
  const stop = stopSdk;
  on = false;
  stopSdk = undefined;
  await stop?.();
}

/** The tracer of pinbot's spans. Internal. */
const tracer = () => api!.trace.getTracer('pinbot');

/**
 * Runs `fn` in a span `name` (a child of the active one, or of `parent`), ending it when `fn`
 * settles: an error sets the span's status and is rethrown; `fn` may set attributes on it. With
 * tracing off it is `fn()` itself.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => T,
  o: { kind?: SpanKind; parent?: Context } = {},
): T {
  if (!on || !api) return fn(undefined);
  const { context, trace } = api;
  const span = tracer().startSpan(
    name,
    { kind: o.kind ?? SpanKind.INTERNAL, attributes },
    o.parent ?? context.active(),
  );
  const end = (err?: unknown) => {
    if (err !== undefined) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
    }
    span.end();
  };
  let out: T;
  try {
    out = context.with(trace.setSpan(o.parent ?? context.active(), span), () => fn(span));
  } catch (err) {
    end(err);
    throw err;
  }
  if (out instanceof Promise) {
    return out.then(
      (v) => (end(), v),
      (err: unknown) => {
        end(err);
        throw err;
      },
    ) as T;
  }
  end();
  return out;
}

/**
 * A span for a moment (a bot woken by a commit), a child of the active span; returns the context
 * under it (what follows from that moment goes there). Undefined with tracing off.
 */
export function markSpan(name: string, attributes: Attributes): Context | undefined {
  if (!on || !api) return undefined;
  const { context, trace } = api;
  const parent = context.active();
  const span = tracer().startSpan(name, { attributes }, parent);
  span.end();
  return trace.setSpan(parent, span);
}

/**
 * The empty context while the API is not loaded (nothing is traced then): it holds nothing, and
 * a value set on it lands on the API's own root context once tracing has started. Internal.
 */
const ROOT: Context = {
  getValue: () => undefined,
  setValue: (key, value) => (api ? api.ROOT_CONTEXT.setValue(key, value) : ROOT),
  deleteValue: () => ROOT,
};

/** The empty context: a span started under it begins a trace of its own (a scenario's). */
export function rootContext(): Context {
  return api?.ROOT_CONTEXT ?? ROOT;
}

/** The active context, to resume later (`inSpan(…, { parent })`); undefined with tracing off. */
export function activeContext(): Context | undefined {
  return on ? api?.context.active() : undefined;
}

/** The most events whose cause (the span that polled them) is kept for their rule runs. */
const MAX_CAUSES = 1000;
const causes = new Map<string, Context>();

/**
 * Notes the span an event arrived in (its bot's poll, woken by the commit that made it), so the
 * rule runs of that event are its children though they run later, from the bot's inbox.
 */
export function rememberCause(key: string, ctx: Context): void {
  causes.delete(key);
  causes.set(key, ctx);
  if (causes.size > MAX_CAUSES) causes.delete(causes.keys().next().value!);
}

/** The span an event arrived in (`rememberCause`), if still known. */
export function causeOf(key: string): Context | undefined {
  return on ? causes.get(key) : undefined;
}

/** Adds the W3C `traceparent` (and `tracestate`) of the active span to outgoing `headers`. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if (on && api) api.propagation.inject(api.context.active(), headers);
}

/** The context a request's `traceparent` names (the root context without one). */
export function extractTraceContext(headers: Record<string, string | string[] | undefined>): Context {
  return api ? api.propagation.extract(api.context.active(), headers) : ROOT;
}

export type { Context, Span };
