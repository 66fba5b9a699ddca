import { normalizePin } from '../../util/pin.js';
import { compileRegex, regexProblem, type BotRegex } from './regex.js';
import type { CheckProblem, JsonSchema } from '../contract/types.js';

/**
 * What an `ask` expects as its answer, and how an answer is read: `text`, `number` (`min`,
 * `max`), `choice` (case-insensitive; the 1-based index counts too), `yes_no`, `pin`, and
 * `matches` (a linear-time regular expression; its named groups go into `answers` too).
 */
export type Expect =
  | 'text'
  | 'number'
  | 'yes_no'
  | 'pin'
  | { text: { min_length?: number; max_length?: number } }
  | { number: { min?: number; max?: number; integer?: boolean } }
  | { choice: readonly string[] }
  | { matches: string; flags?: string };

/** An answer read: its value, and the named groups of a `matches:` pattern. */
export type Reading = { ok: true; value: unknown; groups?: Record<string, string> } | { ok: false; why: string };

/** Compiled `matches:` patterns of asks, by flags and pattern. Internal. */
const patterns = new Map<string, BotRegex>();

/** The longest answer read (a longer one is refused before any matching). */
export const MAX_ANSWER = 4000;

const YES = new Set([
  'yes',
  'y',
  'yeah',
  'yep',
  'yup',
  'sure',
  'ok',
  'okay',
  'true',
  'confirm',
  'si',
  'ja',
  'oui',
  '👍',
]);
const NO = new Set(['no', 'n', 'nope', 'nah', 'false', 'non', 'nein', '👎']);

export const expectSchema: JsonSchema = {
  description:
    'what an answer must be: text, number, yes_no, pin, { number: { min, max } }, { ' +
    'choice: [..] }, { matches: "regex" }',
  oneOf: [
    { enum: ['text', 'number', 'yes_no', 'pin'] },
    {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: {
        text: {
          type: 'object',
          additionalProperties: false,
          properties: { min_length: { type: 'integer', minimum: 0 }, max_length: { type: 'integer', minimum: 1 } },
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['number'],
      properties: {
        number: {
          type: 'object',
          additionalProperties: false,
          properties: { min: { type: 'number' }, max: { type: 'number' }, integer: { type: 'boolean' } },
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['choice'],
      properties: { choice: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['matches'],
      properties: { matches: { type: 'string', minLength: 1 }, flags: { type: 'string', pattern: '^[imsu]*$' } },
    },
  ],
};

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Problems of an `expect:` beyond its schema (a pattern the linear-time engine cannot run, min > max). */
export function checkExpect(e: unknown): CheckProblem[] {
  if (!isObj(e)) return [];
  if (typeof e.matches === 'string') {
    const p = regexProblem(e.matches, typeof e.flags === 'string' ? e.flags : '');
    return p ? [{ path: ['matches'], message: p.message, hint: p.hint }] : [];
  }
  const n = e.number as { min?: number; max?: number } | undefined;
  if (isObj(n) && typeof n.min === 'number' && typeof n.max === 'number' && n.min > n.max) {
    return [{ path: ['number'], message: `number: min ${n.min} is more than max ${n.max}`, hint: 'swap them' }];
  }
  return [];
}

/** The named groups a `matches:` expect saves into `answers` (for the check of templates). */
export function expectGroups(e: unknown): string[] {
  if (!isObj(e) || typeof e.matches !== 'string') return [];
  return [...e.matches.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!);
}

/** Reads a number as people type it: `3`, `-2.5`, `1,5` (a decimal comma), `1 000`. Internal. */
function readNumber(text: string): number | undefined {
  const t = text.replace(/[\s_]/g, '').replace(/^(-?\d+),(\d+)$/, '$1.$2');
  if (!/^[-+]?\d+(\.\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** A short label of an expect for traces and re-asks ("a number from 1 to 10"). */
export function describeExpect(e: Expect): string {
  if (e === 'text') return 'some text';
  if (e === 'number') return 'a number';
  if (e === 'yes_no') return 'yes or no';
  if (e === 'pin') return 'a PIN (6 letters or digits)';
  if ('text' in e) return `text of ${e.text.min_length ?? 1} to ${e.text.max_length ?? MAX_ANSWER} characters`;
  if ('number' in e) {
    const { min, max } = e.number;
    const kind = e.number.integer ? 'a whole number' : 'a number';
    if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
    if (min !== undefined) return `${kind} of at least ${min}`;
    return max !== undefined ? `${kind} of at most ${max}` : kind;
  }
  if ('choice' in e) return `one of ${e.choice.join(', ')}`;
  return `text matching ${e.matches}`;
}

/**
 * Reads one answer against what the ask expects. Never throws, and costs time linear in the
 * answer (regexes run on re2js; answers past MAX_ANSWER characters are refused first).
 *
 * @example readAnswer({ choice: ['small', 'large'] }, '2') // { ok: true, value: 'large' }
 */
export function readAnswer(e: Expect, raw: string): Reading {
  const text = raw.trim();
  if (text.length > MAX_ANSWER) return { ok: false, why: `longer than ${MAX_ANSWER} characters` };
  const bad = { ok: false as const, why: `expected ${describeExpect(e)}` };
  if (e === 'text') return text ? { ok: true, value: text } : bad;
  if (e === 'number') {
    const n = readNumber(text);
    return n === undefined ? bad : { ok: true, value: n };
  }
  if (e === 'yes_no') {
    const t = text.toLowerCase().replace(/[.!]+$/, '');
    return YES.has(t) ? { ok: true, value: true } : NO.has(t) ? { ok: true, value: false } : bad;
  }
  if (e === 'pin') {
    const p = normalizePin(text);
    return /^[A-Z0-9]{6}$/.test(p) ? { ok: true, value: p } : bad;
  }
  if ('text' in e) {
    const len = [...text].length;
    return len >= (e.text.min_length ?? 1) && len <= (e.text.max_length ?? MAX_ANSWER)
      ? { ok: true, value: text }
      : bad;
  }
  if ('number' in e) {
    const n = readNumber(text);
    const { min, max, integer } = e.number;
    if (
      n === undefined ||
      (integer && !Number.isInteger(n)) ||
      (min !== undefined && n < min) ||
      (max !== undefined && n > max)
    )
      return bad;
    return { ok: true, value: n };
  }
  if ('choice' in e) {
    const lower = text.toLowerCase();
    const hit = e.choice.find((c) => c.toLowerCase() === lower);
    if (hit !== undefined) return { ok: true, value: hit };
    const i = /^\d{1,3}$/.test(text) ? Number(text) : 0;
    return i >= 1 && i <= e.choice.length ? { ok: true, value: e.choice[i - 1] } : bad;
  }
  const key = `${e.flags ?? ''}/${e.matches}`;
  let re = patterns.get(key);
  if (!re) {
    if (patterns.size > 500) patterns.clear();
    patterns.set(key, (re = compileRegex(e.matches, e.flags ?? '')));
  }
  const groups = re.groups(text);
  return groups ? { ok: true, value: text, groups } : bad;
}
