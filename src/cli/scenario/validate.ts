import type { Command } from 'commander';
import { formatProblem } from '../../util/yaml-errors.js';
import { EXIT_INVALID } from './exit-codes.js';

/** `pinbot scenario validate [paths...]`. Internal. */
export function registerScenarioValidate(scenario: Command): void {
  scenario
    .command('validate')
    .description('check scenario files (and the fragments and bots they use) without running them')
    .argument('[paths...]', 'files or folders (default: scenarios/)')
    .option(
      '--allow-outside-root',
      'let scenarios read fragments, bot and plugin files outside their project root (trusted scenarios only)',
    )
    .action(async (paths: string[], opts: { allowOutsideRoot?: boolean }) => {
      const { loadAll, scenarioFiles } = await import('../../scenario/run-all.js');
      const { files, missing } = scenarioFiles(paths.length ? paths : ['scenarios']);
      for (const m of missing) process.stderr.write(`pinbot: no such file or folder: ${m}\n`);
      if (!files.length)
        process.stderr.write('pinbot: no scenario files found (*.yaml, *.yml; folders named fragments/ are skipped)\n');
      const { scenarios, problems } = await loadAll(files, { allowOutsideRoot: opts.allowOutsideRoot });
      for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
      if (problems.length || missing.length || !files.length) {
        process.stderr.write(
          `${problems.length} problem${problems.length === 1 ? '' : 's'} in ` +
            `${files.length - scenarios.length} of ${files.length} ` +
            `file${files.length === 1 ? '' : 's'}\n`,
        );
        process.exitCode = EXIT_INVALID;
        return;
      }
      process.stdout.write(
        `${scenarios.length} scenario${scenarios.length === 1 ? '' : 's'} valid ` +
          `(${scenarios.reduce((n, s) => n + s.steps.length, 0)} steps)\n`,
      );
    });
}
