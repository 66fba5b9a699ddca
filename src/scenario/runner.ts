import { iso, systemClock } from '../clock/clock.js';
import type { ScenarioStepView } from '../console/scenario-port.js';
import { parseDuration } from '../util/duration.js';
import { withSeed } from '../util/random.js';
import type { ScenarioCoverage } from './coverage/collect.js';
import { locate } from '../util/yaml-errors.js';
import { embeddedTarget } from './embedded-target.js';
import type { LoadedScenario } from './load.js';
import { remoteTarget } from './remote-target.js';
import { evalCondition, render } from './templates.js';
import {
  StepFailure,
  type EventKind,
  type EventWindow,
  type KeptServer,
  type StepContext,
  type StepNode,
  type Target,
} from './types.js';
import { inSpan, rootContext, SpanStatusCode, tracingOn } from '../telemetry/tracing.js';

/**
 * How one step went: what the web console shows of it (`ScenarioStepView`: id, label, status,
 * ms, clock, where, error, diff) and what only the reporters show.
 */
export interface StepResult extends ScenarioStepView {
  detail?: string;
  logs?: string[];
  curl?: string;
  attempts?: number;
  children?: StepResult[];
}

/** How one scenario went. */
export interface ScenarioResult {
  file: string;
  name: string;
  tags: string[];
  seed: number;
  mode: 'embedded' | 'remote';
  status: 'passed' | 'failed';
  /** When it started, by the wall clock (ISO) — not the scenario's virtual clock. */
  started: string;
  ms: number;
  /** The scenario's clock at the end (ISO). */
  clock: string;
  steps: StepResult[];
  /** A failure before the first step (setting up the server, users or bots). */
  error?: string;
  /** `--keep`: the failed scenario's server, left up (its curl lines work against it). */
  kept?: KeptServer;
  /** `--coverage`: what the run exercised (embedded runs). */
  coverage?: ScenarioCoverage;
}

/** Told as a run goes, for live reports. */
export interface RunListener {
  scenarioStart?(sc: LoadedScenario): void;
  stepEnd?(sc: LoadedScenario, step: StepResult): void;
  scenarioEnd?(result: ScenarioResult): void;
}

export interface RunScenarioOptions {
  remote?: { url: string; keys: Record<string, string> };
  listener?: RunListener;
  /** Skip the remaining steps once set (--bail stops others at their next step). */
  stop?: { stopped: boolean };
  /**
   * `--keep`: a failed scenario's embedded server is not stopped; it is handed here (with what
   * stops it), and its result says where it is.
   */
  keep?: (kept: KeptServer & { name: string; file: string; close(): Promise<void> }) => void;
  /** Count what the run exercises (`--coverage`): the result's `coverage`. */
  coverage?: boolean;
}

const DEFAULT_EVERY = '1s';
const elapsed = (t0: number) => Math.round(performance.now() - t0);

/**
 * Runs one scenario: a fresh embedded server on its own virtual clock (or the remote server),
 * the steps in order; after a failed step the rest are skipped.
 *
 * With tracing on (OTEL_*), one trace per scenario: a span `pinbot.scenario`, a span per step,
 * and the embedded server's and bots' spans under the steps that caused them.
 *
 * @example const result = await runScenario(scenario, { listener: consoleListener });
 */
export function runScenario(sc: LoadedScenario, o: RunScenarioOptions = {}): Promise<ScenarioResult> {
  if (!tracingOn()) return runSeeded(sc, o);
  return inSpan(
    'pinbot.scenario',
    { 'pinbot.scenario': sc.name, 'pinbot.scenario.file': sc.file },
    async (span) => {
      const r = await runSeeded(sc, o);
      span?.setAttribute('pinbot.scenario.status', r.status);
      if (r.status === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR, message: r.error });
      return r;
    },
    { parent: rootContext() },
  );
}

/**
 * `runScenario` without its span: embedded, the scenario's PINs, ids and keys come from its
 * seed, so a run repeats them. Internal. */
function runSeeded(sc: LoadedScenario, o: RunScenarioOptions): Promise<ScenarioResult> {
  if (o.remote) return runSteps(sc, o);
  return withSeed(sc.seed, (source) => {
    source.now = () => sc.start;
    return runSteps(sc, o);
  });
}

