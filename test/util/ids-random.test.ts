import { describe, expect, it, vi } from 'vitest';

// The CSPRNG replaced by a recorded generator, so the test knows which bytes each id was given.
const fills = vi.hoisted(() => [] as Buffer[]);
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  let state = 12345;
  return {
    ...real,
    randomFillSync: <T extends NodeJS.ArrayBufferView>(buf: T): T => {
      const bytes = buf as unknown as Buffer;
      for (let i = 0; i < bytes.length; i++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        bytes[i] = state >>> 24;
      }
      fills.push(Buffer.from(bytes));
      return buf;
    },
  };
});

const { newId } = await import('../../src/util/ids.js');

describe('newId random digits', () => {
  it(
    'are the next 40 bits of the CSPRNG block, in radix 32, most significant first; a ' +
      'block is refilled when used up',
    () => {
      const ids = Array.from({ length: 2000 }, () => newId('msg'));
      expect(fills.length).toBe(3); // 819 ids per block of 4,095 bytes
      ids.forEach((id, i) => {
        const block = fills[Math.floor(i / 819)]!;
        const bits = block.readUIntBE((i % 819) * 5, 5);
        expect(id.slice(-8)).toBe(bits.toString(32).padStart(8, '0'));
      });
    },
  );
});
