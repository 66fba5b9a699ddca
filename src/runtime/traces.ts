import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { open, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { UserRef } from '../client/types.js';
import { iso } from '../clock/clock.js';
import type { CompiledBot } from './bot.js';
import type { BotEvent, ConditionResult } from './types.js';

/** One step of a traced run. */
export interface TraceStep {
  index: number;
  action: string;
  status: 'done' | 'failed' | 'dry_run' | 'skipped';
  args?: unknown;
  result?: unknown;
  error?: string;
  duration_ms?: number;
  /** Finished by an earlier process (the run was resumed after a restart). */
  resumed?: boolean;
  /** A plugin's failure: the plugin, and the first frame of its own code (`plugins/x.ts:12:5`). */
  plugin?: string;
  frame?: string;
}

/**
 * One rule evaluation: the event, each condition's result, each action with its result or
 * error, the duration — and when the rule did not run, why not.
 */
export interface Trace {
  bot: string;
  version: string;
  rule: string;
  event: { key: string; type: string; summary: string };
  /** ISO time (bot clock) the evaluation started. */
  at: string;
  outcome: 'done' | 'not_run' | 'failed' | 'dry_run' | 'interrupted';
  /** Why not: disabled, cooldown, condition_false, single_running, limit, unauthorized … */
  reason?: string;
  message?: string;
  conditions?: ConditionResult;
  steps: TraceStep[];
  duration_ms: number;
  resumed?: boolean;
  /** The run failed in a plugin: which one, and the first frame of its own code. */
  plugin?: string;
  frame?: string;
}

const MAX_VALUE = 1000;

/** Keeps a traced value small: long values become a truncated JSON text. Internal. */
export function compact(v: unknown): unknown {
  if (v === undefined) return undefined;
  const s = JSON.stringify(v);
  if (s === undefined || s.length <= MAX_VALUE) return v;
  return `${s.slice(0, MAX_VALUE)}…(truncated)`;
}

/** A new trace of a rule's run for an event, with a one-line summary of the event. */
export function startTrace(o: { bot: CompiledBot; rule: string; event: BotEvent; who?: UserRef; at: number; resumed: boolean }): Trace {
  const e = o.event;
  const what = typeof e.payload.content === 'string' ? ` "${e.payload.content.slice(0, 60)}"` : e.payload.amount !== undefined ? ` ${e.payload.amount}` : '';
  return {
    bot: o.bot.name,
    version: o.bot.version,
    rule: o.rule,
    event: { key: e.key, type: e.type, summary: `${e.type}${what}${o.who ? ` from ${o.who.display_name} (${o.who.pin_code})` : ''}` },
    at: iso(o.at),
    outcome: 'done',
    steps: [],
    duration_ms: 0,
    ...(o.resumed ? { resumed: true } : {}),
  };
}

/** Reads the last `limit` traces of a file (offline `pinbot bots trace`). */
export function readTraces(file: string, limit = 100): Trace[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const out: Trace[] = [];
  for (const line of lines.slice(-limit)) {
    try {
      out.push(JSON.parse(line) as Trace);
    } catch {
      // a line torn by a crash: skip it
    }
  }
  return out;
}

/**
 * Traces hold private message text: the folder is made 0700 and the file 0600, also when an
 * older pinbot created them wider (0755/0644). Internal.
 */
function privateFile(file: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (existsSync(file)) chmodSync(file, 0o600);
}

/**
 * The bounded trace history of one bot: the last `limit` runs in memory, appended to a JSONL
 * file (rewritten to the last `limit` when it doubles), so it survives restarts. Writes are
 * batched per tick, in order, and never block the bot; `flush()` waits for them. Traces are
 * diagnostics: they are not fsync'd, and a write error never stops the bot.
 *
 * @example
 * const log = TraceLog.open('data/bots/traces/tip-jar.jsonl', 100);
 * log.add(trace); await log.flush();
 */
export class TraceLog {
  private ring: Trace[];
  private lines: number;
  private chain: Promise<void> = Promise.resolve();
  private queue: string[] = [];
  private handle?: FileHandle;

  private constructor(
    readonly file: string | undefined,
    private limit: number,
  ) {
    this.ring = file ? readTraces(file, limit) : [];
    this.lines = file && existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    if (file) privateFile(file);
  }

  /** Opens the history of a file (or a memory-only one without a file). */
  static open(file: string | undefined, limit: number): TraceLog {
    return new TraceLog(file, limit);
  }

  setLimit(limit: number): void {
    this.limit = limit;
    if (this.ring.length > limit) this.ring = this.ring.slice(-limit);
  }

  add(trace: Trace): void {
    this.ring.push(trace);
    if (this.ring.length > this.limit) this.ring.shift();
    if (!this.file) return;
    this.queue.push(JSON.stringify(trace) + '\n');
    this.lines++;
    // lines added in the same tick go out in one write
    if (this.queue.length === 1) this.chain = this.chain.then(() => this.write()).catch(() => undefined);
  }

  /** Appends the queued lines, or rewrites the file to the ring when it has doubled. Internal. */
  private async write(): Promise<void> {
    const file = this.file!;
    const lines = this.queue.splice(0);
    if (lines.length === 0) return;
    if (this.lines > this.limit * 2) {
      this.lines = this.ring.length;
      await this.handle?.close();
      this.handle = undefined;
      await writeFile(`${file}.tmp`, this.ring.map((t) => JSON.stringify(t) + '\n').join(''), { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      return;
    }
    this.handle ??= await open(file, 'a', 0o600);
    await this.handle.write(lines.join(''));
  }

  /** The last `n` traces, oldest first. */
  list(n = this.limit): Trace[] {
    return this.ring.slice(-n);
  }

  flush(): Promise<void> {
    return this.chain;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.chain;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }
}