/** runScenario's work, in the seeded context of an embedded run. Internal. */
async function runSteps(sc: LoadedScenario, o: RunScenarioOptions): Promise<ScenarioResult> {
  const t0 = performance.now();
  o.listener?.scenarioStart?.(sc);
  const mode = o.remote ? 'remote' : 'embedded';
  const base = {
    file: sc.file,
    name: sc.name,
    tags: sc.tags,
    seed: sc.seed,
    mode,
    started: new Date(systemClock.now()).toISOString(),
  } as const;
  let target: Target;
  try {
    target = o.remote
      ? await remoteTarget(sc, o.remote.url, o.remote.keys)
      : await embeddedTarget(sc, { coverage: o.coverage });
  } catch (err) {
    const r: ScenarioResult = {
      ...base,
      status: 'failed',
      ms: elapsed(t0),
      clock: iso(sc.start),
      steps: skipAll(sc.steps, ''),
      error: `setting up: ${(err as Error).message}`,
    };
    o.listener?.scenarioEnd?.(r);
    return r;
  }
  const run = new ScenarioRun(sc, o, target);
  let steps: StepResult[] = [];
  let end = iso(sc.start);
  let kept: KeptServer | undefined;
  try {
    await run.openWindows('start', 'start');
    steps = await run.runNodes(sc.steps, '', true);
  } finally {
    end = iso(target.now());
    if (run.failed && o.keep && target.keep) {
      kept = target.keep();
      o.keep({ ...kept, name: sc.name, file: sc.file, close: () => target.close() });
    } else await target.close().catch(() => undefined);
  }
  const r: ScenarioResult = {
    ...base,
    status: run.failed ? 'failed' : 'passed',
    ms: elapsed(t0),
    clock: end,
    steps,
    ...(kept ? { kept } : {}),
    ...(target.coverage ? { coverage: target.coverage() } : {}),
  };
  o.listener?.scenarioEnd?.(r);
  return r;
}

/** One run of a scenario's steps on its target: scopes, captures, windows. Internal. */
class ScenarioRun {
  failed = false;
  private readonly scopes: Array<Record<string, unknown>>;
  private readonly claimed = new Set<string>();
  /** The window of each step that looks back to the start of the last step that acted (expect_none). */
  private readonly windows = new Map<StepNode, EventWindow>();
  private readonly openers: Map<StepNode | 'start', StepNode[]>;
  private readonly keys: string[];

  constructor(
    private readonly sc: LoadedScenario,
    private readonly o: RunScenarioOptions,
    private readonly target: Target,
  ) {
    this.keys = Object.values(target.users)
      .map((u) => u.api_key)
      .filter(Boolean);
    const runId = o.remote ? `${sc.seed.toString(36)}-${systemClock.now().toString(36)}` : sc.seed.toString(36);
    this.scopes = [
      {
        ...structuredClone(sc.vars),
        users: structuredClone(target.users),
        mode: o.remote ? 'remote' : 'embedded',
        seed: sc.seed,
        run_id: runId,
        scenario: { name: sc.name, file: sc.file },
      },
    ];
    this.openers = windowOpeners(sc.steps);
  }

  /** A text with every user's API key cut to its prefix. */
  readonly mask = (s: string) => this.keys.reduce((acc, k) => acc.split(k).join(`${k.slice(0, 7)}***`), s);

  /** A scope with the clock's variables as of now. */
  private live(scope: Record<string, unknown>): Record<string, unknown> {
    return Object.assign(scope, { now: iso(this.target.now()), now_ms: this.target.now() });
  }

  /** Notes the events a step about to start may be asked about by a later `expect_none`. */
  async openWindows(opener: StepNode | 'start', id: string): Promise<void> {
    const watchers = this.openers.get(opener);
    if (!watchers) return;
    const win = await snapshot(
      this.target,
      watchers.flatMap((w) => w.kind.windowKinds!(w.raw)),
      id,
    );
    for (const w of watchers) this.windows.set(w, win);
  }

