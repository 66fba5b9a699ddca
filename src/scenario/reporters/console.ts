import type { LoadedScenario } from '../load.js';
import type { ScenarioResult, StepResult } from '../runner.js';
import { reproduceLabel, type Reporter, type Summary } from './types.js';

type Out = { write(s: string): unknown; isTTY?: boolean };

/** ANSI colours, or none. Internal. */
function palette(color: boolean) {
  const paint = (code: number) => (s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  return { green: paint(32), red: paint(31), dim: paint(2), bold: paint(1) };
}

/**
 * The console report: one block per scenario with each step's name, result and duration; a
 * failed step shows its message, the expected-vs-actual diff, where it is written, the
 * scenario's clock and seed, and a curl line (keys masked). With one scenario at a time the
 * steps print as they finish; with several in parallel each scenario prints as a block when
 * it ends (so blocks never interleave) and a terminal shows what is running on one line.
 */
export function consoleReporter({
  out = process.stdout as Out,
  parallel = 1,
  color,
  keep = false,
  remote = false,
}: {
  out?: Out;
  parallel?: number;
  color?: boolean;
  keep?: boolean;
  remote?: boolean;
} = {}): Reporter {
  const { green, red, dim, bold } = palette(color ?? (!!out.isTTY && !process.env.NO_COLOR));
  const header = (sc: { name: string; file: string }) => `${bold(sc.name)} ${dim(sc.file)}`;
  const streaming = parallel <= 1;
  const running = new Map<string, { name: string; done: number; total: number }>();
  let status = false;
  const clearStatus = () => {
    if (status) out.write('\r\x1b[2K');
    status = false;
  };
  const showStatus = () => {
    if (!out.isTTY || streaming || !running.size) return;
    const list = [...running.values()].map((r) => `${r.name} (${r.done}/${r.total})`).join(', ');
    out.write(`\r\x1b[2K${dim(`running: ${list}`.slice(0, 200))}`);
    status = true;
  };
  const mark = (s: StepResult) => (s.status === 'passed' ? green('✓') : s.status === 'failed' ? red('✗') : dim('-'));
  const stepLines = (r: { seed: number; kept?: ScenarioResult['kept'] }, s: StepResult, depth = 1): string[] => {
    const pad = '  '.repeat(depth);
    const info =
      s.status === 'skipped'
        ? dim(s.detail ? `skipped: ${s.detail}` : 'skipped')
        : dim([s.detail, `${s.ms} ms`].filter(Boolean).join(' · '));
    const lines = [`${pad}${mark(s)} ${s.id} ${s.label}  ${info}`];
    for (const l of s.logs ?? []) lines.push(`${pad}    ${dim('log:')} ${l}`);
    for (const c of s.children ?? []) lines.push(...stepLines(r, c, depth + 1));
    if (s.status === 'failed' && !s.children?.some((c) => c.status === 'failed')) {
      lines.push(`${pad}    ${red(s.error ?? 'failed')}`);
      if (s.diff)
        lines.push(
          ...s.diff
            .split('\n')
            .map((l) => `${pad}  ${l.replace(/^(\s*)- /, (m) => red(m)).replace(/^(\s*)\+ /, (m) => green(m))}`),
        );
      lines.push(`${pad}    ${dim(`at ${s.where} · scenario clock ${s.clock} · seed ${r.seed}`)}`);
      // a failed embedded scenario is kept when the run keeps them (--keep): known before it ends
      if (s.curl)
        lines.push(
          `${pad}    ${dim(
            reproduceLabel({ mode: remote ? 'remote' : 'embedded', kept: 'kept' in r && r.kept ? r.kept : keep }),
          )} ${s.curl}`,
        );
    }
    return lines;
  };
  const footer = (r: ScenarioResult) => {
    const n = r.steps.length;
    const text =
      `${r.status === 'passed' ? green('✓ passed') : red('✗ failed')} ` +
      `${dim(`${n} step${n === 1 ? '' : 's'} · ${r.ms} ms · clock ${r.clock}`)}`;
    const kept = r.kept ? `\n  ${bold('kept up until Ctrl-C:')} server ${r.kept.url} · data ${r.kept.dataDir}` : '';
    return `${r.error ? `  ${red(r.error)}\n` : ''}  ${text}${kept}`;
  };
  const write = (s: string) => {
    clearStatus();
    out.write(s);
    showStatus();
  };
  return {
    scenarioStart(sc: LoadedScenario) {
      running.set(sc.file, { name: sc.name, done: 0, total: sc.steps.length });
      if (streaming) write(`${header(sc)}\n`);
      else showStatus();
    },
    stepEnd(sc, s) {
      const r = running.get(sc.file);
      if (r) r.done++;
      if (streaming) write(`${stepLines(sc, s).join('\n')}\n`);
      else showStatus();
    },
    scenarioEnd(r) {
      running.delete(r.file);
      if (streaming) write(`${footer(r)}\n\n`);
      else write(`${[header(r), ...r.steps.flatMap((s) => stepLines(r, s)), footer(r)].join('\n')}\n\n`);
    },
    finish(results, sum: Summary) {
      clearStatus();
      const failed = results.filter((r) => r.status === 'failed');
      const line =
        `${sum.total} scenario${sum.total === 1 ? '' : 's'}: ` +
        `${green(`${sum.passed} passed`)}${
          sum.failed ? `, ${red(`${sum.failed} failed`)}` : ''
        } ${dim(`(${(sum.ms / 1000).toFixed(1)} s, parallel ${sum.parallel})`)}`;
      out.write(`${line}\n`);
      for (const r of failed) {
        const step = r.steps.find((s) => s.status === 'failed');
        out.write(
          `  ${red('✗')} ${r.name} ` +
            `${dim(r.file)}${step ? ` — step ${step.id} ${step.label}` : r.error ? ` — ${r.error}` : ''}\n`,
        );
      }
    },
  };
}
