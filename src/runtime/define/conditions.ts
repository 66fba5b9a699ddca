import type { Registry } from '../contract/registry.js';
import type { CheckProblem, ConditionFn, ConditionResult, TriggerDef } from '../contract/types.js';
import { checkField, compileField } from './field-matcher.js';

/**
 * Compiles an `if:` value — one mapping or a list of mappings, all of which must hold — into a
 * condition. In a mapping, registered condition names (`from`, `all`, `liquid`, plugin ones)
 * are conditions; other keys are event fields with a matcher.
 */
export function compileConditions(registry: Registry, spec: unknown): ConditionFn {
  const compiler = {
    compile(s: unknown): ConditionFn {
      const items = Array.isArray(s) ? s : [s];
      const parts: ConditionFn[] = [];
      for (const item of items) {
        for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
          const def = registry.conditions.get(key);
          parts.push(def ? def.compile(value, compiler) : compileField(key, value));
        }
      }
      if (parts.length === 1) return parts[0]!;
      return async (ctx) => {
        const children: ConditionResult[] = [];
        for (const p of parts) children.push(await p(ctx));
        return { ok: children.every((c) => c.ok), label: 'all', children };
      };
    },
  };
  return compiler.compile(spec);
}

/** Static checks of an `if:` value (field names, regular expressions, nested conditions); paths start at `path`. */
export function checkConditions(
  registry: Registry,
  spec: unknown,
  triggers: TriggerDef[],
  path: Array<string | number> = [],
): CheckProblem[] {
  const checkAt = (s: unknown, p: Array<string | number>): CheckProblem[] => {
    const out: CheckProblem[] = [];
    const items = Array.isArray(s) ? s.map((x, i) => [x, [...p, i]] as const) : [[s, p] as const];
    for (const [item, at] of items) {
      if (!item || typeof item !== 'object') continue;
      for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
        const def = registry.conditions.get(key);
        const here = [...at, key];
        // a def's problems (and those of its nested conditions) are relative to its value
        const field = () =>
          checkField(key, value, triggers, {
            conditions: [...registry.conditions.keys()],
            unavailable: registry.whyUnavailable(key),
          });
        const problems = def ? (def.check?.(value, { triggers, check: checkAt }) ?? []) : field();
        out.push(...problems.map((pr) => ({ ...pr, path: [...here, ...pr.path] })));
      }
    }
    return out;
  };
  return checkAt(spec, path);
}
