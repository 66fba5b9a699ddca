import { describe, expect, it } from 'vitest';
import { runCrashLoop } from './crash-loop.js';

describe('crash loop: SIGKILL pinbot serve during writes, restart, verify', () => {
  it('20 kills: every acknowledged write survives, every start loads, retries happen once, money adds up', async () => {
    const f = await runCrashLoop({ kills: 20, seed: 20261121, burstMs: [50, 300], earlyKillShare: 0.2 });
    const figures = {
      kills: f.kills,
      lost: f.lost,
      serverErrors: f.serverErrors,
      unloadableStarts: f.unloadableStarts,
      duplicates: f.duplicates,
      invariantViolations: f.invariantViolations,
      keysInLogs: f.keysInLogs,
    };
    expect(figures, f.samples.join('\n')).toEqual({
      kills: 20,
      lost: 0,
      serverErrors: 0,
      unloadableStarts: 0,
      duplicates: 0,
      invariantViolations: 0,
      keysInLogs: 0,
    });
    expect(f.acknowledged).toBeGreaterThan(60);
    expect(f.byKind['user (CLI)']).toBeGreaterThan(0);
  }, 300_000);
});
