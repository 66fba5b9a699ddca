import { availableParallelism } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { formatProblem } from '../util/yaml-errors.js';

const collect = (v: string, all: string[]) => [...all, v];
const positive = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

/** Exit codes: 0 all passed, 1 a scenario failed, 2 a file is invalid (nothing ran). */
const EXIT_FAILED = 1;
const EXIT_INVALID = 2;

/**
 * `pinbot scenario run|validate`: YAML scenarios acting as several users on a virtual clock
 * (see docs/scenarios.md). Internal.
 */
export function registerScenarioCommands(program: Command): void {
  const scenario = program.command('scenario').description('run and check YAML scenarios (docs/scenarios.md)');

  scenario
    .command('validate')
    .description('check scenario files (and the fragments and bots they use) without running them')
    .argument('[paths...]', 'files or folders (default: scenarios/)')
    .option('--allow-outside-root', 'let scenarios read fragments, bot and plugin files outside their project root (trusted scenarios only)')
    .action(async (paths: string[], opts: { allowOutsideRoot?: boolean }) => {
      const { loadAll, scenarioFiles } = await import('../scenario/run-all.js');
      const { files, missing } = scenarioFiles(paths.length ? paths : ['scenarios']);
      for (const m of missing) process.stderr.write(`pinbot: no such file or folder: ${m}\n`);
      if (!files.length) process.stderr.write('pinbot: no scenario files found (*.yaml, *.yml; folders named fragments/ are skipped)\n');
      const { scenarios, problems } = await loadAll(files, { allowOutsideRoot: opts.allowOutsideRoot });
      for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
      if (problems.length || missing.length || !files.length) {
        process.stderr.write(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${files.length - scenarios.length} of ${files.length} file${files.length === 1 ? '' : 's'}\n`);
        process.exitCode = EXIT_INVALID;
        return;
      }
      process.stdout.write(`${scenarios.length} scenario${scenarios.length === 1 ? '' : 's'} valid (${scenarios.reduce((n, s) => n + s.steps.length, 0)} steps)\n`);
    });

  scenario
    .command('run')
    .description('run scenarios, each on a fresh embedded server with its own virtual clock (or against --server)')
    .argument('[paths...]', 'files or folders (default: scenarios/)')
    .option('--parallel <n>', `scenarios at once (default: cores, here ${availableParallelism()})`, positive)
    .option('--grep <regex>', 'only scenarios whose name matches')
    .option('--tag <tag>', 'only scenarios with this tag (repeatable)', collect, [])
    .option('--bail', 'stop at the first failure')
    .option('--reporter <name>', 'also report as junit, tap or json (repeatable; NAME=FILE or with --output)', collect, [])
    .option('--output <file>', 'file of the --reporter at the same position (repeatable)', collect, [])
    .option('--server <url>', 'run against a remote server on real time (needs --keys)')
    .option('--keys <file>', 'YAML file of user name → API key, for --server')
    .option('--quiet', 'no console report (only the --reporter files and the exit code)')
    .option('--in-process', 'run parallel scenarios concurrently in this process instead of in one worker process per --parallel')
    .option('--allow-outside-root', 'let scenarios read fragments, bot and plugin files outside their project root (trusted scenarios only)')
    .action(async (paths: string[], opts: { parallel?: number; grep?: string; tag: string[]; bail?: boolean; reporter: string[]; output: string[]; server?: string; keys?: string; quiet?: boolean; inProcess?: boolean; allowOutsideRoot?: boolean }) => {
      const { loadAll, readKeysFile, runAll, scenarioFiles, selectScenarios } = await import('../scenario/run-all.js');
      const { consoleReporter, fileReporter, REPORTERS } = await import('../scenario/reporters/index.js');
      const { preferRamTempDir } = await import('../scenario/temp-dir.js');
      preferRamTempDir(); // before any store is made; worker processes inherit it
      if (!!opts.server !== !!opts.keys) throw new InvalidArgumentError('--server and --keys go together: --server URL --keys keys.yaml');
      let grep: RegExp | undefined;
      try {
        grep = opts.grep ? new RegExp(opts.grep) : undefined;
      } catch (err) {
        throw new InvalidArgumentError(`--grep: ${(err as Error).message}`);
      }
      const reporters = opts.reporter.map((spec, i) => {
        const [name, file] = spec.includes('=') ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)] : [spec, opts.output[i]];
        if (!(REPORTERS as readonly string[]).includes(name)) throw new InvalidArgumentError(`--reporter ${name}: expected one of ${REPORTERS.join(', ')}`);
        return { name: name as (typeof REPORTERS)[number], file };
      });
      const toStdout = reporters.some((r) => !r.file);
      const keys = opts.keys ? readKeysFile(opts.keys) : undefined;
      const { files, missing } = scenarioFiles(paths.length ? paths : ['scenarios']);
      for (const m of missing) process.stderr.write(`pinbot: no such file or folder: ${m}\n`);
      const { scenarios, problems } = await loadAll(files, { remoteUsers: keys ? Object.keys(keys) : undefined, allowOutsideRoot: opts.allowOutsideRoot });
      for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
      if (problems.length || missing.length || !files.length) {
        process.stderr.write(problems.length ? `nothing ran: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the files above\n` : 'nothing ran: no scenario files found\n');
        process.exitCode = EXIT_INVALID;
        return;
      }
      const selected = selectScenarios(scenarios, { grep, tags: opts.tag });
      const parallel = opts.parallel ?? availableParallelism();
      const list = reporters.map((r) => fileReporter(r.name, r.file));
      // a report on stdout keeps stdout for itself: the console report goes to stderr
      if (!opts.quiet) list.unshift(consoleReporter({ out: toStdout ? process.stderr : process.stdout, parallel: Math.min(parallel, selected.length) }));
      const { summary } = await runAll(selected, { parallel, grep, tags: opts.tag, bail: opts.bail, threads: !opts.inProcess, remote: opts.server && keys ? { url: opts.server, keys } : undefined, reporters: list, allowOutsideRoot: opts.allowOutsideRoot });
      for (const r of reporters) if (r.file) process.stderr.write(`wrote ${r.name} report to ${r.file}\n`);
      if (summary.failed) process.exitCode = EXIT_FAILED;
    });
}
