import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename, dirname } from 'node:path';
import type { Registry, TriggerSetupContext } from '../runtime/index.js';
import { registerPlugin, eventKey, eventPayload } from './adapt.js';
import { callPlugin, describeThrown, pluginScope, shortPath } from './boundary.js';
import { formatPluginProblem, type Collected, type PluginProblem } from './collect.js';
import { setupContext, type SetupHooks } from './context.js';
import type { PluginOrigin } from './load.js';
import { PLUGIN_NAME } from './shape.js';
import type { PluginDeps, PluginInstance, PluginStatus } from './instance.js';
import { PluginRoutes } from './routes.js';
import type { PushEvent, RouteHandler } from './types.js';
import type { EdgeCall } from '../util/http.js';

/** One plugin as `pinbot plugins list` shows it. */
export interface PluginReport {
  name?: string;
  version?: string;
  /** `plugins/karma.ts`, `npm pinbot-plugin-x`, `plugin object karma`. */
  source: string;
  status: PluginStatus | 'invalid';
  message?: string;
  /** Its entries: actions, conditions, triggers (the events of its sources). */
  registers?: { actions: string[]; conditions: string[]; triggers: string[] };
  failures?: number;
}

/** A bot subscribed to a push source. Internal. */
interface Listener {
  push: TriggerSetupContext['push'];
  rules: number;
}

/**
 * Queues pushed events for the bots that run in other processes (bots shared out between
 * processes on one database): the bots service gives one. Returns the bots it queued for.
 */
export interface PushRelay {
  push(
    trigger: string,
    event: { key: string; type: string; payload: Record<string, unknown> },
    onlyBot?: string,
  ): Promise<string[]>;
  /** The bots listening to `trigger` in other processes. */
  listeners(trigger: string): string[];
}

/**
 * The plugins of a process: registers their entries, sets them up and tears them down with the
 * server, delivers the events their push sources emit to the bots listening, serves their HTTP
 * routes, and reports their status. Setup runs through the boundary: a plugin whose setup
 * throws or hangs is disabled with a clear message while every other plugin and bot runs.
 */
export class PluginHost {
  readonly instances: PluginInstance[];
  readonly problems: PluginProblem[];
  private readonly tried: Collected['tried'];
  private readonly listeners = new Map<string, Map<string, Listener>>();
  private relay?: PushRelay;
  readonly routes = new PluginRoutes(this);
  private started = false;

  constructor(collected: Collected) {
    this.instances = collected.instances;
    this.problems = collected.problems;
    this.tried = collected.tried;
  }

  /** Adds every plugin's entries to `registry` (before it is frozen), and notes the plugins that did not load. */
  register(registry: Registry): void {
    for (const inst of this.instances) registerPlugin(registry, inst, (trigger, ctx) => this.subscribe(trigger, ctx));
    for (const t of this.tried) {
      if (!t.problem) continue;
      // a plugin that failed before saying its name (a syntax error, a throw at import) is
      // known by its file or package name: bots naming `dice.roll` are told why dice is missing
      const name = t.name ?? nameFromOrigin(t.origin);
      if (!t.name) registry.markUnnamedFailure(`${t.origin.label}: ${t.problem}`);
      if (!name || this.instances.some((i) => i.name === name) || registry.unavailable.has(name)) continue;
      registry.markUnavailable(
        name,
        t.name
          ? `the plugin ${name} (${t.origin.label}) did not load: ${t.problem}`
          : `the plugin in ${t.origin.label} (${name}, by its ` +
              `${t.origin.kind === 'package' ? 'package' : 'file'} name) did not load: ` +
              `${t.problem}`,
      );
    }
  }

  instance(name: string): PluginInstance | undefined {
    return this.instances.find((i) => i.name === name);
  }

