import { createRegistry } from '../../src/runtime/registry.js';
import { Registry } from '../../src/runtime/contract/registry.js';
import type { SourceDef, TriggerDef } from '../../src/runtime/contract/types.js';

/**
 * A registry with the built-ins, where some sources are replaced (`swap`) and extra sources and
 * triggers are added — for tests that need a slow or failing source. Frozen, as entry points
 * freeze theirs.
 */
export function testRegistry({
  swap = {},
  sources = [],
  triggers = [],
}: {
  swap?: Record<string, (s: SourceDef) => SourceDef>;
  sources?: SourceDef[];
  triggers?: TriggerDef[];
} = {}): Registry {
  const base = createRegistry();
  const r = new Registry();
  for (const s of base.sources.values()) r.addSource(swap[s.name] ? swap[s.name]!(s) : s);
  for (const s of sources) r.addSource(s);
  for (const t of [...base.triggers.values(), ...triggers]) r.addTrigger(t);
  for (const c of base.conditions.values()) r.addCondition(c);
  for (const a of base.actions.values()) r.addAction(a);
  return r.freeze();
}

/** A source whose polls each wait `ms` on the bot clock (parked, as a paced request is) before answering nothing. */
export function slowSource(name: string, ms: number): SourceDef {
  return {
    name,
    description: `waits ${ms} ms, finds nothing`,
    async poll(ctx) {
      await ctx.clock.sleep(ms, ctx.signal, { parked: true });
      return { events: [], cursor: { polled: true } };
    },
  };
}
