import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { configFrom } from '../../src/config/load.js';
import type { DomainEnv } from '../../src/domain/env.js';
import { checkContent } from '../../src/domain/messaging/messages.js';

const env: DomainEnv = { clock: systemClock, config: configFrom({ messaging: { max_length: 5 } }) };
const ok = (content: string) => expect(() => checkContent(env, content)).not.toThrow();
const tooLong = (content: string, has: number) =>
  expect(() => checkContent(env, content)).toThrow(
    expect.objectContaining({
      code: 'validation_failed',
      details: [
        { path: 'body.content', message: `must be at most 5 characters (messaging.max_length); it has ${has}` },
      ],
    }),
  );

/** Message content: at most messaging.max_length code points, counted only when it can be too long. */
describe('checkContent', () => {
  it('takes up to max_length code points, whatever their UTF-16 length', () => {
    ok('abcde');
    ok('😀😀😀😀😀'); // 10 UTF-16 units, 5 code points
    ok('a😀b😀c');
    tooLong('abcdef', 6);
    tooLong('😀😀😀😀😀😀', 6);
    tooLong('ab😀cde', 6);
  });

  it('refuses content of only whitespace', () => {
    expect(() => checkContent(env, ' \n\t ')).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });
});
