import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clock/virtual-clock.js';
import { configFrom } from '../../src/config/load.js';
import { startServer } from '../../src/server.js';
import { tempDir } from '../helpers/api.js';

const start = (dataDir: string) =>
  startServer({
    dataDir,
    config: configFrom({}),
    host: '127.0.0.1',
    port: 0,
    virtualClock: true,
    log: pino({ level: 'silent' }),
    services: [],
  });

describe('serve --virtual-clock across restarts', () => {
  it('restarts at its last virtual time, not the real one', async () => {
    const tmp = tempDir('pinbot-vtime-');
    try {
      const dataDir = join(tmp.dir, 'data');
      const first = await start(dataDir);
      const clock = first.clock as VirtualClock;
      const at = Date.parse('2031-05-01T10:00:00Z');
      await clock.advanceTo(at);
      await clock.advance(2 * 86_400_000);
      await first.close();
      const second = await start(dataDir);
      expect(second.clock.now()).toBe(at + 2 * 86_400_000);
      (second.clock as VirtualClock).set(at - 86_400_000); // moving back is the operator's choice, and is kept too
      await second.close();
      const third = await start(dataDir);
      expect(third.clock.now()).toBe(at - 86_400_000);
      await third.close();
    } finally {
      tmp.cleanup();
    }
  });
});
