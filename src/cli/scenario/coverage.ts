import { InvalidArgumentError } from 'commander';
import type { LoadedScenario } from '../../scenario/load.js';

/**
 * What `--coverage` and `--coverage-min` ask for, checked before anything runs; `report` writes
 * the summary and files and says whether the gate passed. Internal.
 */
export async function coverageSetup(files: string[] | true | undefined, min: string[]) {
  if (files === undefined && !min.length) return undefined;
  const { parseCoverageMin, belowMinimum, coverageSummary, coverageHtml } = await import(
    '../../scenario/coverage/format.js'
  );
  const { coverageReport } = await import('../../scenario/coverage/report.js');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { dirname } = await import('node:path');
  let gate: ReturnType<typeof parseCoverageMin>;
  try {
    gate = parseCoverageMin(min);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  const list = Array.isArray(files) ? files : [];
  for (const f of list)
    if (!/\.(html?|json)$/i.test(f))
      throw new InvalidArgumentError(
        `--coverage ${f}: expected a file ending .html (the page) or .json (the ` +
          `data), e.g. --coverage reports/coverage.html`,
      );
  return {
    async report(
      scenarios: LoadedScenario[],
      results: Parameters<typeof coverageReport>[1],
      out: NodeJS.WritableStream,
    ): Promise<boolean> {
      const report = coverageReport(scenarios, results);
      out.write(`\n${coverageSummary(report)}\n`);
      for (const f of list) {
        mkdirSync(dirname(f), { recursive: true });
        writeFileSync(f, /\.json$/i.test(f) ? `${JSON.stringify(report, null, 2)}\n` : coverageHtml(report));
        process.stderr.write(`wrote coverage ${/\.json$/i.test(f) ? 'data' : 'page'} to ${f}\n`);
      }
      const below = belowMinimum(report, gate);
      for (const line of below) process.stderr.write(`coverage below the minimum: ${line}\n`);
      return below.length === 0;
    },
  };
}
