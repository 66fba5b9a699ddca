import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { botVarsCommand, formatBotVars, type BotVarsView } from '../services/bot-vars.js';
import { AdminError } from '../admin/errors.js';
import { runOnDataDir } from './admin-client.js';
import { readBotTraces } from './bot-traces.js';
import { callAdmin, socketPath } from '../admin/socket.js';
import { loadConfig } from '../config/load.js';
import { systemClock } from '../clock/clock.js';
import { createScheduler } from '../clock/scheduler.js';
import { createLogger } from '../log.js';
import { BotHost, formatTrace, loadBotFile, type Registry, type Trace, watchBots } from '../runtime/index.js';
import { installProcessGuard } from '../plugin-api/guard.js';
import { buildRegistry } from '../services/registry.js';
import { lockHolder } from '../store/file/lock.js';
import { parseDuration } from '../util/duration.js';
import { formatProblem, type FileProblem } from '../util/yaml-errors.js';
import { registerWhatIf } from './bot-what-if.js';
import { DATA_DIR } from '../util/data-dir.js';
import { addMemoryCommand } from './bots-memory-command.js';
import { registerDialogCommands } from './dialog-commands.js';

interface Common {
  data: string;
  config: string;
}

const common = (cmd: Command) =>
  cmd.option('--data <dir>', 'data directory', './data').option('--config <file>', 'config file', './config.yaml');

/** The bot files named, or every *.yaml of the configured bots folder. Internal. */
function botFiles(files: string[], opts: Common): string[] {
  if (files.length) return files.map((f) => resolve(f));
  const dir = resolve(loadConfig(opts.config).bots.dir);
  if (!existsSync(dir)) throw new AdminError(`no bot files given and ${dir} does not exist`);
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

/** Validates files: every problem of every file, and names used twice. */
export function validateFiles(
  files: string[],
  registry: Registry,
  bots: { env_allow?: readonly string[]; allowed_servers?: readonly string[] } = {},
): Array<{ file: string; name?: string; problems: FileProblem[]; warnings: FileProblem[] }> {
  const names = new Map<string, string>();
  return files.map((file) => {
    const {
      bot,
      problems,
      warnings = [],
    } = loadBotFile(file, { registry, envAllow: bots.env_allow, allowedServers: bots.allowed_servers });
    if (bot) {
      const other = names.get(bot.name);
      if (other)
        problems.push({
          file,
          line: 1,
          col: 1,
          path: 'name',
          message: `the bot name "${bot.name}" is also used by ${other}`,
          hint: 'give each bot its own name',
        });
      names.set(bot.name, file);
    }
    return { file, name: bot?.name, problems, warnings };
  });
}

/** One bot of `pinbot bots list` as a line: name, state, why, last poll and run, file. */
export function formatBotLine(b: {
  name?: string;
  file: string;
  status: string;
  message?: string;
  last_poll?: string;
  last_run?: string;
}): string {
  const when = (iso: string | undefined) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'never');
  const times =
    b.status === 'running' || b.last_poll || b.last_run
      ? `  last poll ${when(b.last_poll)}, last run ${when(b.last_run)}`
      : '';
  return `${(b.name ?? '?').padEnd(20)} ${b.status.padEnd(10)} ${b.message ?? ''}${times}  ${b.file}`;
}

/** Is a server running on the data directory (reachable through its admin socket)? */
function serverRunning(dataDir: string): boolean {
  return lockHolder(dataDir) !== undefined && existsSync(socketPath(dataDir));
}

/** `bots trace NAME --scenario RUN [--out FILE]`. Internal. */
async function printTraceScenario(name: string, run: string, opts: Common & { out?: string }): Promise<void> {
  const { traceScenario } = await import('./bot-traces.js');
  const r = await traceScenario(name, run, opts);
  if (!r.out) return void process.stdout.write(r.text);
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(dirname(resolve(r.out)), { recursive: true });
  writeFileSync(r.out, r.text, { flag: 'wx' });
  process.stderr.write(`wrote ${r.out}: run it with pinbot scenario run ${r.out}\n`);
}

