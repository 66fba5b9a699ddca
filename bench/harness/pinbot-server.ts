import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { spawnServer, type ServerProcess } from './server-process.js';

/**
 * Starts `node bin/pinbot.js serve --data DATA --port 0 --no-bots` (with `bots: true`, without
 * `--no-bots`) on the server CPU with a
 * config file (written into `runDir`) that turns rate limits off, as load tests need.
 * With `BENCH_CPU_PROF=DIR` in the environment the server writes a `.cpuprofile` into DIR/NAME on
 * stop, as every server of the bench does (server-process.ts).
 *
 * @example
 * const srv = await startPinbot({ name: 'pinbot', runDir: tmp.dir, dataDir: join(tmp.dir, 'data') });
 */
export function startPinbot({
  name = 'pinbot',
  runDir,
  dataDir,
  config = {},
  timeoutMs,
  bots = false,
  bin = 'bin/pinbot.js',
}: {
  name?: string;
  runDir: string;
  dataDir: string;
  config?: Record<string, unknown>;
  timeoutMs?: number;
  bots?: boolean;
  /** The `pinbot` script to run (another checkout's, to compare two builds side by side). */
  bin?: string;
}): Promise<ServerProcess> {
  const configFile = join(runDir, `${name}.config.yaml`);
  writeFileSync(configFile, stringify({ rate_limits: { enabled: false }, log: { level: 'info' }, ...config }));
  return spawnServer({
    name,
    args: [bin, 'serve', '--data', dataDir, '--port', '0', ...(bots ? [] : ['--no-bots']), '--config', configFile],
    timeoutMs,
  });
}

/** Sends one request and returns the status and parsed body (to check a route before loading it). */
export async function probe(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}
