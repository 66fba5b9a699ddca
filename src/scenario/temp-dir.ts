import { accessSync, constants } from 'node:fs';

/**
 * Scenario stores are thrown away when the scenario ends, so their fsyncs buy nothing: when
 * the machine has a RAM-backed `/dev/shm` and TMPDIR is not set, the scenario command keeps
 * its temp stores there (the same file store code runs; its fsyncs cost nothing). An explicit
 * TMPDIR is respected. Returns the directory chosen, if any.
 */
export function preferRamTempDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TMPDIR || process.platform !== 'linux') return undefined;
  try {
    accessSync('/dev/shm', constants.W_OK);
  } catch {
    return undefined;
  }
  env.TMPDIR = '/dev/shm';
  return env.TMPDIR;
}
