import { availableParallelism } from 'node:os';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { LoadedScenario } from '../../scenario/load.js';
import type { ReporterName } from '../../scenario/reporters/index.js';
import { runPlan } from '../../scenario/run-plan.js';
import { hintFor } from '../../util/suggest.js';
import { formatProblem } from '../../util/yaml-errors.js';
import { coverageSetup } from './coverage.js';
import { EXIT_FAILED, EXIT_INVALID } from './exit-codes.js';
import { holdKept, type KeptHandle } from './keep.js';

const collect = (v: string, all: string[]) => [...all, v];
const positive = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

const seedArg = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 0xffffffff)
    throw new InvalidArgumentError(
      `expected a whole number from 0 to ${0xffffffff} (a failed run prints its seed), found ${JSON.stringify(v)}`,
    );
  return n;
};

/** `--coverage [file]`, repeatable: the files given (none: only the summary). */
const collectFiles = (v: string | undefined, all: string[] | true | undefined) => [
  ...(Array.isArray(all) ? all : []),
  ...(v === undefined ? [] : [v]),
];

/** A file for each report format, for hints. */
const REPORT_EXAMPLE = {
  junit: 'reports/scenarios.xml',
  tap: 'reports/scenarios.tap',
  json: 'reports/scenarios.json',
} as const;

/** Why `--grep` / `--tag` selected no scenario, with the tags that exist. Internal. */
function nothingSelected(all: LoadedScenario[], grep: string | undefined, tags: string[]): string {
  const known = [...new Set(all.flatMap((s) => s.tags))].sort();
  const by = [grep !== undefined ? `--grep ${JSON.stringify(grep)}` : '', ...tags.map((t) => `--tag ${t}`)]
    .filter(Boolean)
    .join(' ');
  const lines = [
    `nothing ran: no scenario matches ${by} (${all.length} scenario${all.length === 1 ? '' : 's'} in the files given)`,
  ];
  for (const t of tags)
    if (!known.includes(t))
      lines.push(
        `  --tag ${t}: no scenario has this tag; ${known.length ? hintFor(t, known, 'tags') : 'no scenario has tags'}`,
      );
  if (grep !== undefined)
    lines.push(
      `  --grep matches scenario names (name:, or the file name), e.g. ${all
        .slice(0, 3)
        .map((s) => JSON.stringify(s.name))
        .join(', ')}`,
    );
  return lines.join('\n');
}

interface RunOptions {
  parallel?: number;
  grep?: string;
  tag: string[];
  bail?: boolean;
  reporter: string[];
  output: string[];
  server?: string;
  keys?: string;
  quiet?: boolean;
  inProcess?: boolean;
  keep?: boolean;
  allowOutsideRoot?: boolean;
  seed?: number;
  coverage?: string[] | true;
  coverageMin: string[];
  junit?: string | true;
  tap?: string | true;
  json?: string | true;
}

/** `pinbot scenario run [paths...]`. Internal. */
export function registerScenarioRun(scenario: Command): void {
  scenario
    .command('run')
    .description('run scenarios, each on a fresh embedded server with its own virtual clock (or against --server)')
    .argument('[paths...]', 'files or folders (default: scenarios/)')
    .option(
      '--parallel <n>',
      `scenarios at once (default: by the number of files — a small suite runs in ` +
        `this process, a larger one in one worker process per core, here ` +
        `${availableParallelism()})`,
      positive,
    )
    .option('--grep <regex>', 'only scenarios whose name matches')
    .option('--tag <tag>', 'only scenarios with this tag (repeatable)', collect, [])
    .option('--bail', 'stop at the first failure')
    .option(
      '--reporter <name>',
      'also report as junit, tap or json (repeatable; NAME=FILE or with --output)',
      collect,
      [],
    )
    .option('--output <file>', 'file of the --reporter at the same position (repeatable)', collect, [])
    .option('--server <url>', 'run against a remote server on real time (needs --keys)')
    .option('--keys <file>', 'YAML file of user name → API key, for --server')
    .option('--quiet', 'no console report (only the --reporter files and the exit code)')
    .option(
      '--in-process',
      'run parallel scenarios concurrently in this process instead of in one worker process per --parallel',
    )
    .option(
      '--keep',
      "leave each failed scenario's server and data up until Ctrl-C (its curl lines then work); runs in this process",
    )
    .option(
      '--allow-outside-root',
      'let scenarios read fragments, bot and plugin files outside their project root (trusted scenarios only)',
    )
    .option(
      '--seed <n>',
      "every scenario's seed: its PINs, ids, keys and run_id repeat across runs " +
        '(default: seed: of the file, else from its name)',
      seedArg,
    )
    .option(
      '--coverage [file]',
      'report what the run exercised: API operations × statuses, bot rules, branches ' +
        'and lines (a summary; FILE.html a page, FILE.json the data; repeatable)',
      collectFiles,
    )
    .option(
      '--coverage-min <percent>',
      'exit 1 when coverage is below: 80 (every measure) or operations|rules|branches|lines=PERCENT (repeatable)',
      collect,
      [],
    )
    // `--junit` is what people try first; commander alone would say "unknown option" with no
    // way forward, so these hidden flags exist only to name the --reporter that does it
    .addOption(new Option('--junit [file]').hideHelp())
    .addOption(new Option('--tap [file]').hideHelp())
    .addOption(new Option('--json [file]').hideHelp())
    .action(runScenarios);
}

