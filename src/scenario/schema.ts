import { DURATION_PATTERN } from '../util/duration.js';
import type { StepRegistry } from './step-registry.js';
import type { JsonSchema } from './types.js';

/** A user name of a scenario: what `as:` and templates (`users.NAME`) use. */
export const USER_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9 _.-]{0,63}$';
const VAR_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

/** `users:`: name → how the user starts. Internal. */
const USERS: JsonSchema = {
  type: 'object',
  description:
    'users created fresh for the scenario, by name; templates see users.NAME.pin_code, .id, .api_key, .display_name',
  propertyNames: { pattern: USER_NAME_PATTERN },
  additionalProperties: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      balance: { type: 'number', minimum: 0, description: 'starting balance (an operator grant)' },
      subscribed_days: {
        type: 'integer',
        minimum: 0,
        description: 'days of subscription from the start (0: none; default: the trial)',
      },
      contacts: {
        type: 'array',
        items: { type: 'string' },
        description: 'users of the scenario this one is already in contact with',
      },
    },
  },
};

/** `bots:`: files, files with `as`/`vars`, or inline bots (loose: checked one by one). Internal. */
function botsSchema(loose: boolean): JsonSchema {
  return {
    type: 'array',
    description:
      'bots running during the scenario, acting as its users: a bot file (relative to ' +
      'this file), { file, as, vars } to act as another user with other vars, or an ' +
      'inline bot definition',
    items: loose
      ? {}
      : {
          anyOf: [
            { type: 'string', minLength: 1 },
            {
              type: 'object',
              additionalProperties: false,
              required: ['file'],
              properties: {
                file: { type: 'string', minLength: 1 },
                as: { type: 'string', minLength: 1 },
                vars: {
                  type: 'object',
                  description:
                    'overrides keys of the bot file\'s vars: (values may name users: "{{ users.alice.pin_code }}")',
                },
              },
            },
            { type: 'object', required: ['name', 'rules'], description: 'an inline bot (see bot.schema.json)' },
          ],
        },
  };
}

/** `params:` of a fragment. Internal. */
const PARAMS: JsonSchema = {
  description:
    'fragments only: the parameters `use:` passes with `with:` (a list of names, or name → { default, description })',
  anyOf: [
    { type: 'array', items: { type: 'string', pattern: VAR_NAME } },
    {
      type: 'object',
      propertyNames: { pattern: VAR_NAME },
      additionalProperties: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { default: {}, description: { type: 'string' } },
      },
    },
  ],
};

/** The top-level keys of a scenario file (steps and bots as loose items: they are checked one by one). */
export function topLevelSchema(loose: boolean, registry?: StepRegistry): JsonSchema {
  const step = loose ? { type: 'object' } : { $ref: '#/definitions/step' };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['steps'],
    properties: {
      name: { type: 'string', minLength: 1, description: 'what reports call the scenario (default: the file name)' },
      description: { type: 'string' },
      tags: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'for --tag' },
      seed: {
        type: 'integer',
        minimum: 0,
        maximum: 4294967295,
        description:
          'seed of the PINs, ids and API keys of the embedded server and of {{ run_id ' +
          '}} (default: from the file name; --seed overrides); shown with every ' +
          'failure',
      },
      config: {
        type: 'object',
        description:
          'config.yaml overrides for the embedded server (rate_limits, ubi, wallet, subscription, messaging…)',
      },
      clock: {
        type: 'object',
        additionalProperties: false,
        properties: {
          start: {
            type: 'string',
            description: 'where the virtual clock starts (ISO 8601; default 2026-01-01T09:00:00Z)',
          },
        },
      },
      users: USERS,
      bots: botsSchema(loose),
      plugins: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description: 'plugin files (relative to this file) whose actions, conditions and triggers the bots may use',
      },
      vars: {
        type: 'object',
        propertyNames: { pattern: VAR_NAME },
        description: 'variables for templates: name → value',
      },
      params: PARAMS,
      steps: { type: 'array', items: step, description: 'the steps, in order' },
    },
    ...(registry ? { definitions: stepDefinitions(registry) } : {}),
  };
}

function stepDefinitions(registry: StepRegistry): Record<string, JsonSchema> {
  const kinds = [...registry.kinds.values()];
  const defs: Record<string, JsonSchema> = {
    step: {
      type: 'object',
      description: `a step: one of ${kinds.map((k) => k.name).join(', ')}`,
      anyOf: kinds.map((k) => ({ required: [k.name] })),
      allOf: kinds.map((k) => ({ if: { required: [k.name] }, then: { $ref: `#/definitions/step_${k.name}` } })),
    },
  };
  for (const k of kinds) defs[`step_${k.name}`] = registry.stepSchema(k);
  return defs;
}

/**
 * The JSON Schema of scenario files (and fragments), assembled from the step registry, for
 * editors: `# yaml-language-server: $schema=../schemas/scenario.schema.json`.
 */
export function scenarioSchema(registry: StepRegistry): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'pinbot scenario file',
    description: 'A scenario: users, bots, and steps acting as the users on a virtual clock. See docs/scenarios.md.',
    ...topLevelSchema(false, registry),
  };
}

export { DURATION_PATTERN };
