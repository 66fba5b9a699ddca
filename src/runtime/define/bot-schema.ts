import { DURATION_PATTERN } from '../../util/duration.js';
import { matcherSchema } from './field-matcher.js';
import type { Registry } from '../contract/registry.js';
import type { JsonSchema } from '../contract/types.js';
import { acceptTemplates } from './templatable-schema.js';

/** A bot name: also its file-system and key name (one definition, in util/bot-name.ts). */
import { BOT_NAME_PATTERN } from '../../util/bot-name.js';
export { BOT_NAME_PATTERN };
export const PIN_PATTERN = '^\\s*[A-Za-z0-9]{6}\\s*$';
/** A rule id. */
export const RULE_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

const duration = (description: string) => ({ type: 'string', pattern: DURATION_PATTERN, description });

/** The keys of a bot file but `rules` (a declarative table). */
const BOT_PROPERTIES: Record<string, JsonSchema> = {
  name: {
    type: 'string',
    pattern: BOT_NAME_PATTERN,
    description: 'unique name: lower-case letters, digits, - and _',
  },
  description: { type: 'string' },
  as: {
    type: 'string',
    minLength: 1,
    description: 'embedded server only: the user the bot acts as, by display name or PIN',
  },
  create_user: {
    type: 'boolean',
    description: 'with as: create that user on the embedded server when it does not exist (default false)',
  },
  key: { type: 'string', minLength: 1, description: 'the API key the bot uses, usually ${env:PINBOT_KEY_NAME}' },
  server: {
    type: 'string',
    pattern: '^(embedded|https?://.+)$',
    description:
      '"embedded" (default: the server of `pinbot serve`) or the base URL of a remote ' +
      'server listed in config.yaml bots.allowed_servers',
  },
  poll: duration('how often to poll for events (default 5s, at least 1s)'),
  enabled: { type: 'boolean', description: 'false: the bot is validated but not run (default true)' },
  dry_run: {
    type: 'boolean',
    description: 'evaluate for real but take no action, only log and trace it (default false)',
  },
  limits: {
    type: 'object',
    additionalProperties: false,
    description: 'money guardrails for send_money',
    properties: {
      max_per_transfer: { type: 'number', exclusiveMinimum: 0, description: 'largest single transfer' },
      max_per_day: { type: 'number', exclusiveMinimum: 0, description: 'most the bot sends per UTC day' },
      send_to: {
        type: 'array',
        items: { type: 'string', pattern: PIN_PATTERN },
        description: 'PINs send_money may pay (allow-list)',
      },
    },
  },
  traces: {
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    description: 'rule runs kept in the trace history (default 100)',
  },
  vars: { type: 'object', description: 'initial values of the persistent bot variables (vars.NAME)' },
  memory: {
    type: 'object',
    additionalProperties: false,
    description:
      'what the bot remembers of each person and conversation (remember, forget, memory.KEY): how long, and how much',
    properties: {
      ttl: duration('an entry is forgotten this long after its last write (default: kept until forgotten), e.g. 90d'),
      max_keys: {
        type: 'integer',
        minimum: 1,
        maximum: 1_000_000,
        description: 'keys of every person and conversation together (default 10000)',
      },
      max_bytes: {
        type: 'integer',
        minimum: 1024,
        maximum: 268_435_456,
        description: 'bytes (JSON of keys and values) of every person and conversation together (default 4194304)',
      },
      max_keys_per_person: {
        type: 'integer',
        minimum: 1,
        maximum: 10_000,
        description: 'keys of one person, or one conversation (default 100)',
      },
      max_bytes_per_person: {
        type: 'integer',
        minimum: 64,
        maximum: 16_777_216,
        description: 'bytes of one person, or one conversation (default 16384)',
      },
    },
  },
  loop_guard: {
    description:
      'stops a bot answering another bot for ever: more than max_replies replies in a ' +
      "row that come within reply_within of the bot's answers (machine speed), from " +
      'one counterpart in one conversation, pause that exchange for `pause` (default ' +
      '5, 2s, 10m); false turns it off',
    if: { type: 'boolean' },
    then: { const: false },
    else: {
      type: 'object',
      additionalProperties: false,
      properties: {
        max_replies: {
          type: 'integer',
          minimum: 1,
          description: 'machine-speed replies in a row the bot still answers (default 5)',
        },
        reply_within: duration(
          "a reply this soon after the bot's answer, in server time, is machine speed (default 2s)",
        ),
        pause: duration('then pause that exchange for this long (default 10m)'),
      },
    },
  },
  per_sender: {
    type: 'object',
    additionalProperties: false,
    description:
      'bounds per sender: runs of a queued rule are taken round robin by sender; ' +
      'max_queued caps what one sender may have waiting (more are traced ' +
      'sender_backlog)',
    properties: {
      max_queued: { type: 'integer', minimum: 1, description: 'events of one sender waiting for a rule at once' },
    },
  },
  ignore_bots: {
    type: 'boolean',
    description: 'ignore events caused by users that bots act as (traced from_bot; default false)',
  },
};