/** `--junit`, `--tap`, `--json`: not options; the error names the --reporter that does it. Internal. */
function rejectReportFlags(opts: RunOptions): void {
  for (const name of ['junit', 'tap', 'json'] as const) {
    const given = opts[name];
    if (given !== undefined)
      throw new InvalidArgumentError(
        `--${name} is not an option: write --reporter ` +
          `${name}=${typeof given === 'string' ? given : REPORT_EXAMPLE[name]} for a ` +
          `${name} report in a file (or --reporter ${name} for stdout)`,
      );
  }
}

/** `--grep`, as a RegExp. Internal. */
function grepArg(grep: string | undefined): RegExp | undefined {
  try {
    return grep ? new RegExp(grep) : undefined;
  } catch (err) {
    throw new InvalidArgumentError(`--grep: ${(err as Error).message}`);
  }
}

/** `--reporter NAME[=FILE]` with `--output FILE` at the same position. Internal. */
function reporterArgs(opts: RunOptions, known: readonly ReporterName[]): Array<{ name: ReporterName; file?: string }> {
  return opts.reporter.map((spec, i) => {
    const [name, file] = spec.includes('=')
      ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)]
      : [spec, opts.output[i]];
    if (!(known as readonly string[]).includes(name))
      throw new InvalidArgumentError(`--reporter ${name}: expected one of ${known.join(', ')}`);
    return { name: name as ReporterName, file };
  });
}

/**
 * The scenarios to run: loaded from the paths and selected by --grep and --tag; undefined (the
 * exit code set, the reason printed) when a file is invalid or missing or nothing is selected. Internal.
 */
async function selectedScenarios(
  paths: string[],
  opts: RunOptions,
  grep: RegExp | undefined,
  keys: Record<string, string> | undefined,
): Promise<LoadedScenario[] | undefined> {
  const { loadAll, scenarioFiles, selectScenarios } = await import('../../scenario/run-all.js');
  const { files, missing } = scenarioFiles(paths.length ? paths : ['scenarios']);
  for (const m of missing) process.stderr.write(`pinbot: no such file or folder: ${m}\n`);
  const { scenarios, problems } = await loadAll(files, {
    remoteUsers: keys ? Object.keys(keys) : undefined,
    allowOutsideRoot: opts.allowOutsideRoot,
  });
  for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
  if (problems.length || missing.length || !files.length) {
    process.stderr.write(
      problems.length
        ? `nothing ran: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the files above\n`
        : 'nothing ran: no scenario files found\n',
    );
    process.exitCode = EXIT_INVALID;
    return undefined;
  }
  const selected = selectScenarios(scenarios, { grep, tags: opts.tag });
  if (!selected.length) {
    // a typo'd --tag must not be a green CI job
    process.stderr.write(`${nothingSelected(scenarios, opts.grep, opts.tag)}\n`);
    process.exitCode = EXIT_INVALID;
    return undefined;
  }
  return selected;
}

/** The action of `pinbot scenario run`. Internal. */
async function runScenarios(paths: string[], opts: RunOptions): Promise<void> {
  rejectReportFlags(opts);
  const { readKeysFile, runAll } = await import('../../scenario/run-all.js');
  const { consoleReporter, fileReporter, REPORTERS } = await import('../../scenario/reporters/index.js');
  const { preferRamTempDir } = await import('../../scenario/temp-dir.js');
  preferRamTempDir(); // before any store is made; worker processes inherit it
  if (!!opts.server !== !!opts.keys)
    throw new InvalidArgumentError('--server and --keys go together: --server URL --keys keys.yaml');
  const grep = grepArg(opts.grep);
  const reporters = reporterArgs(opts, REPORTERS);
  const toStdout = reporters.some((r) => !r.file);
  const keys = opts.keys ? readKeysFile(opts.keys) : undefined;
  const selected = await selectedScenarios(paths, opts, grep, keys);
  if (!selected) return;
  const remote = opts.server && keys ? { url: opts.server, keys } : undefined;
  const coverage = await coverageSetup(opts.coverage, opts.coverageMin);
  if (coverage && remote)
    throw new InvalidArgumentError(
      '--coverage needs the embedded server (it counts what the server answered and ' +
        'what its bots did): run without --server',
    );
  const plan = runPlan(selected.length, { parallel: opts.parallel, inProcess: opts.inProcess || opts.keep });
  const list = reporters.map((r) => fileReporter(r.name, r.file));
  // a report on stdout keeps stdout for itself: the console report goes to stderr
  if (!opts.quiet)
    list.unshift(
      consoleReporter({
        out: toStdout ? process.stderr : process.stdout,
        parallel: Math.min(plan.parallel, selected.length),
        keep: opts.keep && !remote,
        remote: !!remote,
      }),
    );
  const kept: KeptHandle[] = [];
  // OTEL_* asks for traces: one per scenario run here (workers start their own)
  const { startTracing, stopTracing } = await import('../../telemetry/tracing.js');
  await startTracing(process.env, (msg) => process.stderr.write(`pinbot: opentelemetry: ${msg}\n`));
  const { summary, results } = await runAll(selected, {
    parallel: plan.parallel,
    grep,
    tags: opts.tag,
    bail: opts.bail,
    threads: !plan.inProcess,
    remote,
    reporters: list,
    keep: opts.keep ? (k) => kept.push(k) : undefined,
    allowOutsideRoot: opts.allowOutsideRoot,
    seed: opts.seed,
    coverage: !!coverage,
  });
  await stopTracing();
  for (const r of reporters) if (r.file) process.stderr.write(`wrote ${r.name} report to ${r.file}\n`);
  if (summary.failed) process.exitCode = EXIT_FAILED;
  if (coverage && !(await coverage.report(selected, results, toStdout ? process.stderr : process.stdout)))
    process.exitCode = EXIT_FAILED;
  if (kept.length) await holdKept(kept);
}
