import { afterEach, describe, expect, it, vi } from 'vitest';
import { idTime, newId, observeId } from '../../src/util/ids.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const decode = (digits: string) => [...digits].reduce((n, ch) => n * 32 + ALPHABET.indexOf(ch), 0);

describe('newId', () => {
  afterEach(() => vi.restoreAllMocks());

  it('encodes the millisecond, a counter within it and 40 random bits, and sorts in creation order', () => {
    const t = Date.now() + 10 * 60_000; // after every id made so far in this process
    vi.spyOn(Date, 'now').mockReturnValue(t);
    // more ids than one block of the random pool holds (819), so a refill happens on the way
    const ids = Array.from({ length: 3000 }, () => newId('msg'));
    ids.forEach((id, i) => {
      expect(id).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{13}[0-9a-v]{8}$/);
      expect(idTime(id)).toBe(t);
      expect(decode(id.slice(13, 17))).toBe(i); // the counter, 0 at the first id of the millisecond
    });
    expect([...ids].sort()).toEqual(ids);
    // the random part differs from id to id (a repeat of 40 random bits in 3,000 draws: ~4e-6)
    expect(new Set(ids.map((id) => id.slice(17))).size).toBe(ids.length);
  });

  it('draws the random part from the whole 40-bit range', () => {
    const rand = Array.from({ length: 2000 }, () => parseInt(newId('x').slice(-8), 32));
    expect(Math.max(...rand)).toBeGreaterThan(2 ** 39);
    expect(Math.min(...rand)).toBeLessThan(2 ** 38);
  });

  it('sorts after an id observed from a later millisecond (one another process made)', () => {
    const later = Date.now() + 3_600_000;
    const time = Array.from({ length: 9 }, (_, i) => ALPHABET[Math.floor(later / 32 ** (8 - i)) % 32]).join('');
    const seen = `usr_${time}zzzzvvvvvvvv`; // the greatest id of that millisecond
    expect(idTime(seen)).toBe(later);
    observeId(seen);
    const next = newId('usr');
    expect(next > seen).toBe(true);
    expect(idTime(next)).toBe(later + 1);
  });
});
