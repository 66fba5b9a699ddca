import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { outsideRoot, OUTSIDE_HINT, projectRoot } from './project-root.js';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseDocument, stringify } from 'yaml';
import { configSchema } from '../config/schema.js';
import { loadBot } from '../runtime/index.js';
import { hintFor } from '../util/suggest.js';
import { ajvProblems, locate, parseYaml, type FileProblem, type LocatedYaml } from '../util/yaml-errors.js';
import { checkSteps, prefixErrors, validateTopLevel, type Checker } from './check-steps.js';
import { overrideVars, userRefs } from './bot-vars.js';
import { registryFor } from './plugins.js';
import type { StepRegistry } from './step-registry.js';
import type { StepNode } from './types.js';

/** A user of a scenario as declared. */
export interface UserDecl {
  balance?: number;
  subscribed_days?: number;
  contacts?: string[];
}

/** A scenario checked and ready to run. */
export interface LoadedScenario {
  file: string;
  name: string;
  description?: string;
  tags: string[];
  seed: number;
  config: Record<string, unknown>;
  /** Where the virtual clock starts (ms). */
  start: number;
  /** Declared users, and the users bots act as (created with them). */
  users: Record<string, UserDecl>;
  /**
   * Bot YAML texts, each acting as a user of the scenario; `name`, and where the bot is written
   * (`source`: the bot file, or the scenario file with `at` its place there) for coverage.
   */
  bots: Array<{ text: string; label: string; name?: string; source?: string; at?: Array<string | number> }>;
  /** Plugin files (absolute). */
  plugins: string[];
  vars: Record<string, unknown>;
  steps: StepNode[];
}

export interface ScenarioLoadOptions {
  steps: StepRegistry;
  /** Let the scenario read files outside its project root (`--allow-outside-root`; see projectRoot). */
  allowOutsideRoot?: boolean;
  /** Remote mode: the users that have keys; embedded-only features are problems. */
  remote?: { users: string[] };
}

export const DEFAULT_START = '2026-01-01T09:00:00Z';

let configValidator: ValidateFunction | undefined;
/** A scenario's `config:` validator, compiled at first use: not at every `serve` start. */
function validateConfig(): ValidateFunction {
  configValidator ??= new Ajv({ allErrors: true, useDefaults: false, strict: false, verbose: true }).compile(
    configSchema,
  );
  return configValidator;
}

/** A seed from the file name: the same scenario gets the same seed on every machine. */
function seedOf(file: string): number {
  return createHash('sha256').update(basename(file)).digest().readUInt32BE(0);
}

/**
 * Reads and checks one scenario file: YAML, keys, users, bots, plugins, config, every step
 * (and the fragments it uses). Problems carry `file:line:col`, what was expected and a hint;
 * a file with problems gives no scenario.
 *
 * @example const { scenario, problems } = await loadScenario('scenarios/tips.yaml', { steps: builtinSteps() });
 */
export async function loadScenario(
  file: string,
  o: ScenarioLoadOptions,
): Promise<{ scenario?: LoadedScenario; problems: FileProblem[] }> {
  const read = readScenario(file, o);
  if ('problems' in read) return read;
  const { y, v } = read;
  const problems: FileProblem[] = [];
  const at: At = (path, message, hint, onKey = false) => {
    const pos = locate(y, path, onKey);
    problems.push({ file, line: pos.line, col: pos.col, path: path.map(String).join('.'), message, hint });
  };
  if (v.params !== undefined)
    at(
      ['params'],
      'params belong to fragments (files used with use:), not to scenarios',
      'remove params, or move the file under a fragments/ folder',
      true,
    );
  const dir = dirname(resolve(file));
  // the files a scenario may read: inside its project, unless the caller trusts it
  const root = projectRoot(file);
  const refused = (abs: string) => (o.allowOutsideRoot ? undefined : outsideRoot(abs, root));
  const config = (v.config ?? {}) as Record<string, unknown>;
  const configValid = validateConfig();
  if (!configValid(structuredClone(config)))
    problems.push(...ajvProblems(y, prefixErrors(configValid.errors, ['config'])));
  const start = v.clock?.start === undefined ? Date.parse(DEFAULT_START) : Date.parse(String(v.clock.start));
  if (!Number.isFinite(start))
    at(
      ['clock', 'start'],
      `expected a time in ISO 8601 like 2026-03-01T09:00:00Z, found ${JSON.stringify(v.clock.start)}`,
    );
  const users = usersOf(v, at);
  const { plugins, registry } = await pluginsOf(v, dir, config, refused, at);
  const bots = registry ? loadBots(v.bots ?? [], y, dir, users, registry, problems, refused) : [];

  if (o.remote) remoteProblems(v, users, bots.length > 0, o.remote.users, at);
  const ch: Checker = { registry: o.steps, problems, fragments: new Map(), refused };
  const steps = checkSteps(ch, y, v.steps, ['steps'], {
    users: new Set(Object.keys(users)),
    known: new Set(Object.keys(v.vars ?? {})),
    literal: {},
    loopDepth: 0,
    stack: [resolve(file)],
    remote: !!o.remote,
  });
  if (problems.length) return { problems: sortProblems(problems) };
  const scenario: LoadedScenario = {
    file,
    name: v.name ?? basename(file, extname(file)),
    description: v.description,
    tags: v.tags ?? [],
    seed: v.seed ?? seedOf(file),
    config,
    start,
    users,
    bots,
    plugins,
    vars: v.vars ?? {},
    steps,
  };
  return { problems: [], scenario };
}

