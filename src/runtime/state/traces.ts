import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { UserRef } from '../../client/types.js';
import { iso } from '../../clock/clock.js';
import { Serial } from '../../util/serial.js';
import type { CompiledBot } from '../define/bot.js';
import type { TraceReason } from '../contract/trace-reasons.js';
import type { BotEvent, ConditionResult } from '../contract/types.js';

/** One step of a traced run. */
export interface TraceStep {
  index: number;
  action: string;
  status: 'done' | 'failed' | 'dry_run' | 'skipped' | 'waiting';
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
 * What a rule's decision read, kept so the decision can be replayed against an edited bot
 * (`pinbot bots what-if`): the bot's variables and the contact checks its conditions made.
 * Bounded: variables whose JSON is longer than REPLAY_MAX are left out (`vars_omitted`).
 */
export interface TraceSeen {
  vars?: Record<string, unknown>;
  vars_omitted?: true;
  /** PIN → whether it was a contact of the bot, as the conditions asked. */
  contacts?: Record<string, boolean>;
  /** The user the bot acts as. */
  me?: UserRef;
}

/**
 * One rule evaluation: the event, each condition's result, each action with its result or
 * error, the duration — and when the rule did not run, why not.
 */
export interface Trace {
  bot: string;
  version: string;
  rule: string;
  /**
   * The event; `payload` as the bot saw it (for replay and for a scenario made from the trace),
   * left out when its JSON is longer than REPLAY_MAX (`payload_omitted`); `ts` its server time.
   */
  event: {
    key: string;
    type: string;
    summary: string;
    payload?: Record<string, unknown>;
    payload_omitted?: true;
    ts?: number;
  };
  /** What the decision read (absent in traces written before it was recorded, and on resumed runs). */
  seen?: TraceSeen;
  /** ISO time (bot clock) the evaluation started. */
  at: string;
  outcome: 'done' | 'not_run' | 'failed' | 'dry_run' | 'interrupted' | 'waiting';
  /** Why not, or why it stopped: a code of the catalogue (contract/trace-reasons.ts). */
  reason?: TraceReason;
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
/** The largest event payload or variables a trace keeps for replay (JSON characters). */
export const REPLAY_MAX = 8_000;

/** `value` when its JSON fits in REPLAY_MAX, else undefined. Internal. */
export function replayable<T>(value: T): T | undefined {
  const s = JSON.stringify(value);
  return s !== undefined && s.length <= REPLAY_MAX ? value : undefined;
}

/** Keeps a traced value small: long values become a truncated JSON text. Internal. */
export function compact(v: unknown): unknown {
  if (v === undefined) return undefined;
  // a short text, a number, a boolean: its JSON cannot be over MAX_VALUE (6 characters at most
  // per character, \uXXXX, and the quotes)
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'string' && v.length * 6 + 2 <= MAX_VALUE) return v;
  const s = JSON.stringify(v);
  if (s === undefined || s.length <= MAX_VALUE) return v;
  return `${s.slice(0, MAX_VALUE)}…(truncated)`;
}

/** A new trace of a rule's run for an event, with a one-line summary of the event. */
export function startTrace(o: {
  bot: CompiledBot;
  rule: string;
  event: BotEvent;
  who?: UserRef;
  at: number;
  resumed: boolean;
}): Trace {
  const e = o.event;
  const what =
    typeof e.payload.content === 'string'
      ? ` "${e.payload.content.slice(0, 60)}"`
      : e.payload.amount !== undefined
        ? ` ${e.payload.amount}`
        : '';
  return {
    bot: o.bot.name,
    version: o.bot.version,
    rule: o.rule,
    event: {
      key: e.key,
      type: e.type,
      summary: `${e.type}${what}${o.who ? ` from ${o.who.display_name} (${o.who.pin_code})` : ''}`,
      ...(replayable(e.payload) ? { payload: e.payload } : { payload_omitted: true as const }),
      ...(e.ts !== undefined ? { ts: e.ts } : {}),
    },
    at: iso(o.at),
    outcome: 'done',
    steps: [],
    duration_ms: 0,
    ...(o.resumed ? { resumed: true } : {}),
  };
}

/**
 * The trace of a start whose file changed variables (`vars.cap: 10 → 3 from the file`): no
 * rule ran (`rule` is `(file)`, the event type `vars`), it says what the bot's variables are now.
 */
export function varsTrace(bot: CompiledBot, boot: number, at: number, message: string): Trace {
  const event = { key: `vars:${boot}`, type: 'vars', summary: 'the file changed vars' };
  return {
    bot: bot.name,
    version: bot.version,
    rule: '(file)',
    event,
    at: iso(at),
    outcome: 'done',
    message,
    steps: [],
    duration_ms: 0,
  };
}

/** Whether a trace is of a rule's run (not a start's note, like varsTrace). */
export const isRun = (t: Trace): boolean => t.event.type !== 'vars';

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
 * Where a bot's trace history is kept beyond the process: a JSONL file per bot (the file
 * driver, `TraceLog.open`) or the database (driver postgres, deployment/pg-traces.ts). A
 * TraceLog calls `append` with the traces of one tick, in order, one call at a time; a failed
 * call loses those traces (they are diagnostics) and never stops the bot.
 */
