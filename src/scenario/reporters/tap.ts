import type { Reporter } from './types.js';
import { failureText, flatSteps } from './types.js';

const yamlBlock = (fields: Record<string, string | number | undefined>, pad: string) => [
  `${pad}  ---`,
  ...Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(
      ([k, v]) =>
        `${pad}  ${k}: ${
          /\n/.test(String(v))
            ? `|\n${String(v)
                .split('\n')
                .map((l) => `${pad}    ${l}`)
                .join('\n')}`
            : JSON.stringify(v)
        }`,
    ),
  `${pad}  ...`,
];

/** TAP version 14: one test point per scenario, its steps as a subtest. */
export function tapText(results: Parameters<Reporter['finish']>[0]): string {
  const lines = ['TAP version 14', `1..${results.length}`];
  results.forEach((r, i) => {
    const steps = flatSteps(r);
    lines.push(`# Subtest: ${r.name}`, `    1..${steps.length}`);
    steps.forEach((s, k) => {
      const ok = s.status !== 'failed';
      lines.push(`    ${ok ? 'ok' : 'not ok'} ${k + 1} - ${s.id} ${s.label}${s.status === 'skipped' ? ' # SKIP' : ''}`);
      if (!ok && !s.children?.some((c) => c.status === 'failed'))
        lines.push(
          ...yamlBlock(
            { message: s.error, diff: s.diff, at: s.where, clock: s.clock, seed: r.seed, curl: s.curl },
            '    ',
          ),
        );
    });
    lines.push(`${r.status === 'passed' ? 'ok' : 'not ok'} ${i + 1} - ${r.name}`);
    if (r.status === 'failed')
      lines.push(
        ...yamlBlock(
          {
            file: r.file,
            seed: r.seed,
            message:
              r.error ??
              failureText(
                r,
                steps.find((s) => s.status === 'failed' && !s.children?.some((c) => c.status === 'failed')) ??
                  steps[0]!,
              ),
          },
          '',
        ),
      );
  });
  return lines.join('\n') + '\n';
}

export function tapReporter(write: (text: string) => void): Reporter {
  return { finish: (results) => write(tapText(results)) };
}
