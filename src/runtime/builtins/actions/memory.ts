import { MEMORY_KEY_PATTERN } from '../../contract/memory-subjects.js';
import type { ActionDef, CheckProblem, MemoryEdit, MemoryWhose } from '../../contract/types.js';

/**
 * Rendered text back to a number or boolean when it looks like one — but not digits a number
 * would change: a leading 0 (`012345`, a PIN) or more than 15 digits. Internal.
 */
function memoryValue(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(t) && t.replace(/[-.]/g, '').length <= 15) return Number(t);
  if (t === 'true') return true;
  if (t === 'false') return false;
  return v;
}

// `remember` and `forget`: the memory of the person an event is about, or of its conversation
// (docs/bots.md "Memory"). Local steps whose rendered arguments are written ahead (`durable`),
// and whose write carries the step's Idempotency-Key: a step run again after a crash applies
// the same values once.

const whoseSchema = {
  enum: ['person', 'conversation'],
  description: 'whose memory: the person the event is about (default), or its conversation',
};
const keyList = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: { type: 'string', pattern: MEMORY_KEY_PATTERN },
  description: 'memory keys',
};
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const whoseOf = (args: unknown): MemoryWhose => (isObj(args) && args.in === 'conversation' ? 'conversation' : 'person');

/** What a `remember` or `forget` step did, for its trace. Internal. */
function outcome(ctx: { memory?: { person?: string; conversation?: string } }, whose: MemoryWhose) {
  return whose === 'person' ? { person: ctx.memory?.person } : { conversation: ctx.memory?.conversation };
}

/** The memory a step writes, or a clear error when the event has none. Internal. */
function memoryOf(ctx: Parameters<ActionDef['run']>[1], whose: MemoryWhose) {
  const m = ctx.memory;
  if (!m) throw new Error('memory is not available here');
  if (whose === 'person' && !m.person)
    throw new Error(`${ctx.trigger.name} events are about no person: there is no memory to write`);
  if (whose === 'conversation' && !m.conversation)
    throw new Error(`${ctx.trigger.name} events are in no conversation: there is no conversation memory to write`);
  return m;
}

/** `remember`: keys of the person's (or conversation's) memory. */
const remember: ActionDef = {
  name: 'remember',
  description:
    'Remembers values for the person the event is about (read as memory.KEY), or with in: conversation for ' +
    'its conversation (conversation_memory.KEY). Values are Liquid templates; rendered text that looks like a ' +
    'number or true/false is stored as one.',
  schema: {
    type: 'object',
    minProperties: 1,
    propertyNames: { pattern: MEMORY_KEY_PATTERN },
    properties: { in: whoseSchema },
    description: "KEY: value (values are Liquid templates); in: conversation for the conversation's memory",
  },
  example: { usual: '{{ match.size }}', last_seen: '{{ now }}' },
  effect: 'local',
  durable: true,
  needsMemory: whoseOf,
  check(args): CheckProblem[] {
    if (!isObj(args) || Object.keys(args).some((k) => k !== 'in')) return [];
    return [
      {
        path: [],
        message: 'remember needs at least one KEY: value',
        hint: 'e.g. remember: { usual: "{{ match.size }}" }',
      },
    ];
  },
  prepare(args) {
    const { in: _in, ...rest } = args as Record<string, unknown>;
    return { in: whoseOf(args), set: Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, memoryValue(v)])) };
  },
  async run(args, ctx) {
    const edit = args as MemoryEdit;
    await memoryOf(ctx, edit.in).apply([edit], ctx.idempotencyKey);
    return { ...outcome(ctx, edit.in), remembered: edit.set };
  },
};

/** `forget`: keys (or every key) of the person's (or conversation's) memory. */
const forget: ActionDef = {
  name: 'forget',
  description:
    'Forgets keys of the memory of the person the event is about: a list of keys, or ' +
    'all; { in: conversation, keys: [...] } for its conversation.',
  schema: {
    if: { type: 'array' },
    then: keyList,
    else: {
      if: { type: 'string' },
      then: { const: 'all', description: 'every key' },
      else: {
        type: 'object',
        additionalProperties: false,
        required: ['keys'],
        properties: { in: whoseSchema, keys: { if: { type: 'string' }, then: { const: 'all' }, else: keyList } },
      },
    },
  },
  example: ['usual'],
  effect: 'local',
  templated: false,
  durable: true,
  needsMemory: whoseOf,
  prepare(args): MemoryEdit {
    if (Array.isArray(args)) return { in: 'person', forget: args as string[] };
    if (args === 'all') return { in: 'person', forget: 'all' };
    const a = args as { in?: MemoryWhose; keys: string[] | 'all' };
    return { in: a.in ?? 'person', forget: a.keys };
  },
  async run(args, ctx) {
    const edit = args as MemoryEdit;
    await memoryOf(ctx, edit.in).apply([edit], ctx.idempotencyKey);
    return { ...outcome(ctx, edit.in), forgot: edit.forget };
  },
};

/** `remember`, `forget`. */
export const memoryActions: ActionDef[] = [remember, forget];
