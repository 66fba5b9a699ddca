import { describe, expect, it } from 'vitest';
import { Serial } from '../../src/util/serial.js';

describe('Serial', () => {
  it('runs one at a time in the order given; a failure goes to its caller only; idle waits for all', async () => {
    const serial = new Serial();
    const log: string[] = [];
    let openA!: () => void;
    const a = serial.run(() => new Promise<string>((r) => (openA = () => r('a'))).then((v) => (log.push(v), v)));
    const b = serial.run(() => {
      log.push('b');
      throw new Error('b failed');
    });
    const c = serial.run(() => (log.push('c'), 'c'));
    const idle = serial.idle().then(() => log.push('idle'));
    await Promise.resolve();
    expect(log).toEqual([]); // b and c wait for a
    openA();
    await expect(a).resolves.toBe('a');
    await expect(b).rejects.toThrow('b failed');
    await expect(c).resolves.toBe('c');
    await idle;
    expect(log).toEqual(['a', 'b', 'c', 'idle']);
  });
});
