import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { formatTrace } from '../../runtime/index.js';
import { readBotTraces } from './traces.js';
import { common, type Common } from './shared.js';

/** `bots trace NAME --scenario RUN [--out FILE]`. Internal. */
async function printTraceScenario(name: string, run: string, opts: Common & { out?: string }): Promise<void> {
  const { traceScenario } = await import('./traces.js');
  const r = await traceScenario(name, run, opts);
  if (!r.out) return void process.stdout.write(r.text);
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(dirname(resolve(r.out)), { recursive: true });
  writeFileSync(r.out, r.text, { flag: 'wx' });
  process.stderr.write(`wrote ${r.out}: run it with pinbot scenario run ${r.out}\n`);
}

/** `pinbot bots trace NAME`. */
export function registerTrace(bots: Command): void {
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
}