/** Notes a problem at a path of the file. Internal. */
type At = (path: Array<string | number>, message: string, hint?: string, onKey?: boolean) => void;

/** One problem at the top of a file. Internal. */
const atTop = (file: string, message: string, hint?: string): { problems: FileProblem[] } => ({
  problems: [{ file, line: 1, col: 1, path: '', message, ...(hint ? { hint } : {}) }],
});

/**
 * The file read, parsed and its top-level keys checked — or its problems (outside the project,
 * unreadable, not YAML, not a mapping, an unknown key). Internal.
 */
function readScenario(
  file: string,
  o: ScenarioLoadOptions,
): { problems: FileProblem[] } | { y: LocatedYaml; v: Record<string, any> } {
  // the file itself too: a link in the project to a file outside it is not read (as use: is not)
  const escapes = o.allowOutsideRoot ? undefined : outsideRoot(resolve(file), projectRoot(file));
  if (escapes) return atTop(file, `the scenario file is not read: ${escapes}`, OUTSIDE_HINT);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return atTop(file, `cannot read the file: ${(err as Error).message}`);
  }
  const parsed = parseYaml(file, text);
  if (parsed.problems.length) return { problems: parsed.problems };
  const y = parsed.located;
  const v = parsed.value as Record<string, any>;
  if (!v || typeof v !== 'object' || Array.isArray(v))
    return atTop(file, 'expected a scenario: a mapping with name, users and steps', 'see scenarios/ for examples');
  const top = validateTopLevel();
  if (!top(v)) {
    const keys = Object.keys((top.schema as { properties: object }).properties);
    return {
      problems: ajvProblems(y, top.errors).map((p) => {
        const key = p.path.split('.').length === 1 ? /^unknown key "(.+)"$/.exec(p.message)?.[1] : undefined;
        return key ? { ...p, hint: hintFor(key, keys, 'top-level keys') } : p;
      }),
    };
  }
  return { y, v };
}

/** The declared users (no prototype: `constructor` is a user), their contacts checked. Internal. */
function usersOf(v: Record<string, any>, at: At): Record<string, UserDecl> {
  const users = Object.create(null) as Record<string, UserDecl>;
  for (const [name, spec] of Object.entries((v.users ?? {}) as Record<string, UserDecl | null>))
    users[name] = spec ?? {};
  for (const [name, spec] of Object.entries(users)) {
    (spec.contacts ?? []).forEach((c, i) => {
      if (!(c in users))
        at(['users', name, 'contacts', i], `unknown user "${c}"`, hintFor(c, Object.keys(users), 'users'));
    });
  }
  return users;
}

/** The plugin files (absolute) and their registry — none when one is refused or fails. Internal. */
async function pluginsOf(
  v: Record<string, any>,
  dir: string,
  config: Record<string, unknown>,
  refused: (abs: string) => string | undefined,
  at: At,
): Promise<{ plugins: string[]; registry?: Awaited<ReturnType<typeof registryFor>> }> {
  let outside = false;
  const plugins = ((v.plugins ?? []) as string[]).map((p, i) => {
    const abs = resolve(dir, p);
    const why = refused(abs);
    if (why) {
      outside = true;
      at(['plugins', i], `plugin file ${p} is not read: ${why}`, OUTSIDE_HINT);
    } else if (!existsSync(abs))
      at(['plugins', i], `no plugin file ${p} (looked at ${abs})`, 'plugin paths are relative to the scenario file');
    return abs;
  });
  try {
    // a refused plugin is never imported (importing runs its code)
    return { plugins, registry: outside ? undefined : await registryFor(plugins, config) };
  } catch (err) {
    at(['plugins'], (err as Error).message, undefined, true);
    return { plugins };
  }
}

function sortProblems(ps: FileProblem[]): FileProblem[] {
  return [...ps].sort((a, b) => (a.file === b.file ? a.line - b.line || a.col - b.col : a.file < b.file ? -1 : 1));
}

