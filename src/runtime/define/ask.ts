import { parseDuration, DURATION_PATTERN } from '../../util/duration.js';
import { isTemplate } from '../liquid/templates.js';
import type { ActionDef, CheckProblem } from '../contract/types.js';
import { checkExpect, expectSchema, type Expect } from './ask-expect.js';

/** `ask:` as written. */
export interface AskSpec {
  question: string;
  save?: string;
  expect?: Expect;
  retry?: string;
  attempts?: number;
  timeout?: string;
}

/** `ask:` rendered and prepared: what its write-ahead keeps. */
export interface AskArgs {
  question: string;
  retry?: string;
  save?: string;
  expect: Expect;
  attempts: number;
  timeout_ms: number;
}

/** An answer waits this long by default (issue 29: one hour). */
export const DEFAULT_ASK_TIMEOUT = '1h';
export const DEFAULT_ATTEMPTS = 3;
/** Words that end a dialog when a rule does not say `cancel_words:`. */
export const DEFAULT_CANCEL_WORDS: readonly string[] = ['cancel'];

const text = { type: 'string', minLength: 1 };

/**
 * `ask`: sends a question where `reply` would and waits for the same person's next message in
 * the same conversation (the dialog). The engine takes it itself (run/ask-step.ts): the
 * question, each answer and the deadline are written with the run, so a dialog survives a
 * restart; the timeout is a timer of the bot's clock.
 */
export const askAction: ActionDef = {
  name: 'ask',
  description:
    'Asks the person who caused the event a question (where reply would send it) and ' +
    'waits for their next message in that conversation: ' +
    ('the answer is checked against expect, re-asked with retry up to attempts, and ' +
      'saved as answers.NAME. No answer within timeout runs on_timeout; a cancel word ' +
      'runs on_cancel.'),
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['question'],
    properties: {
      question: { ...text, description: 'the question (a Liquid template)' },
      save: {
        type: 'string',
        pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
        description: 'the answer goes to answers.NAME for the later steps',
      },
      expect: expectSchema,
      retry: { ...text, description: 'sent after an invalid answer (default: the question again)' },
      attempts: {
        type: 'integer',
        minimum: 1,
        maximum: 20,
        description:
          `answers tried (default ${DEFAULT_ATTEMPTS}); after the last invalid one the ` +
          `run fails with error.code invalid_answer`,
      },
      timeout: {
        type: 'string',
        pattern: DURATION_PATTERN,
        description: `how long an answer is waited for (default ${DEFAULT_ASK_TIMEOUT}); then on_timeout runs`,
      },
    },
  },
  example: {
    question: 'What size? small, medium or large',
    save: 'size',
    expect: { choice: ['small', 'medium', 'large'] },
    timeout: '10m',
  },
  effect: 'api',
  needs: 'reply',
  templated: true,
  check(args): CheckProblem[] {
    const a = (args ?? {}) as Partial<AskSpec>;
    const out = checkExpect(a.expect).map((p) => ({ ...p, path: ['expect', ...p.path] }));
    if (typeof a.save === 'string' && isTemplate(a.save))
      out.push({ path: ['save'], message: 'save: is a name, not a template', hint: 'e.g. save: size' });
    return out;
  },
  prepare(args): AskArgs {
    const a = args as AskSpec;
    if (typeof a.question !== 'string' || a.question.trim() === '') throw new Error('ask: question rendered empty');
    const timeoutMs = parseDuration(a.timeout ?? DEFAULT_ASK_TIMEOUT);
    if (timeoutMs === undefined) throw new Error(`ask: timeout "${a.timeout}" is not a duration like 10m`);
    return {
      question: a.question,
      ...(a.retry?.trim() ? { retry: a.retry } : {}),
      ...(a.save ? { save: a.save } : {}),
      expect: a.expect ?? 'text',
      attempts: a.attempts ?? DEFAULT_ATTEMPTS,
      timeout_ms: timeoutMs,
    };
  },
  run() {
    throw new Error('ask is taken by the engine');
  },
};
