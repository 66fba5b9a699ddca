import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { spawnServe, type ServeChild } from '../helpers/serve-child.js';

const HOOK = join(import.meta.dirname, '../helpers/record-loads.mjs');
/** Modules of the OpenTelemetry SDK (the API, `@opentelemetry/api`, is always there: a few no-ops). */
const SDK = /\/node_modules\/@opentelemetry\/(?!api\/)[^/]+\//;

let child: ServeChild | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  child?.proc.kill('SIGKILL');
  child = undefined;
  for (const c of cleanups.splice(0)) c();
});

/** `pinbot serve` with `env`, some traffic, a clean stop: the module URLs it resolved. */
async function loadsOf(env: Record<string, string>): Promise<{ urls: string[]; lines: string[] }> {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const file = join(tmp.dir, 'loads.txt');
  writeFileSync(file, '');
  const cleared = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' };
  child = await spawnServe(['--data', join(tmp.dir, 'data'), '--no-bots'], {
    ...cleared,
    ...env,
    PINBOT_FROM_SOURCE: '1',
    PINBOT_RECORD_LOADS: file,
    NODE_OPTIONS: `--import=${HOOK}`,
  });
  for (const path of ['/healthz', '/metrics', '/api/v1/me', '/openapi.json'])
    await (await fetch(`${child.url}${path}`)).text();
  child.proc.kill('SIGTERM');
  await child.exited;
  return { urls: readFileSync(file, 'utf8').split('\n').filter(Boolean), lines: child.lines };
}

describe('OpenTelemetry costs nothing unless asked for', () => {
  it('with no exporter configured, `pinbot serve` loads no module of the SDK; with one, it does', {
    timeout: 120_000,
  }, async () => {
    const off = await loadsOf({});
    // the recorder works: the server's own modules and the API are there
    expect(off.urls.some((u) => u.endsWith('/src/telemetry/tracing.ts'))).toBe(true);
    expect(off.urls.some((u) => u.includes('/node_modules/@opentelemetry/api/'))).toBe(true);
    expect(off.urls.filter((u) => SDK.test(u))).toEqual([]);
    expect(off.urls.some((u) => u.endsWith('/src/telemetry/otel-sdk.ts'))).toBe(false);

    // an exporter (a port nothing listens on: the spans are lost, the server does not mind)
    const on = await loadsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(on.urls.some((u) => u.includes('/node_modules/@opentelemetry/sdk-node/'))).toBe(true);
    expect(on.lines.some((l) => l.includes('traces: exported with OpenTelemetry'))).toBe(true);
  });
});
