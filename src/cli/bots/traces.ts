import { askServer } from '../admin-client.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { AdminError } from '../../admin/errors.js';
import { loadConfig } from '../../config/load.js';
import type { Trace } from '../../runtime/index.js';
import { serverRunning } from './shared.js';

/** Where `bots trace --scenario` and `bots what-if` read from. Internal. */
export interface TraceSource {
  data: string;
  config: string;
}

/**
 * A bot's recorded traces, the newest `limit`, and whether a change waits for a virtual clock:
 * from the running server (admin socket, which checks `limit`), else from the data directory's
 * trace files (or the database with driver postgres). `pinbot bots trace`, `--scenario` and
 * `bots what-if` read them here. Internal.
 */
export async function readBotTraces(
  name: string,
  o: TraceSource,
  limit: string | number,
): Promise<{ traces: Trace[]; waiting?: string }> {
  const dataDir = resolve(o.data);
  // a running server has the newest traces
  if (serverRunning(dataDir)) {
    return askServer(dataDir, 'bots.trace', { name, limit: String(limit) });
  }
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1) throw new AdminError('--limit must be a whole number ≥ 1');
  const config = loadConfig(o.config);
  const { offlineTraces } = await import('../../deployment/index.js');
  // with PostgreSQL the history is in the database, whichever process ran the bot
  const { traces, where } = await offlineTraces({ config, dataDir, name, limit: n });
  if (!traces) throw new AdminError(`no traces for a bot named ${name} in ${where}; see \`pinbot bots list\``);
  return { traces };
}

/** `readBotTraces` without the waiting note. Internal. */
export async function botTraces(name: string, o: TraceSource, limit: number): Promise<Trace[]> {
  return (await readBotTraces(name, o, limit)).traces;
}

/** The file of the configured bots folder whose `name:` is `name`. Internal. */
export function botFileNamed(name: string, configFile: string): string {
  const dir = resolve(loadConfig(configFile).bots.dir);
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
    : [];
  for (const f of files) {
    try {
      if ((parse(readFileSync(join(dir, f), 'utf8')) as { name?: unknown } | null)?.name === name) return join(dir, f);
    } catch {
      // an invalid file is not the bot that ran
    }
  }
  throw new AdminError(
    `no bot file named ${name} in ${dir} (the bots folder of ${configFile}): the scenario runs the bot's file`,
  );
}

/** `--scenario RUN [--out FILE]`: the scenario text, and the file it goes to (undefined: stdout). Internal. */
export async function traceScenario(
  name: string,
  run: string,
  o: TraceSource & { out?: string },
): Promise<{ text: string; out?: string }> {
  const { scenarioFromTrace, FromTraceError } = await import('../../scenario/from-trace.js');
  const traces = await botTraces(name, o, 1000);
  const botFile = botFileNamed(name, o.config);
  // paths in a scenario are relative to its file: to --out's folder, else to ./scenarios (where scenarios live)
  const dir = o.out ? dirname(resolve(o.out)) : existsSync('scenarios') ? resolve('scenarios') : process.cwd();
  try {
    return { text: scenarioFromTrace({ traces, run, botFile: relative(dir, botFile), dir }), out: o.out };
  } catch (err) {
    if (err instanceof FromTraceError) throw new AdminError(err.message);
    throw err;
  }
}