/** `pinbot bots …`: validate, run, list, trace, reload, pause, resume. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: longer than 80 lines before the rule; to split (issue 28 item 4)
export function registerBotCommands(program: Command): void {
  const bots = program.command('bots').description('validate, run and inspect bots (YAML files in bots/)');
  registerDialogCommands(bots);

  common(
    bots
      .command('validate')
      .description('check bot files; every problem with file:line:col (exit 1 on any)')
      .argument('[files...]')
      .option('--json', 'print JSON'),
  ).action(async (files: string[], opts: Common & { json?: boolean }) => {
    const config = loadConfig(opts.config);
    // plugin problems are printed below, with the bots they affect
    const registry = await buildRegistry({ config, log: createLogger({ level: 'silent' }) });
    const pluginProblems = registry.plugins?.problemLines() ?? [];
    const results = validateFiles(botFiles(files, opts), registry, config.bots);
    const bad = results.filter((r) => r.problems.length);
    if (opts.json)
      process.stdout.write(
        JSON.stringify({
          files: results.map((r) => ({
            file: r.file,
            name: r.name,
            valid: !r.problems.length,
            problems: r.problems,
            warnings: r.warnings,
          })),
          plugin_problems: pluginProblems,
        }) + '\n',
      );
    else {
      for (const line of pluginProblems) process.stdout.write(`plugin: ${line}\n`);
      for (const r of results) {
        if (r.problems.length) for (const p of r.problems) process.stdout.write(formatProblem(p) + '\n');
        else process.stdout.write(`ok  ${r.file} (${r.name})\n`);
        for (const w of r.warnings) process.stdout.write(`warning: ${formatProblem(w)}\n`);
      }
      process.stdout.write(`${results.length - bad.length} of ${results.length} bot file(s) valid\n`);
    }
    if (bad.length) process.exitCode = 1;
  });

  common(
    bots
      .command('run')
      .description('run bots alone against a server (remote, or a `pinbot serve` elsewhere)')
      .argument('[files...]')
      .requiredOption('--server <url>', 'base URL of the server, e.g. https://api.example.com')
      .option('--dry-run', 'poll and evaluate for real, log the actions, take none'),
  ).action(async (files: string[], opts: Common & { server: string; dryRun?: boolean }) => {
    try {
      new URL(opts.server);
    } catch {
      throw new AdminError(`--server must be a URL like http://127.0.0.1:3000, not ${opts.server}`);
    }
    // the file store behind the bots' state is loaded only by the command that runs bots (the
    // runtime itself is not: validate needs its barrel too, for loadBotFile and the registry)
    const { fileBotStorage } = await import('../deployment/bot-storage.js');
    const config = loadConfig(opts.config);
    const log = createLogger({ level: config.log.level });
    const explicit = files.length > 0;
    const dir = explicit ? undefined : resolve(config.bots.dir);
    const stateDir = join(resolve(opts.data), DATA_DIR.bots);
    const registry = await buildRegistry({ config, log });
    const scheduler = createScheduler(systemClock);
    // plugins run here too (no HTTP routes: there is no server in this process)
    const plugins = registry.plugins;
    if (plugins?.instances.length) installProcessGuard(() => plugins.instances, log);
    await plugins?.start({ clock: systemClock, scheduler, log });
    const host = new BotHost({
      registry,
      log,
      clock: systemClock,
      scheduler,
      stateDir,
      storage: fileBotStorage({ stateDir }),
      files: explicit ? files : undefined,
      dir,
      server: opts.server,
      envAllow: config.bots.env_allow,
      allowedServers: config.bots.allowed_servers,
      dryRun: opts.dryRun === true,
      stepTimeoutMs: parseDuration(config.runtime.step_timeout),
    });
    const report = await host.start();
    const running = report.filter((b) => b.status !== 'invalid' && b.status !== 'disabled');
    log.info(`bots: ${running.length} of ${report.length} started against ${opts.server}`);
    if (running.length === 0) {
      await host.stop();
      await registry.plugins?.stop();
      throw new AdminError('no valid bot to run; see the problems above (`pinbot bots validate`)');
    }
    // edited files are validated and swapped in (a bot stopped by a 401 starts again once its file
    // is fixed); the watcher keeps the process alive even when every bot has stopped
    const unwatch = watchBots(
      dir ?? files,
      () => void host.reload().catch((err) => log.error({ err }, 'reload failed')),
      { persistent: true },
    );
    const stop = () => {
      unwatch();
      void host
        .stop()
        .then(() => registry.plugins?.stop())
        .then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

  common(
    bots
      .command('list')
      .description('the bots and their state (from the running server, else from the files)')
      .option('--json', 'print JSON'),
  ).action(async (opts: Common & { json?: boolean }) => {
    const dataDir = resolve(opts.data);
    let list: Array<{
      name?: string;
      file: string;
      status: string;
      message?: string;
      problems?: string[];
      warnings?: string[];
      last_poll?: string;
      last_run?: string;
    }>;
    if (serverRunning(dataDir)) list = ((await callAdmin(dataDir, 'bots.status')) as { bots: typeof list }).bots;
    else {
      const config = loadConfig(opts.config);
      const registry = await buildRegistry({ config, log: createLogger({ level: config.log.level }) });
      list = validateFiles(botFiles([], opts), registry, config.bots).map((r) => ({
        name: r.name,
        file: r.file,
        status: r.problems.length ? 'invalid' : 'valid (not running)',
        problems: r.problems.map(formatProblem),
      }));
    }
    if (opts.json) return void process.stdout.write(JSON.stringify({ bots: list }) + '\n');
    if (!list.length) return void process.stdout.write('no bots\n');
    for (const b of list) {
      process.stdout.write(formatBotLine(b) + '\n');
      for (const p of b.problems ?? []) process.stdout.write(`    ${p}\n`);
      for (const w of b.warnings ?? []) process.stdout.write(`    warning: ${w}\n`);
    }
  });

  addMemoryCommand(bots);

  common(
    bots
      .command('trace')
      .description('why a bot did (or did not) act: its recent rule runs')
      .argument('<name>')
      .option('--limit <n>', 'how many runs', '20')
      .option('--json', 'print JSON')
      .option(
        '--scenario <run>',
        'write a scenario that recreates a run and expects what the bot did (RUN: its event id, e.g. txn_…, or last)',
      )
      .option('--out <file>', 'with --scenario: write it to this file (else stdout)'),
  ).action(async (name: string, opts: Common & { limit: string; json?: boolean; scenario?: string; out?: string }) => {
    if (opts.scenario !== undefined) return void (await printTraceScenario(name, opts.scenario, opts));
    const { traces, waiting } = await readBotTraces(name, opts, opts.limit);
    if (opts.json)
      return void process.stdout.write(JSON.stringify({ bot: name, traces, ...(waiting ? { waiting } : {}) }) + '\n');
    // runs of one event finish in any order; people read them in the order they started
    const ordered = [...traces].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const lines = ordered.length ? ordered.map(formatTrace) : [`no runs of ${name} yet`];
    if (waiting) lines.push(`${name}: ${waiting}`);
    process.stdout.write(lines.join('\n') + '\n');
  });

  registerWhatIf(bots);

  common(
    bots
      .command('reload')
      .description('re-read the bot files of the running server now')
      .option('--json', 'print JSON'),
  ).action(async (opts: Common & { json?: boolean }) => {
    const dataDir = resolve(opts.data);
    if (!serverRunning(dataDir))
      throw new AdminError(`no server runs on ${dataDir}; bots are read when \`pinbot serve\` starts`);
    const r = (await callAdmin(dataDir, 'bots.reload')) as {
      bots: Array<{ name?: string; status: string; file: string }>;
    };
    if (opts.json) return void process.stdout.write(JSON.stringify(r) + '\n');
    for (const b of r.bots) process.stdout.write(`${(b.name ?? '?').padEnd(20)} ${b.status.padEnd(10)} ${b.file}\n`);
  });

  common(
    bots
      .command('vars')
      .description("a bot's persistent variables (vars.NAME), and --reset to set them back to its file's vars:")
      .argument('<name>')
      .option('--reset', "set the variables back to the file's vars: (what set: wrote is dropped)")
      .option('--json', 'print JSON'),
  ).action(async (name: string, opts: Common & { reset?: boolean; json?: boolean }) => {
    // a running server answers it through its bots service; without one the CLI runs it on the store
    const r = (await runOnDataDir(
      opts,
      'bots.vars',
      { name, reset: opts.reset === true },
      { extra: { 'bots.vars': botVarsCommand } },
    )) as BotVarsView;
    process.stdout.write(opts.json ? JSON.stringify(r) + '\n' : formatBotVars(r));
  });

  for (const verb of ['pause', 'resume'] as const) {
    common(
      bots
        .command(verb)
        .description(
          verb === 'pause' ? 'pause a bot of the running server (its events wait until resume)' : 'resume a paused bot',
        )
        .argument('<name>')
        .option('--json', 'print JSON'),
    ).action(async (name: string, opts: Common & { json?: boolean }) => {
      const dataDir = resolve(opts.data);
      if (!serverRunning(dataDir))
        throw new AdminError(`no server runs on ${dataDir}; ${verb} works on the bots of a running \`pinbot serve\``);
      const r = (await callAdmin(dataDir, `bots.${verb}`, { name })) as { bot: string; status: string };
      process.stdout.write(opts.json ? JSON.stringify(r) + '\n' : `${r.bot} ${r.status}\n`);
    });
  }
}