export interface TraceArchive {
  /** The newest `limit` traces, oldest first. */
  load(limit: number): Promise<Trace[]>;
  /** Appends traces (oldest first). `keep`: the history's current bound; older ones may be dropped. */
  append(traces: readonly Trace[], keep: number): Promise<void>;
  close?(): Promise<void>;
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
 * The trace history of a bot in a JSONL file: appended to, and rewritten to the newest `keep`
 * lines once it holds more than twice that (so reading it stays cheap). Not fsync'd. An append is
 * one write(2) to the page cache, made at once (as pino writes its files): it never waits for the
 * disk, and costs no thread-pool round trip — on a busy server that round trip, one per run
 * finished, was a tenth of the main thread's time (bench bots-throughput). Internal.
 */
class FileTraceArchive implements TraceArchive {
  private lines: number;
  private fd?: number;
  /**
   * The first lines of the file that may be torn (cut by a crash, or a later line appended to
   * such a cut): those it held when opened, or all after an append failed half way. The lines
   * this process appended whole need no check when the file is rewritten.
   */
  private unsure: number;

  constructor(readonly file: string) {
    this.lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    this.unsure = this.lines;
    privateFile(file);
  }

  loadSync(limit: number): Trace[] {
    return readTraces(this.file, limit);
  }

  async load(limit: number): Promise<Trace[]> {
    return this.loadSync(limit);
  }

  async append(traces: readonly Trace[], keep: number): Promise<void> {
    const text = traces.map((t) => JSON.stringify(t) + '\n').join('');
    this.lines += traces.length;
    if (this.lines > keep * 2) {
      this.closeFd();
      // the newest `keep` whole lines of the file and of this batch (a line torn by a crash goes)
      const old = await readFile(this.file, 'utf8').catch(() => '');
      // read from the end: only the lines kept that may be torn are parsed
      const all = (old + text).split('\n');
      const kept: string[] = [];
      // `n`: the number of line `i` among the non-empty ones, counted down from the last
      let n = all.reduce((count, l) => (l ? count + 1 : count), 0);
      for (let i = all.length - 1; i >= 0 && kept.length < keep; i--) {
        if (!all[i]) continue;
        n--;
        if (n >= this.unsure || parses(all[i]!)) kept.push(all[i]!);
      }
      kept.reverse();
      this.lines = kept.length;
      this.unsure = 0;
      await writeFile(`${this.file}.tmp`, kept.map((l) => l + '\n').join(''), { mode: 0o600 });
      await rename(`${this.file}.tmp`, this.file);
      return;
    }
    this.fd ??= openSync(this.file, 'a', 0o600);
    const bytes = Buffer.from(text);
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done);
    } catch (err) {
      // part of the batch may be in the file: any line may be torn now
      this.unsure = Number.POSITIVE_INFINITY;
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closeFd();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // closed already: nothing is lost (every append was written)
    }
    this.fd = undefined;
  }
}

