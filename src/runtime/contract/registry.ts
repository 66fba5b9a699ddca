import { suggest } from '../../util/suggest.js';
import { TOPICS, type ActionDef, type ConditionDef, type SourceDef, type TriggerDef } from './types.js';

/** Names of plugin entries are `plugin.name`; built-ins are plain words. */
const NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/**
 * The triggers, conditions, actions and poll sources bots may use, by name. Built-ins register
 * here and so do plugins; the bot JSON Schema and the docs are assembled from these entries, so
 * a new action is validated and documented the moment it is registered.
 *
 * @example
 * const registry = createRegistry();
 * registry.addAction({ name: 'karma.give', description: '…', schema: { type: 'object' },
 * example: {}, effect: 'api', run: async () => ({}) });
 */
export class Registry {
  readonly triggers = new Map<string, TriggerDef>();
  readonly conditions = new Map<string, ConditionDef>();
  readonly actions = new Map<string, ActionDef>();
  readonly sources = new Map<string, SourceDef>();
  /**
   * Plugins that did not load, by name, with why: a bot naming `karma.give` while karma is
   * here is told what is wrong with the plugin rather than "unknown action".
   */
  readonly unavailable = new Map<string, string>();
  /** Grows with every entry added: caches built from the registry (the bot validator) key on it. */
  version = 0;
  private frozen = false;

  /** Refuses further entries (every entry point freezes the registry it built). */
  freeze(): this {
    this.frozen = true;
    return this;
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  private add<T extends { name: string }>(map: Map<string, T>, kind: string, def: T): this {
    if (this.frozen)
      throw new Error(
        `cannot add the ${kind} ${def.name}: the registry is frozen once built ` +
          `(register from a plugin, which buildRegistry loads)`,
      );
    if (!NAME.test(def.name))
      throw new Error(`${kind} name ${JSON.stringify(def.name)} must be lower-case words joined by dots`);
    if (map.has(def.name)) throw new Error(`a ${kind} named ${def.name} is already registered`);
    map.set(def.name, def);
    this.version++;
    return this;
  }

  addTrigger(def: TriggerDef): this {
    if (def.source && !this.sources.has(def.source))
      throw new Error(`trigger ${def.name}: no source named ${def.source} is registered`);
    return this.add(this.triggers, 'trigger', def);
  }
  addCondition(def: ConditionDef): this {
    return this.add(this.conditions, 'condition', def);
  }
  addAction(def: ActionDef): this {
    return this.add(this.actions, 'action', def);
  }
  /** Notes a plugin that did not load (see `unavailable`). */
  markUnavailable(plugin: string, why: string): this {
    if (this.frozen) throw new Error(`cannot mark ${plugin}: the registry is frozen`);
    this.unavailable.set(plugin, why);
    return this;
  }

  /** Why no plugin is loaded at all (safe mode), told to every bot naming a plugin entry. */
  pluginsOff: string | undefined;

  /** Notes that this registry loads no plugin, and why (`serve --safe`). */
  markPluginsOff(why: string): this {
    if (this.frozen) throw new Error('cannot turn plugins off: the registry is frozen');
    this.pluginsOff = why;
    return this;
  }

  /** Plugins that did not load before saying their name: `plugins/x.ts: syntax error …`. */
  readonly unnamedFailures: string[] = [];

  /** Notes a plugin that did not load and whose name is not known (any unknown entry may be its). */
  markUnnamedFailure(what: string): this {
    if (this.frozen) throw new Error(`cannot note ${what}: the registry is frozen`);
    this.unnamedFailures.push(what);
    return this;
  }

  /**
   * Why the plugin `name` belongs to did not load, if it did not (`karma.give` → karma's
   * problem); for a plugin entry no loaded plugin has, the plugins whose name is not known
   * because they failed early (it may be one of them).
   */
  whyUnavailable(name: string): string | undefined {
    const dot = name.indexOf('.');
    if (dot <= 0) return undefined;
    const plugin = name.slice(0, dot);
    const known = this.unavailable.get(plugin) ?? this.pluginsOff;
    if (known) return known;
    const ns = `${plugin}.`;
    // a loaded plugin has this name: a typo of one of its entries (the usual hint says which)
    if (
      [this.actions, this.conditions, this.triggers, this.sources].some((m) =>
        [...m.keys()].some((k) => k.startsWith(ns)),
      )
    )
      return undefined;
    if (this.unnamedFailures.length)
      return (
        `no plugin named ${plugin} is loaded; ` +
        `${this.unnamedFailures.length === 1 ? 'this plugin' : 'these plugins'} did not ` +
        `load and may be it: ${this.unnamedFailures.join('; ')}`
      );
    // a typo of a built-in or plugin entry (`mesage.received`): the usual "did you mean" says which
    if (
      suggest(
        name,
        [this.actions, this.conditions, this.triggers].flatMap((m) => [...m.keys()]),
      )
    )
      return undefined;
    // The usual case: a plugin file added while the server runs (`pinbot plugins new` then a
    // bot using it), which the bot reload sees but the plugins loaded at start do not have.
    return (
      `no plugin named ${plugin} is loaded — plugins load when pinbot starts (from ` +
      `plugins/ and plugins.packages): restart a running server after adding ${plugin}, ` +
      `or check the name`
    );
  }

  addSource(def: SourceDef): this {
    // a topic misspelt would leave the source polled only by the safety poll: refuse it here
    const unknown = (def.topics ?? []).filter((t) => !(TOPICS as readonly string[]).includes(t));
    if (unknown.length)
      throw new Error(
        `source ${def.name}: unknown topic ` +
          `${unknown.map((t) => JSON.stringify(t)).join(', ')}; topics are ` +
          `${TOPICS.join(', ')}`,
      );
    return this.add(this.sources, 'source', def);
  }
}