/** Reads each bot (file, `{ file, as }`, or inline), checks it, and adds the users bots act as. Internal. */
function loadBots(
  entries: unknown[],
  y: LocatedYaml,
  dir: string,
  users: Record<string, UserDecl>,
  registry: Awaited<ReturnType<typeof registryFor>>,
  problems: FileProblem[],
  refused: (abs: string) => string | undefined,
): LoadedScenario['bots'] {
  const out: LoadedScenario['bots'] = [];
  entries.forEach((entry, i) => {
    const here = locate(y, ['bots', i]);
    const problemHere = (message: string, hint?: string) =>
      problems.push({ file: y.file, ...here, path: `bots.${i}`, message, hint });
    let text: string;
    let label: string;
    let botFile: string;
    if (
      typeof entry === 'string' ||
      (entry &&
        typeof entry === 'object' &&
        'file' in entry &&
        Object.keys(entry).every((k) => k === 'file' || k === 'as' || k === 'vars'))
    ) {
      const ref =
        typeof entry === 'string'
          ? { file: entry }
          : (entry as { file: string; as?: string; vars?: Record<string, unknown> });
      botFile = resolve(dir, ref.file);
      label = ref.file;
      const why = refused(botFile);
      if (why) return problemHere(`bot file ${ref.file} is not read: ${why}`, OUTSIDE_HINT);
      try {
        text = readFileSync(botFile, 'utf8');
      } catch {
        return problemHere(
          `no bot file ${ref.file} (looked at ${botFile})`,
          'bot paths are relative to the scenario file',
        );
      }
      if (ref.as !== undefined || ref.vars !== undefined) {
        const doc = parseDocument(text, { logLevel: 'error' });
        if (doc.errors.length === 0) {
          if (ref.as !== undefined) {
            doc.set('as', ref.as);
            doc.delete('create_user');
          }
          if (ref.vars !== undefined) overrideVars(doc, ref.vars);
          text = doc.toString();
        }
      }
    } else {
      text = stringify(entry);
      label = `bots[${i}] ${(entry as { name?: string })?.name ?? ''}`.trim();
      botFile = `${y.file} bots[${i}]`;
    }
    const r = loadBot(botFile, text, { registry: registry! });
    if (r.problems.length) {
      if (typeof entry === 'string' || 'file' in (entry as object)) problems.push(...r.problems);
      else
        for (const p of r.problems)
          problems.push({
            file: y.file,
            ...locate(y, [
              'bots',
              i,
              ...p.path
                .split('.')
                .filter(Boolean)
                .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
            ]),
            path: `bots.${i}.${p.path}`,
            message: p.message,
            hint: p.hint,
          });
      return;
    }
    for (const ref of userRefs(r.bot?.spec.vars, ['vars'])) {
      if (!(ref.user in users))
        problemHere(
          `${label}: ${ref.path.join('.')} names user "${ref.user}", who is not a user of this scenario`,
          hintFor(ref.user, Object.keys(users), 'users'),
        );
    }
    const as = r.bot?.identity && 'as' in r.bot.identity ? String((r.bot.identity as { as: string }).as) : undefined;
    if (as === undefined)
      return problemHere(
        `bot ${r.bot?.name} has no as: — in a scenario a bot acts as one of its users`,
        'add as: NAME (a user of the scenario), or { file, as } for a bot file',
      );
    users[as] ??= {};
    const inline = !(typeof entry === 'string' || 'file' in (entry as object));
    out.push({ text, label, name: r.bot!.name, source: inline ? y.file : botFile, at: inline ? ['bots', i] : [] });
  });
  return out;
}

/** What a remote server cannot do: set users up, run bots, move its clock. Internal. */
function remoteProblems(
  v: Record<string, any>,
  users: Record<string, UserDecl>,
  hasBots: boolean,
  keyed: string[],
  at: (path: Array<string | number>, message: string, hint?: string, onKey?: boolean) => void,
): void {
  for (const [name, spec] of Object.entries(users)) {
    if (!keyed.includes(name))
      at(
        v.users?.[name] !== undefined ? ['users', name] : ['bots'],
        `no API key for user "${name}" in the keys file`,
        `add "${name}: pinbot_…" to the file given with --keys`,
        true,
      );
    for (const k of ['balance', 'subscribed_days', 'contacts'] as const)
      if (spec[k] !== undefined)
        at(
          ['users', name, k],
          `users.${name}.${k} needs the embedded server (a remote server's users are set up by its operator)`,
          'remove it, or run without --server',
          true,
        );
  }
  if (hasBots)
    at(
      ['bots'],
      'bots in a scenario need the embedded server (run them on the remote server with `pinbot bots run --server`)',
      'remove bots:, or run without --server',
      true,
    );
  if (v.config !== undefined)
    at(['config'], 'config overrides need the embedded server', 'remove config:, or run without --server', true);
  if (v.clock !== undefined)
    at(
      ['clock'],
      'clock control needs the embedded server (a remote server runs on real time)',
      'remove clock:, or run without --server',
      true,
    );
}