  /** Sets every plugin up, in load order, each under the boundary with the plugin timeout. */
  async start(deps: PluginDeps): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.routes.log = deps.log;
    for (const inst of this.instances) {
      inst.begin(deps);
      if (!inst.checked.def.setup) continue;
      const release = deps.clock.hold(`plugin ${inst.name}: setup`);
      try {
        await callPlugin(inst, 'setup', () => inst.checked.def.setup!(setupContext(inst, this.hooks, inst.signal)), {
          timeoutMs: inst.supervision.timeoutMs,
        });
      } catch (err) {
        const why = describeThrown(err);
        inst.stop('disabled', `setup failed: ${why}`);
        inst.log.error(
          `plugin ${inst.name} (${inst.origin.label}) is disabled: ${why}. Its ` +
            `actions and conditions fail until it is fixed and pinbot restarts; the ` +
            `other plugins and every bot run.`,
        );
      } finally {
        release();
      }
    }
  }

  /** Tears every running plugin down (reverse order), each under the boundary; ends their jobs. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const inst of [...this.instances].reverse()) {
      const running = inst.status === 'running';
      if (running && inst.checked.def.teardown && inst.deps) {
        await callPlugin(
          inst,
          'teardown',
          () => inst.checked.def.teardown!(setupContext(inst, this.hooks, inst.signal)),
          { timeoutMs: inst.supervision.timeoutMs },
        ).catch(() => undefined);
      }
      if (running) inst.stop('loaded', 'stopped');
    }
  }

  /** Every plugin tried, valid or not, with its status and what it registers. */
  status(): PluginReport[] {
    return this.tried.map((t) => {
      const inst = t.problem ? undefined : this.instance(t.name!);
      const source = t.origin.kind === 'file' && t.origin.file ? shortPath(t.origin.file) : t.origin.label;
      if (!inst) return { name: t.name, version: t.version, source, status: 'invalid', message: t.problem };
      const p = inst.checked;
      const message =
        inst.status === 'running'
          ? inst.failures
            ? `${inst.failures} failure(s) in a row; last: ${inst.lastError}`
            : undefined
          : inst.message || undefined;
      return {
        name: p.name,
        version: p.version,
        source,
        status: inst.status,
        message,
        registers: {
          actions: p.actions.map((a) => `${p.name}.${a.name}`),
          conditions: p.conditions.map((c) => `${p.name}.${c.name}`),
          triggers: p.sources.map((s) => `${p.name}.${s.name}`),
        },
        failures: inst.failuresTotal,
      };
    });
  }

  /** The load problems, one line each (for logs and `bots validate`). */
  problemLines(): string[] {
    return this.problems.map(formatPluginProblem);
  }

  /** Pushes for bots running in other processes go through `relay` (none: only this process's bots). */
  relayTo(relay: PushRelay | undefined): void {
    this.relay = relay;
  }

  /** Answers `/plugins/<name>/…` (mounted on the pinbot server; `call`: the edge's, util/http.ts). */
  handle(req: IncomingMessage, res: ServerResponse, call?: EdgeCall): void {
    this.routes.handle(req, res, call);
  }

  private readonly hooks: SetupHooks = {
    emit: (inst, source, event) => this.emit(inst, source, event),
    listeners: (inst, source) => {
      const trigger = this.pushTrigger(inst, source);
      const here = [...(this.listeners.get(trigger)?.keys() ?? [])];
      return [...here, ...(this.relay?.listeners(trigger).filter((b) => !here.includes(b)) ?? [])];
    },
    route: (inst, method, path, handler: RouteHandler) => this.routes.add(inst, method, path, handler),
  };

  /** `<plugin>.<source>` of a push source of the plugin; throws for anything else. Internal. */
  private pushTrigger(inst: PluginInstance, source: string): string {
    const s = inst.checked.sources.find((x) => x.name === source);
    if (!s)
      throw new Error(
        `plugin ${inst.name} has no source named ${JSON.stringify(source)}; its ` +
          `sources: ${inst.checked.sources.map((x) => x.name).join(', ') || 'none'}`,
      );
    if (s.spec.poll)
      throw new Error(
        `plugin ${inst.name}: ${source} is a poll source; only push sources (no poll function) take emit`,
      );
    return `${inst.name}.${source}`;
  }

  /** A bot's rule on a push trigger starts listening; the returned function stops it. Internal. */
  private subscribe(trigger: string, ctx: TriggerSetupContext): () => void {
    let bots = this.listeners.get(trigger);
    if (!bots) this.listeners.set(trigger, (bots = new Map()));
    const l = bots.get(ctx.bot) ?? { push: ctx.push, rules: 0 };
    l.rules++;
    bots.set(ctx.bot, l);
    return () => {
      if (--l.rules === 0 && bots!.get(ctx.bot) === l) bots!.delete(ctx.bot);
    };
  }

  /**
   * Queues a pushed event for the bots listening (or `event.bot`), through each bot's inbox:
   * durable when this resolves, exactly once per key. Returns the bots it was queued for.
   */
  private async emit(inst: PluginInstance, source: string, event: PushEvent): Promise<string[]> {
    const trigger = this.pushTrigger(inst, source);
    const what = `emit ${trigger}`;
    if (inst.unavailable()) throw new Error(`plugin ${inst.name}: ${what}: ${inst.unavailable()}`);
    if (!event || typeof event !== 'object') throw new Error(`${what}: the event is an object { payload, key?, bot? }`);
    const key = event.key === undefined ? randomUUID() : eventKey(event.key, what);
    const payload = eventPayload(event.payload, what);
    if (event.bot !== undefined && typeof event.bot !== 'string') throw new Error(`${what}: bot is the name of a bot`);
    const targets = [...(this.listeners.get(trigger) ?? new Map<string, Listener>())].filter(
      ([bot]) => event.bot === undefined || bot === event.bot,
    );
    const release = inst.deps?.clock.hold(`plugin ${inst.name}: ${what}`);
    try {
      // the bots' runs are not the plugin's code: they leave its scope
      const pushed = { key: `${trigger}:${key}`, type: trigger, payload };
      const queued = await pluginScope.exit(() =>
        Promise.all(targets.map(async ([bot, l]) => ((await l.push(pushed)) ? bot : undefined))),
      );
      const here = queued.filter((b): b is string => b !== undefined);
      // the bots listening in other processes get it through their inbox in the database
      const elsewhere = this.relay ? await pluginScope.exit(() => this.relay!.push(trigger, pushed, event.bot)) : [];
      return [...here, ...elsewhere.filter((b) => !here.includes(b))];
    } finally {
      release?.();
    }
  }
}

/**
 * The plugin name a file or package suggests (`plugins/dice.ts`, `plugins/dice/index.ts`,
 * `pinbot-plugin-dice`). Internal. */
function nameFromOrigin(o: PluginOrigin): string | undefined {
  let base: string | undefined;
  if (o.kind === 'file' && o.file) {
    base = basename(o.file).replace(/\.[cm]?[jt]s$/, '');
    if (base === 'index') base = basename(dirname(o.file));
  } else if (o.kind === 'package' && o.package)
    base = o.package.replace(/^@[^/]+\//, '').replace(/^pinbot-plugin-/, '');
  const name = base?.replace(/-/g, '_');
  return name && PLUGIN_NAME.test(name) ? name : undefined;
}