/** Tells `onError` (whose own failure must not stop the bot either). Internal. */
function report(onError: ((err: unknown) => void) | undefined, err: unknown): void {
  try {
    onError?.(err);
  } catch {
    // nothing more to do
  }
}

/** Whether a line is whole JSON. Internal. */
function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bounded trace history of one bot: the last `limit` runs in memory, kept in an archive (a
 * JSONL file, or the database with several processes) so it survives restarts and moves. Writes
 * are batched per tick, in order, and never wait for the disk; `flush()` waits for them. Traces are
 * diagnostics: they are not fsync'd, and a write error never stops the bot.
 *
 * @example
 * const log = TraceLog.open('data/bots/traces/tip-jar.jsonl', 100);
 * log.add(trace); await log.flush();
 */
export class TraceLog {
  private ring: Trace[];
  private readonly writes = new Serial();
  private queue: Trace[] = [];
  /** The last write failed (its error was reported; the next one is reported once it works again). */
  private failing = false;
  /** Told of each trace as it is added (the web console's live timeline); its errors are ignored. */
  onAdd?: (trace: Trace) => void;

  private constructor(
    private readonly archive: TraceArchive | undefined,
    loaded: Trace[],
    private limit: number,
    private readonly onError?: (err: unknown) => void,
  ) {
    this.ring = loaded.slice(-limit);
  }

  /** Opens the history of a file (or a memory-only one without a file). */
  static open(file: string | undefined, limit: number): TraceLog {
    if (!file) return new TraceLog(undefined, [], limit);
    const archive = new FileTraceArchive(file);
    return new TraceLog(archive, archive.loadSync(limit), limit);
  }

  /**
   * Opens the history kept in `archive`, with its newest `limit` traces. An archive that cannot
   * be read gives an empty history (reported to `onError`): the bot runs anyway. `onError`
   * also hears of a failed write — once, until a write works again.
   *
   * @example const log = await TraceLog.over(pgTraceArchive(pool, 'pinbot', 'tip-jar'), 100);
   */
  static async over(archive: TraceArchive, limit: number, onError?: (err: unknown) => void): Promise<TraceLog> {
    let loaded: Trace[] = [];
    try {
      loaded = await archive.load(limit);
    } catch (err) {
      report(onError, err);
    }
    return new TraceLog(archive, loaded, limit, onError);
  }

  setLimit(limit: number): void {
    this.limit = limit;
    if (this.ring.length > limit) this.ring = this.ring.slice(-limit);
  }

  add(trace: Trace): void {
    try {
      this.onAdd?.(trace);
    } catch {
      // news of a trace never stops the bot
    }
    this.ring.push(trace);
    if (this.ring.length > this.limit) this.ring.shift();
    if (!this.archive) return;
    this.queue.push(trace);
    // traces added in the same tick go out in one write
    if (this.queue.length === 1) void this.writes.run(() => this.write()).catch(() => undefined);
  }

  /** Hands the queued traces to the archive. Internal. */
  private async write(): Promise<void> {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    try {
      await this.archive!.append(batch, this.limit);
      this.failing = false;
    } catch (err) {
      if (!this.failing) report(this.onError, err);
      this.failing = true;
    }
  }

  /** The last `n` traces, oldest first. */
  list(n = this.limit): Trace[] {
    return this.ring.slice(-n);
  }

  flush(): Promise<void> {
    return this.writes.idle();
  }

  /** Writes what is queued and closes the archive. */
  async close(): Promise<void> {
    await this.writes.idle();
    await this.archive?.close?.().catch(() => undefined);
  }
}
