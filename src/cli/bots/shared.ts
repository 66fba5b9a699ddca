import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DataOptions as Common } from '../output.js';
import { AdminError } from '../../admin/errors.js';
import { socketPath } from '../../admin/socket.js';
import { loadConfig } from '../../config/load.js';
import { loadBotFile, type Registry } from '../../runtime/index.js';
import { lockHolder } from '../../store/file/lock.js';
import type { FileProblem } from '../../util/yaml-errors.js';

/** The options every `pinbot bots …` command takes (--data, --config). Internal. */
export { common, type DataOptions as Common } from '../output.js';

/** The bot files named, or every *.yaml of the configured bots folder. Internal. */
export function botFiles(files: string[], opts: Common): string[] {
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

/** Is a server running on the data directory (reachable through its admin socket)? Internal. */
export function serverRunning(dataDir: string): boolean {
  return lockHolder(dataDir) !== undefined && existsSync(socketPath(dataDir));
}
