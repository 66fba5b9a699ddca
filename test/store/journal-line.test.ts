import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, encodeEntryBytes } from '../../src/store/file/journal-line.js';
import type { Change } from '../../src/store/core/types.js';

/** The journal line as bytes (what the file store appends) is the line of the format, byte for byte. */
describe('encodeEntryBytes', () => {
  const cases: Array<[string, Change[]]> = [
    [
      'a message and its activity',
      [
        ['messages', 'msg_1', { id: 'msg_1', content: 'hello', timestamp: 1795677963254 } as never],
        ['conversation_activity', 'cnv_1', { id: 'cnv_1', last_message_id: 'msg_1' } as never],
      ],
    ],
    ['a delete', [['notes', 'n1', null]]],
    [
      'text beyond ASCII: accents, CJK, emoji, a lone surrogate, controls and quotes',
      [['notes', 'n2', { id: 'n2', text: 'é 中文 🎉 \ud800 \u0000\n"\\ שלום' } as never]],
    ],
    ['nothing', []],
  ];
  it.each(cases)('%s: the same bytes as the string form, read back by decodeEntry', (_name, changes) => {
    for (const seq of [1, 42, 9_007_199_254_740_991]) {
      const bytes = encodeEntryBytes(seq, changes);
      expect(bytes.toString('utf8')).toBe(encodeEntry(seq, changes));
      expect(bytes.length).toBe(Buffer.byteLength(encodeEntry(seq, changes)));
      expect(bytes[bytes.length - 1]).toBe(0x0a);
      expect(decodeEntry(bytes, 0, bytes.length - 1)).toEqual({ s: seq, c: JSON.parse(JSON.stringify(changes)) });
    }
  });

  it('a changed byte fails the checksum', () => {
    const bytes = encodeEntryBytes(3, cases[0]![1]);
    const i = bytes.indexOf('hello');
    bytes[i] = 'j'.charCodeAt(0);
    expect(decodeEntry(bytes, 0, bytes.length - 1)).toBe('checksum mismatch');
  });

  it('lines made one after another do not share bytes (each is its own until appended)', () => {
    const a = encodeEntryBytes(1, cases[0]![1]);
    const copy = Buffer.from(a);
    encodeEntryBytes(2, cases[2]![1]);
    expect(a.equals(copy)).toBe(true);
  });
});
