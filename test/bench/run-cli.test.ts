import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `npm run bench -- --help` prints the usage and the benches instead of a parseArgs stack trace,
 * and an unknown option says which one and how to call the bench (exit 2). Both stop before any
 * bench or build runs.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/run-ts.js', 'bench/run.ts', ...args],
      { cwd: root, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('bench/run.ts options', { timeout: 60_000 }, () => {
  it('--help prints the usage and every bench', async () => {
    const r = await bench(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run bench \[-- NAME…\]/);
    expect(r.stdout).toMatch(/\n {2}cli {10}pinbot --version/);
    expect(r.stderr).not.toContain('ERR_PARSE_ARGS');
  });

  it('an unknown option is named, with the usage, and exit 2', async () => {
    const r = await bench(['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Unknown option '--bogus'\.\nusage: npm run bench/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
