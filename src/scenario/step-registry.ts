import type { JsonSchema, StepKind } from './types.js';

/**
 * Keys any step may carry, whatever its kind: a name, a condition, retries on the scenario
 * clock, and loops.
 */
export const MODIFIERS: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, description: 'what the report calls this step' },
  if: {
    type: ['string', 'boolean'],
    description: 'run the step only when this holds (a Liquid expression: tip > 5 and mode == "embedded")',
  },
  eventually: {
    type: 'object',
    additionalProperties: false,
    required: ['within'],
    description: 're-run the step until it passes, within a duration of scenario time',
    properties: {
      within: {
        type: 'string',
        pattern: '^(\\d+(ms|s|m|h|d|w))+$',
        description: 'give up after this long (scenario time)',
      },
      every: { type: 'string', pattern: '^(\\d+(ms|s|m|h|d|w))+$', description: 'time between tries (default 1s)' },
    },
  },
  repeat: {
    type: 'integer',
    minimum: 1,
    maximum: 10000,
    description: 'run the step this many times ({{ index }} counts from 0)',
  },
  for_each: {
    type: ['array', 'string'],
    description:
      'run the step once per item ({{ item }}, {{ index }}): a list, or a template giving one ("{{ names }}")',
  },
};

/**
 * The step kinds scenarios may use, by name (the key that marks a step). The scenario JSON
 * Schema, the validator and the reference docs are assembled from these entries.
 *
 * @example new StepRegistry().add(requestStep).freeze()
 */
export class StepRegistry {
  readonly kinds = new Map<string, StepKind>();
  private frozen = false;

  add(kind: StepKind<any>): this {
    if (this.frozen) throw new Error(`cannot add the step kind ${kind.name}: the step registry is frozen`);
    if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(kind.name))
      throw new Error(`step kind name ${JSON.stringify(kind.name)} must be lower-case words`);
    if (this.kinds.has(kind.name) || kind.name in MODIFIERS)
      throw new Error(`a step kind or key named ${kind.name} already exists`);
    this.kinds.set(kind.name, kind as StepKind);
    return this;
  }

  freeze(): this {
    this.frozen = true;
    return this;
  }

  names(): string[] {
    return [...this.kinds.keys()];
  }

  /** The kinds whose key a step has. */
  kindsOf(step: Record<string, unknown>): StepKind[] {
    return Object.keys(step).flatMap((k) => (this.kinds.has(k) ? [this.kinds.get(k)!] : []));
  }

  /** The full JSON Schema of a step of this kind: its keys and the modifiers. */
  stepSchema(kind: StepKind): JsonSchema {
    return {
      type: 'object',
      description: kind.description,
      additionalProperties: false,
      required: kind.schema.required ?? [kind.name],
      properties: { ...MODIFIERS, ...kind.schema.properties },
    };
  }
}
