import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface LogFloodFigures {
  seconds: number;
  /** Requests the attackers got an answer to, by status. */
  byStatus: Record<string, number>;
  answered: number;
  /** RSS of the server (MB): before the attack, the highest seen, at the end. */
  rssStartMb: number;
  rssMaxMb: number;
  rssEndMb: number;
  /** One RSS sample (MB) per `sampleEvery` seconds. */
  rssSeries: number[];
  /** The other user: requests sent, answered 200, and their latencies (ms). */
  userRequests: number;
  userOk: number;
  userP50: number;
  userP99: number;
  userMax: number;
  /** True when the server was stopped for passing `killAboveMb`. */
  killed: boolean;
}

/** RSS of a process in MB, from /proc (Linux). Internal. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

const percentile = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]! : 0;

/**
 * The log-flood attack of issue 13 (item 1) against a real `pinbot serve`: `connections`
 * sockets pipelining keyless `GET /api/v1/me` requests, each with a `headerBytes` header, for
 * `seconds`, while the server's stdout is a pipe nobody reads (`reader: 'stalled'`, the worst
 * case: a stuck log collector) or one read as fast as it comes (`'fast'`). Meanwhile another
 * user with a key asks `GET /api/v1/me` every second. Samples the server's RSS every second.
 * `root` is the checkout whose `bin/pinbot.js` is attacked (another worktree to compare);
 * `limits: false` turns the rate limits off, leaving only the bounded log buffer.
 *
 * @example
 * const f = await runLogFlood({ seconds: 60 }); console.log(f.rssMaxMb);
 */
export async function runLogFlood({
  seconds = 60,
  root = '.',
  connections = 8,
  headerBytes = 14 * 1024,
  reader = 'stalled',
  limits = true,
  killAboveMb = 4096,
  onProgress,
}: {
  seconds?: number;
  root?: string;
  connections?: number;
  headerBytes?: number;
  reader?: 'stalled' | 'fast';
  limits?: boolean;
  killAboveMb?: number;
  onProgress?: (s: string) => void;
} = {}): Promise<LogFloodFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'pinbot-flood-'));
  const bin = resolve(root, 'bin/pinbot.js');
  writeFileSync(join(dir, 'config.yaml'), `log:\n  level: info\n${limits ? '' : 'rate_limits:\n  enabled: false\n'}`);
  const cfg = ['--data', dir, '--config', join(dir, 'config.yaml')];
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-bots', ...cfg], {
    cwd: resolve(root),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((ok, fail) => {
      let text = '';
      const onData = (c: Buffer) => {
        text += c.toString();
        const m = /listening on http:\/\/[^:]+:(\d+)/.exec(text);
        if (m) {
          child.stdout!.off('data', onData);
          if (reader === 'stalled') child.stdout!.pause();
          else child.stdout!.on('data', () => undefined);
          ok(Number(m[1]));
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => fail(new Error(`serve exited with ${code} before listening`)));
    });
    const user = JSON.parse(
      execFileSync(process.execPath, [bin, 'users', 'add', '--name', 'Bystander', '--json', ...cfg], {
        cwd: resolve(root),
      }).toString(),
    ) as { api_key: string };
    const f: LogFloodFigures = {
      seconds,
      byStatus: {},
      answered: 0,
      rssStartMb: rssMb(child.pid!),
      rssMaxMb: 0,
      rssEndMb: 0,
      rssSeries: [],
      userRequests: 0,
      userOk: 0,
      userP50: 0,
      userP99: 0,
      userMax: 0,
      killed: false,
    };
    const deadline = Date.now() + seconds * 1000;
    let stop = false;
    const request = `GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'p'.repeat(headerBytes)}\r\n\r\n`;
    const attackers = Array.from(
      { length: connections },
      () =>
        new Promise<void>((done) => {
          const s = connect(port, '127.0.0.1');
          let carry = '';
          s.on('data', (c: Buffer) => {
            const text = carry + c.toString('latin1');
            let end = 0;
            for (const m of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) {
              f.byStatus[m[1]!] = (f.byStatus[m[1]!] ?? 0) + 1;
              f.answered++;
              end = m.index + m[0].length;
            }
            // Keep what could be the start of a status line cut by the chunk boundary.
            carry = text.slice(Math.max(end, text.length - 11));
          });
          const pump = () => {
            while (!stop && s.write(request));
            if (!stop) s.once('drain', pump);
            else s.end();
          };
          s.on('connect', pump);
          s.on('error', () => done());
          s.on('close', () => done());
        }),
    );
    const latencies: number[] = [];
    const bystander = (async () => {
      while (!stop) {
        const t0 = performance.now();
        f.userRequests++;
        try {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/me`, {
            headers: { 'X-API-Key': user.api_key },
            signal: AbortSignal.timeout(10_000),
          });
          await res.text();
          if (res.status === 200) f.userOk++;
        } catch {
          // counted as not served
        }
        latencies.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 1000)); // 60 a minute: within its own general bucket (100)
      }
    })();
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      const rss = rssMb(child.pid!);
      f.rssSeries.push(rss);
      f.rssMaxMb = Math.max(f.rssMaxMb, rss);
      onProgress?.(`log flood ${f.rssSeries.length}/${seconds} s  RSS ${rss} MB  answered ${f.answered}`);
      if (rss > killAboveMb) {
        f.killed = true;
        break;
      }
    }
    f.rssEndMb = rssMb(child.pid!);
    stop = true;
    await Promise.race([Promise.all([...attackers, bystander]), new Promise((r) => setTimeout(r, 5000))]);
    f.userP50 = Math.round(percentile(latencies, 50));
    f.userP99 = Math.round(percentile(latencies, 99));
    f.userMax = Math.round(Math.max(0, ...latencies));
    return f;
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) =>
      child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r),
    );
    rmSync(dir, { recursive: true, force: true });
  }
}
