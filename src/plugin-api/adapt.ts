import type { ConditionResult, Registry, ReplyTarget, TriggerDef, TriggerSetupContext } from '../runtime/index.js';
import { asJson, callPlugin, describeThrown } from './boundary.js';
import { actionContext, conditionContext, pollContext } from './context.js';
import type { PluginInstance } from './instance.js';
import { coerceRendered } from '../runtime/index.js';
import type { SourceEvent, SourceSpec } from './types.js';

/** Most events one poll of a plugin source may return. */
const MAX_EVENTS = 1000;

/** Subscribes a bot to a plugin's push source while its rules run (see PluginHost). */
export type Subscribe = (trigger: string, ctx: TriggerSetupContext) => () => void;

/** A key a plugin gave an event: a non-empty string of at most 200 characters. Internal. */
export function eventKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 200)
    throw new Error(`${what}: an event key is a string of 1 to 200 characters, not ${describeThrown(key)}`);
  return key;
}

/** A payload a plugin gave an event: a JSON object. Internal. */
export function eventPayload(payload: unknown, what: string): Record<string, unknown> {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    throw new Error(`${what}: an event payload is an object, not ${describeThrown(payload)}`);
  return asJson(payload, what) as Record<string, unknown>;
}

/** What a poll returned, checked: `{ events: [{ key, payload }], cursor }`. Internal. */
function checkPoll(out: unknown, what: string): { events: SourceEvent[]; cursor: unknown } {
  const o = out as { events?: unknown; cursor?: unknown } | null;
  if (!o || typeof o !== 'object' || !Array.isArray(o.events))
    throw new Error(`${what} must return { events: [{ key, payload }], cursor }, not ${describeThrown(out)}`);
  if (o.events.length > MAX_EVENTS)
    throw new Error(
      `${what} returned ${o.events.length} events; at most ${MAX_EVENTS} a poll (return the rest at the next poll)`,
    );
  const events = o.events.map((e: { key?: unknown; payload?: unknown } | null) => ({
    key: eventKey(e?.key, what),
    payload: eventPayload(e?.payload, what),
  }));
  return { events, cursor: asJson(o.cursor, `${what} (its cursor)`) };
}

/** A plugin's `replyTo`, guarded: a throw or a wrong answer means "no one to reply to". Internal. */
function replyTo(inst: PluginInstance, spec: SourceSpec<unknown>): TriggerDef['replyTo'] {
  if (!spec.replyTo) return undefined;
  return (event) => {
    try {
      const t = spec.replyTo!(event) as ReplyTarget | undefined;
      if (
        t &&
        typeof t === 'object' &&
        (typeof (t as { pin?: unknown }).pin === 'string' ||
          typeof (t as { conversation_id?: unknown }).conversation_id === 'string')
      )
        return t;
    } catch (err) {
      inst.log.warn(`plugin ${inst.name}: replyTo threw: ${describeThrown(err)}`);
    }
    return undefined;
  };
}

/** The verdict of a plugin condition as a condition result. Internal. */
function verdict(v: unknown, label: string, what: string): ConditionResult {
  if (typeof v === 'boolean') return { ok: v, label };
  const o = v as { ok?: unknown; detail?: unknown } | null;
  if (o && typeof o === 'object' && typeof o.ok === 'boolean')
    return { ok: o.ok, label, ...(typeof o.detail === 'string' ? { detail: o.detail.slice(0, 500) } : {}) };
  throw new Error(`${what} must answer true, false or { ok, detail }, not ${describeThrown(v)}`);
}

/**
 * Registers a plugin's actions, conditions and sources as `<plugin>.<name>` entries. Every
 * entry calls the plugin through the boundary; arguments are validated against the plugin's
 * schema after templates, and what the plugin returns is checked (JSON, the right shape).
 */
export function registerPlugin(registry: Registry, inst: PluginInstance, subscribe: Subscribe): void {
  const p = inst.checked;
  for (const { name, spec, validate } of p.actions) {
    const full = `${p.name}.${name}`;
    registry.addAction({
      name: full,
      description: spec.description ?? `${full} (plugin ${p.name})`,
      schema: spec.schema as Record<string, unknown>,
      example: spec.example ?? {},
      effect: spec.effect ?? 'api',
      templated: spec.templated,
      plugin: p.name,
      prepare(args) {
        // text a template rendered becomes the number (or boolean) the schema wants, as for send_money's amount
        const a = coerceRendered(spec.schema as Record<string, unknown>, structuredClone(args ?? null));
        if (!validate(a)) {
          const why = (validate.errors ?? [])
            .map(
              (e) =>
                `args${e.instancePath.replace(/\//g, '.')} ` +
                `${e.message}${
                  e.keyword === 'type' || e.keyword === 'pattern' ? `, not ${JSON.stringify(e.data)}` : ''
                }`,
            )
            .join('; ');
          throw new Error(`the arguments of ${full} after templates do not fit its schema: ${why}`);
        }
        return a;
      },
      run: (args, rt) => {
        // a call starts: its ctx.ask and effects count from the first again (run/dialog-replay.ts)
        rt.dialog?.begin(args);
        return callPlugin(
          inst,
          `action ${full}`,
          async () => asJson(await spec.run(actionContext(inst, rt), args), `action ${full}`),
          { signal: rt.signal },
        );
      },
    });
  }
  for (const { name, spec, validate } of p.conditions) {
    const full = `${p.name}.${name}`;
    registry.addCondition({
      name: full,
      description: spec.description ?? `${full} (plugin ${p.name})`,
      schema: spec.schema as Record<string, unknown>,
      example: spec.example ?? null,
      compile(value) {
        const label = `${full} ${JSON.stringify(value)}`;
        return async (ctx) => {
          const v = structuredClone(value);
          validate(v); // fills defaults; the bot file was validated at load
          const signal = ctx.signal ?? new AbortController().signal;
          return callPlugin(
            inst,
            `condition ${full}`,
            async (s) => verdict(await spec.test(conditionContext(inst, ctx, s), v), label, `condition ${full}`),
            { signal },
          );
        };
      },
    });
  }
  for (const { name, spec } of p.sources) {
    const full = `${p.name}.${name}`;
    const description = spec.description ?? `${full} events (plugin ${p.name})`;
    const trigger: TriggerDef = { name: full, description, example: spec.example ?? {}, replyTo: replyTo(inst, spec) };
    if (spec.poll) {
      registry.addSource({
        name: full,
        description,
        // unless it says it reads only pinbot's data, a commit of pinbot's says nothing about it
        outside: spec.reads !== 'pinbot',
        poll: async (rt, cursor) => {
          const what = `poll source ${full}`;
          const out = await callPlugin(
            inst,
            what,
            async () => checkPoll(await spec.poll!(pollContext(inst, rt), cursor), what),
            { signal: rt.signal },
          );
          return {
            events: out.events.map((e) => ({ key: `${full}:${e.key}`, type: full, payload: e.payload })),
            cursor: out.cursor,
          };
        },
      });
      registry.addTrigger({ ...trigger, source: full });
    } else {
      registry.addTrigger({ ...trigger, setup: (ctx) => subscribe(full, ctx) });
    }
  }
}
