/**
 * The OpenTelemetry SDK, imported only by `startTracing` when the environment asks for trace
 * export (telemetry/tracing.ts): `@opentelemetry/sdk-node` configured by the standard `OTEL_*`
 * variables — `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`), `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/protobuf`, the default, `http/json` or `grpc`), `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_SERVICE_NAME` (default `pinbot`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
 * `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`. Traces only: pinbot's metrics are Prometheus
 * (`GET /metrics`), and it logs with pino, so the SDK's metric and log pipelines are left empty,
 * and no auto-instrumentation is loaded (pinbot makes its own spans). Internal to telemetry/.
 */
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

/** Starts the SDK; returns its shutdown (flushes the spans not yet exported). */
export async function startSdk(env: NodeJS.ProcessEnv, warn: (msg: string) => void): Promise<() => Promise<void>> {
  const say = (...args: unknown[]) =>
    warn(args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  const quiet = () => undefined;
  diag.setLogger({ error: say, warn: say, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'pinbot' }),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return () => sdk.shutdown();
}
