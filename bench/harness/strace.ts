import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

/**
 * The system calls of process `pid` while `load` runs, by name (`strace -f -c` on every thread,
 * its table written to `out` and removed), as one line: the calls per request, the `top` names
 * with theirs, and the requests counted. `unit`: how a request is named ("a write", "writes").
 * strace slows the process it follows: the figure is a count, not a time.
 */
export async function syscallsUnder(
  pid: number,
  out: string,
  load: () => Promise<{ total: number }>,
  unit: { per: string; of: string },
  top: number,
): Promise<string> {
  const st = spawn('strace', ['-f', '-c', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const r = await load();
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const text = readFileSync(out, 'utf8');
  rmSync(out, { force: true });
  const rows = text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 5 && /^\d/.test(f[0]!) && f.at(-1) !== 'total')
    .map((f) => ({ name: f.at(-1)!, calls: Number(f[3]) }))
    .sort((x, y) => y.calls - x.calls);
  const per = (n: number) => (n / Math.max(1, r.total)).toFixed(2);
  const sum = rows.reduce((t, x) => t + x.calls, 0);
  const named = rows
    .slice(0, top)
    .map((x) => `${x.name} ${per(x.calls)}`)
    .join(', ');
  return `${per(sum)} syscalls ${unit.per} (${named}) over ${r.total} ${unit.of}`;
}