/** A rule: on → if → do, its mode and limits, its error and dialog steps (a declarative table). */
const RULE: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['on', 'do'],
  properties: {
    id: {
      type: 'string',
      pattern: RULE_ID_PATTERN,
      description: 'stable id (default rule-N); keeps idempotency keys and cooldowns across edits',
    },
    description: { type: 'string' },
    on: {
      description: 'trigger(s)',
      if: { type: 'array' },
      then: { type: 'array', minItems: 1, items: { $ref: '#/definitions/trigger' } },
      else: { $ref: '#/definitions/trigger' },
    },
    if: { $ref: '#/definitions/conditions' },
    do: { type: 'array', minItems: 1, items: { $ref: '#/definitions/step' }, description: 'actions, in order' },
    mode: {
      enum: ['queued', 'single', 'parallel', 'restart'],
      description:
        'when an event arrives while a run of this rule is going: queued (default, ' +
        'wait), single (skip it), parallel (run at once), restart (stop that run, ' +
        'start this one)',
    },
    cooldown: {
      description:
        'after a run starts, skip events for this long: a duration (for the whole ' +
        'rule), or { for, per: rule | sender | conversation }',
      if: { type: 'string' },
      then: duration('e.g. 1h'),
      else: {
        type: 'object',
        additionalProperties: false,
        required: ['for'],
        properties: {
          for: duration('how long, e.g. 1h'),
          per: { enum: ['rule', 'sender', 'conversation'], description: 'whose runs it counts (default rule)' },
        },
      },
    },
    throttle: {
      type: 'object',
      additionalProperties: false,
      required: ['max_runs', 'within'],
      description:
        'at most max_runs runs within a time, for the rule, each sender or each ' +
        'conversation; more are traced throttled',
      properties: {
        max_runs: { type: 'integer', minimum: 1 },
        within: duration('e.g. 1h'),
        per: { enum: ['rule', 'sender', 'conversation'], description: 'whose runs it counts (default rule)' },
      },
    },
    on_error: {
      type: 'array',
      minItems: 1,
      items: { $ref: '#/definitions/step' },
      description: 'steps taken when a step fails (error.message, error.code, error.action, error.step)',
    },
    on_timeout: {
      type: 'array',
      minItems: 1,
      items: { $ref: '#/definitions/step' },
      description: 'steps taken when an ask got no answer within its timeout',
    },
    on_cancel: {
      type: 'array',
      minItems: 1,
      items: { $ref: '#/definitions/step' },
      description: 'steps taken when the person answered an ask with a cancel word',
    },
    cancel_words: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description:
        'answers that end a dialog of this rule and run on_cancel (case-insensitive; default [cancel]; [] for none)',
    },
    enabled: { type: 'boolean', description: 'false: the rule never runs (traced as disabled)' },
  },
};

/** A trigger: an event name, or { name: options } (schedule). */
function triggerSchema(registry: Registry): JsonSchema {
  const triggers = [...registry.triggers.values()];
  return {
    description: 'An event name, or { name: options } for triggers with options (schedule).',
    if: { type: 'string' },
    then: { enum: triggers.filter((t) => !t.optionsRequired).map((t) => t.name) },
    else: {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
      properties: Object.fromEntries(
        triggers.filter((t) => t.options).map((t) => [t.name, { description: t.description, ...t.options }]),
      ),
    },
  };
}

/** A step: a bare action name, or { action: arguments } (arguments may be templates). */
function stepSchema(registry: Registry): JsonSchema {
  const actions = [...registry.actions.values()];
  return {
    description: 'An action: a bare name (accept, decline) or { action: arguments }.',
    if: { type: 'string' },
    then: { enum: actions.filter((a) => a.bare).map((a) => a.name) },
    else: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: {
        // a number or boolean argument may come from a template: its value is checked when the step runs
        ...Object.fromEntries(
          actions.map((a) => [
            a.name,
            { description: a.description, ...(a.templated === false ? a.schema : acceptTemplates(a.schema)) },
          ]),
        ),
        continue_on_error: {
          type: 'boolean',
          description: 'keep going with the next step when this one fails (default false: the run stops)',
        },
      },
    },
  };
}

/**
 * The JSON Schema of bot files, assembled from the registry: every trigger, condition and
 * action registered (plugins included) is validated and offered by editors
 * (`# yaml-language-server: $schema=../schemas/bot.schema.json`).
 *
 * @example const validate = new Ajv({ strict: false }).compile(botSchema(createRegistry()));
 */
export function botSchema(registry: Registry): JsonSchema {
  const conditions = [...registry.conditions.values()];
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'pinbot bot file',
    description: 'A bot: who it acts as, where, and rules (on → if → do). See docs/bots.md.',
    type: 'object',
    additionalProperties: false,
    required: ['name', 'rules'],
    properties: {
      ...BOT_PROPERTIES,
      rules: { type: 'array', minItems: 1, items: { $ref: '#/definitions/rule' } },
    },
    definitions: {
      rule: RULE,
      trigger: triggerSchema(registry),
      conditions: {
        description: 'a condition mapping, or a list of them (all must hold)',
        if: { type: 'array' },
        then: { type: 'array', items: { $ref: '#/definitions/condition' } },
        else: { $ref: '#/definitions/condition' },
      },
      condition: {
        type: 'object',
        minProperties: 1,
        description: 'conditions by name, or event fields with a matcher; every entry must hold',
        properties: Object.fromEntries(conditions.map((c) => [c.name, { description: c.description, ...c.schema }])),
        additionalProperties: { $ref: '#/definitions/matcher' },
      },
      matcher: matcherSchema,
      step: stepSchema(registry),
    },
  };
}
