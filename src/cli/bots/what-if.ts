import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AdminError } from '../../admin/errors.js';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import { whatIfFile, type WhatIfReport } from '../../runtime/index.js';
import { buildRegistry } from '../../services/registry.js';
import { formatProblem } from '../../util/yaml-errors.js';
import { botTraces } from './traces.js';

/** The report as a person reads it: each changed event with its changes, then the summary. Internal. */
export function formatWhatIf(r: WhatIfReport, all = false): string {
  const lines: string[] = [];
  for (const e of r.events) {
    if (e.status === 'same' && !all) continue;
    lines.push(`${e.status === 'changed' ? '≠' : e.status === 'same' ? '=' : '?'} ${e.at}  ${e.summary}  [${e.event}]`);
    for (const c of e.changes) lines.push(`    ${c}`);
  }
  const unknown = r.events.filter((e) => e.status === 'not_replayable').length;
  lines.push(`${r.summary}${unknown ? ` (${unknown} could not be replayed)` : ''}`);
  return lines.join('\n');
}

/**
 * `pinbot bots what-if FILE [--bot NAME] [--last N] [--json] [--all]`: the edited file against
 * the running bot's recorded decisions, acting on nothing; exit 1 when a decision changes.
 * Internal.
 */
export function registerWhatIf(bots: Command): void {
  bots
    .command('what-if')
    .description(
      "replay the bot's recorded decisions against an edited file, acting on nothing: " +
        'exit 0 when none changes, 1 when one does',
    )
    .argument('<file>', 'the edited bot file')
    .option('--bot <name>', "whose traces to replay (default: the file's name:)")
    .option('--last <n>', 'how many recorded rule runs (traces) to replay', '100')
    .option('--all', 'also list the events whose decision stays the same')
    .option('--json', 'print JSON')
    .option('--data <dir>', 'data directory', './data')
    .option('--config <file>', 'config file', './config.yaml')
    .action(async (file: string, opts: WhatIfOptions) => {
      try {
        await run(file, opts);
      } catch (err) {
        // 1 means "a decision changes": a replay that could not happen is 2, so a CI gate never reads it as a change
        process.stderr.write(`pinbot: ${(err as Error).message}\n`);
        process.exitCode = EXIT_CANNOT;
      }
    });
}

interface WhatIfOptions {
  bot?: string;
  last: string;
  all?: boolean;
  json?: boolean;
  data: string;
  config: string;
}

const EXIT_CANNOT = 2;

/** The what-if itself. Internal. */
async function run(file: string, opts: WhatIfOptions): Promise<void> {
  const last = Number(opts.last);
  if (!Number.isInteger(last) || last < 1 || last > 10_000)
    throw new AdminError(`--last: expected a whole number from 1 to 10000, found ${JSON.stringify(opts.last)}`);
  const config = loadConfig(opts.config);
  const registry = await buildRegistry({ config, log: createLogger({ level: 'silent' }) });
  const report = await whatIfFile(resolve(file), (name) => botTraces(name, opts, last), {
    registry,
    envAllow: config.bots.env_allow,
    allowedServers: config.bots.allowed_servers,
    bot: opts.bot,
  });
  if ('problems' in report) {
    const { problems } = report;
    for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
    throw new AdminError(
      `${file} is not a valid bot (${problems.length} ` +
        `problem${problems.length === 1 ? '' : 's'} above): fix it first — a what-if ` +
        `replays a bot that can run`,
    );
  }
  process.stdout.write(opts.json ? `${JSON.stringify(report)}\n` : `${formatWhatIf(report, opts.all)}\n`);
  if (report.changed > 0) process.exitCode = 1;
}