  /** Steps in order; after a failure (or a stop) the rest are skipped. */
  async runNodes(nodes: StepNode[], prefix: string, top: boolean): Promise<StepResult[]> {
    const out: StepResult[] = [];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      const id = `${prefix}${i + 1}`;
      if (this.failed || this.o.stop?.stopped) {
        out.push(...skipAll([node], prefix, i));
        if (top) this.o.listener?.stepEnd?.(this.sc, out.at(-1)!);
        continue;
      }
      await this.openWindows(node, id);
      const r = await this.runNode(node, id);
      out.push(r);
      if (r.status === 'failed') this.failed = true;
      if (top) this.o.listener?.stepEnd?.(this.sc, r);
    }
    return out;
  }

  /** A step, in a span `pinbot.scenario.step` when tracing is on. */
  private runNode(node: StepNode, id: string): Promise<StepResult> {
    return inSpan(
      'pinbot.scenario.step',
      { 'pinbot.step.id': id, 'pinbot.step.kind': node.kind.name },
      async (span) => {
        const r = await this.runNodeUntraced(node, id);
        span?.setAttributes({ 'pinbot.step.label': r.label, 'pinbot.step.status': r.status });
        if (r.status === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR, message: r.error });
        return r;
      },
    );
  }

  private async runNodeUntraced(node: StepNode, id: string): Promise<StepResult> {
    const raw = node.raw;
    const scope = this.scopes.at(-1)!;
    const label = shownLabel(raw.name ?? node.kind.label(raw), scope);
    const t = performance.now();
    const pos = locate(node.located, node.path);
    const result: StepResult = {
      id,
      label,
      status: 'passed',
      ms: 0,
      clock: '',
      where: `${node.located.file}:${pos.line}:${pos.col}`,
    };
    try {
      if (raw.if !== undefined && !evalCondition(raw.if, this.live(scope))) {
        result.status = 'skipped';
        result.detail = `if ${JSON.stringify(raw.if)} is false`;
      } else {
        if (node.kind.embeddedOnly && this.target.mode === 'remote')
          throw new StepFailure(`step ${id} (${label}): ${node.kind.embeddedOnly}`);
        await this.iterate(node, scope, result);
      }
    } catch (err) {
      result.status = 'failed';
      result.error = this.mask((err as Error).message);
      if (err instanceof StepFailure)
        Object.assign(
          result,
          err.extra.diff ? { diff: err.extra.diff } : {},
          err.extra.curl ? { curl: err.extra.curl } : {},
        );
    }
    result.ms = elapsed(t);
    result.clock = iso(this.target.now());
    return result;
  }

  /** A step once, or once per `repeat` / `for_each` item (with `index` and `item`). */
  private async iterate(node: StepNode, scope: Record<string, unknown>, result: StepResult): Promise<void> {
    const raw = node.raw;
    const items: Array<{ item?: unknown; index?: number }> = [];
    if (raw.repeat !== undefined) for (let k = 0; k < raw.repeat; k++) items.push({ index: k });
    else if (raw.for_each !== undefined) {
      const list = render(raw.for_each, this.live(scope));
      if (!Array.isArray(list)) throw new StepFailure(`for_each: expected a list, found ${JSON.stringify(list)}`);
      list.forEach((item, index) => items.push({ item, index }));
    } else items.push({});
    for (const [k, loop] of items.entries()) {
      const inner = 'index' in loop ? { ...scope, ...loop } : scope;
      if (inner !== scope) this.scopes.push(inner);
      try {
        await this.once(node, inner, result);
      } catch (err) {
        if (items.length > 1 && err instanceof Error)
          err.message = `iteration ${k + 1} of ${items.length}: ${err.message}`;
        throw err;
      } finally {
        if (inner !== scope) this.scopes.pop();
      }
    }
    if (items.length > 1) result.detail = `${items.length} times${result.detail ? `; last: ${result.detail}` : ''}`;
  }

  /** What a step's kind is given to run. */
  private context(node: StepNode, scope: Record<string, unknown>, result: StepResult): StepContext {
    return {
      target: this.target,
      scope,
      node,
      claimed: this.claimed,
      mask: this.mask,
      window: this.windows.get(node),
      seed: this.sc.seed,
      config: this.sc.config,
      capture: (name, value) => this.scopes.forEach((s) => (s[name] = value)),
      render: <T>(v: unknown) => render(v, this.live(scope)) as T,
      runChildren: async (children, vars) => {
        this.scopes.push({ ...scope, ...vars });
        try {
          result.children = await this.runNodes(children, `${result.id}.`, false);
        } finally {
          this.scopes.pop();
        }
        const bad = result.children.find((c) => c.status === 'failed');
        if (bad) throw new StepFailure(`step ${bad.id} (${bad.label}) failed`);
      },
    };
  }

  /** One run of a step's kind; with `eventually`, again until it passes or its time is up. */
  private async once(node: StepNode, scope: Record<string, unknown>, result: StepResult): Promise<void> {
    this.live(scope);
    const ctx = this.context(node, scope, result);
    const ev = node.raw.eventually as { within: string; every?: string } | undefined;
    if (!ev) {
      const info = await node.kind.run(node.raw, ctx);
      if (info?.detail) result.detail = info.detail;
      if (info?.logs) (result.logs ??= []).push(...info.logs);
      return;
    }
    const deadline = this.target.now() + parseDuration(ev.within)!;
    const every = parseDuration(ev.every ?? DEFAULT_EVERY)!;
    for (let attempt = 1; ; attempt++) {
      result.attempts = attempt;
      try {
        const info = await node.kind.run(node.raw, ctx);
        if (info?.detail) result.detail = `${info.detail}${attempt > 1 ? ` (try ${attempt})` : ''}`;
        return;
      } catch (err) {
        if (!(err instanceof StepFailure) || this.target.now() >= deadline) {
          if (err instanceof Error)
            err.message = `${err.message} (eventually: ${attempt} tr${attempt > 1 ? 'ies' : 'y'} within ${ev.within})`;
          throw err;
        }
        await this.target.wait(Math.min(every, deadline - this.target.now()));
      }
    }
  }
}

