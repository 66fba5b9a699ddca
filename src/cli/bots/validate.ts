import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { createLogger } from '../../log.js';
import { buildRegistry } from '../../services/registry.js';
import { formatProblem } from '../../util/yaml-errors.js';
import { botFiles, common, type Common, validateFiles } from './shared.js';

/** `pinbot bots validate [files...]`. */
export function registerValidate(bots: Command): void {
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
}
