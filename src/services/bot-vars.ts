import { BotMetas } from '../runtime/index.js';
import { suggest } from '../util/suggest.js';
import { AdminError, defineCommand } from '../admin/commands.js';

/** What `pinbot bots vars NAME` shows: the bot's variables now, and its file's `vars:`. */
export interface BotVarsView {
  bot: string;
  vars: Record<string, unknown>;
  /** The file's `vars:` at the bot's last start (absent for state of an older version). */
  file_vars?: Record<string, unknown>;
  /** `--reset`: the variables were set back to the file's (what `set:` wrote is gone). */
  reset?: boolean;
}

/**
 * `bots.vars { name, reset? }`: a bot's persistent variables, from the store its state lives in
 * (the server's: through the admin socket while a server runs, opened by the CLI otherwise).
 * `reset` sets them back to the file's `vars:` as of its last start, in one transaction; a
 * running bot reads them fresh at its next run.
 *
 * @example await adminCommands['bots.vars']!(ctx, { name: 'tip-jar', reset: true })
 */
export const botVarsCommand = defineCommand<{ name: string; reset?: boolean }>()(async (ctx, args) => {
  const name = typeof args.name === 'string' ? args.name : '';
  if (!name) throw new AdminError('a bot name is required: pinbot bots vars NAME');
  const reset = args.reset === true;
  return ctx.store.transaction((tx): BotVarsView => {
    const metas = tx.col(BotMetas);
    const m = metas.get(name);
    if (!m) {
      const like = suggest(
        name,
        [...metas.all()].map((b) => b.id),
      );
      const meant = like ? `; did you mean "${like}"?` : '';
      const why = 'a bot has them once it has started (a bot of a remote server keeps them under DATA/bots/remote)';
      throw new AdminError(
        `no bot named ${name} has variables in this store${meant}: ${why}; see \`pinbot bots list\``,
      );
    }
    if (!reset) return { bot: name, vars: m.vars, ...(m.file_vars ? { file_vars: m.file_vars } : {}) };
    const vars = structuredClone(m.file_vars ?? {});
    metas.put({ ...m, vars });
    return { bot: name, vars, ...(m.file_vars ? { file_vars: m.file_vars } : {}), reset: true };
  });
});

/** The lines of `pinbot bots vars`: each variable, and where it differs from the file. */
export function formatBotVars(v: BotVarsView): string {
  const keys = [...new Set([...Object.keys(v.vars), ...Object.keys(v.file_vars ?? {})])].sort();
  const head = v.reset ? `${v.bot}: variables reset to the file's vars:` : `${v.bot}:`;
  if (!keys.length) return `${head} no variables\n`;
  const lines = keys.map((k) => {
    const now = Object.hasOwn(v.vars, k) ? JSON.stringify(v.vars[k]) : '(unset)';
    const inFile = v.file_vars && Object.hasOwn(v.file_vars, k) ? JSON.stringify(v.file_vars[k]) : undefined;
    let note = '';
    if (v.file_vars && inFile === undefined) note = '  (not in the file: set by a rule)';
    else if (v.file_vars && inFile !== now) note = `  (the file says ${inFile}; set by a rule since)`;
    return `  vars.${k} = ${now}${note}`;
  });
  return `${head}\n${lines.join('\n')}\n`;
}