/**
 * Which step's start opens the window of each `expect_none`: the last step before it (in the
 * order steps run) that acts — a request, a clock move, a restart, a `use:` whose fragment has
 * a step that acts — never a step that only looks (`expect_event`, `assert`, …); `start` when
 * none acted before it. Inside a fragment, the steps before the `use:` count. Internal.
 */
export function windowOpeners(steps: StepNode[]): Map<StepNode | 'start', StepNode[]> {
  const out = new Map<StepNode | 'start', StepNode[]>();
  const walk = (nodes: StepNode[], last: StepNode | 'start'): StepNode | 'start' => {
    for (const node of nodes) {
      if (node.kind.windowKinds) out.set(last, [...(out.get(last) ?? []), node]);
      if (node.children) {
        if (walk(node.children, last) !== last) last = node;
      } else if (node.kind.acts !== false) last = node;
    }
    return last;
  };
  walk(steps, 'start');
  return out;
}

/** The events of some kinds that exist now: where an `expect_none` window opens. Internal. */
async function snapshot(target: Target, kinds: EventKind[], step: string): Promise<EventWindow> {
  const known = new Map<EventKind, Set<string>>();
  for (const k of new Set(kinds)) known.set(k, new Set((await target.events(k)).map((e) => e.key)));
  return { at: target.now(), step, known };
}

/** A label with its templates filled in when they can be (`{{ from }} POST …` → `alice POST …`). Internal. */
function shownLabel(label: string, scope: Record<string, unknown>): string {
  try {
    const v = render(label, scope);
    return typeof v === 'string' ? v : label;
  } catch {
    return label;
  }
}

/** Results for steps that did not run. Internal. */
function skipAll(nodes: StepNode[], prefix: string, from = 0): StepResult[] {
  return nodes.map((n, i) => {
    const pos = locate(n.located, n.path);
    return {
      id: `${prefix}${from + i + 1}`,
      label: n.raw.name ?? n.kind.label(n.raw),
      status: 'skipped',
      ms: 0,
      clock: '',
      where: `${n.located.file}:${pos.line}:${pos.col}`,
    };
  });
}
