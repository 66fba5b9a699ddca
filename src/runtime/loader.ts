import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { BOT_ENV_PATHS, interpolateEnv, pathAllowed } from '../config/env-refs.js';
import { normalizePin } from '../util/pin.js';
import { parseDuration } from '../util/duration.js';
import { ajvProblems, locate, locateText, parseYaml, type FileProblem, type LocatedYaml } from '../util/yaml-errors.js';
import { checkBot, stepEntry, triggerEntries } from './bot-checks.js';
import { botSchema } from './bot-schema.js';
import type { BotSpec, CompiledBot, CompiledRule } from './bot.js';
import { compileConditions } from './conditions/compile.js';
import type { Registry } from './registry.js';
import { hintFor } from './suggest.js';
import type { CheckProblem } from './types.js';

export interface LoadResult {
  bot?: CompiledBot;
  problems: FileProblem[];
}

export interface LoadOptions {
  registry: Registry;
  env?: NodeJS.ProcessEnv;
  /** Variables the operator lets bot files read anywhere (config `bots.env_allow`). */
  envAllow?: readonly string[];
}

const validators = new WeakMap<Registry, { fn: ValidateFunction; version: number }>();

/** Compiled validators by schema text: registries with the same entries share one. Internal. */
const compiled = new Map<string, ValidateFunction>();

/**
 * The schema validator of a registry, rebuilt when its version moves. Compiling costs tens of
 * milliseconds, so registries with the same entries (every test world, every scenario) share
 * the compiled function. Internal.
 */
function validatorFor(registry: Registry): ValidateFunction {
  const cached = validators.get(registry);
  if (cached && cached.version === registry.version) return cached.fn;
  const schema = botSchema(registry);
  const text = JSON.stringify(schema);
  let fn = compiled.get(text);
  if (!fn) {
    fn = new Ajv({ allErrors: true, strict: false, verbose: true }).compile(schema);
    if (compiled.size >= 16) compiled.clear();
    compiled.set(text, fn);
  }
  validators.set(registry, { fn, version: registry.version });
  return fn;
}

/** Schema errors as problems, with did-you-mean hints and without if/then noise. Internal. */
function schemaProblems(y: LocatedYaml, errors: ErrorObject[], text: string): FileProblem[] {
  const out: FileProblem[] = [];
  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'anyOf') continue;
    const p = ajvProblems(y, [e])[0];
    if (!p) continue;
    if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys(((e.parentSchema as { properties?: object } | undefined)?.properties ?? {}) as object);
      if (known.length) p.hint = hintFor(extra, known, 'keys');
    }
    if (e.keyword === 'enum' && typeof e.data === 'string') {
      p.hint = hintFor(e.data, (e.params as { allowedValues: string[] }).allowedValues.map(String), 'values');
    }
    const line = text.split('\n')[p.line - 1] ?? '';
    if (line.slice(p.col - 1).startsWith('{{')) p.hint = 'quote values that start with Liquid, e.g. reply: "Thanks {{ event.sender.display_name }}"';
    out.push(p);
  }
  return out;
}

/** Check problems (paths from the root) as file problems. Internal. */
function located(y: LocatedYaml, problems: CheckProblem[]): FileProblem[] {
  return problems.map((p) => ({
    file: y.file,
    ...(p.find ? locateText(y, p.path, p.find) : locate(y, p.path, p.onKey)),
    path: p.path.map(String).join('.'),
    message: p.message,
    hint: p.hint,
  }));
}

/** Adds the usual fix to YAML errors on lines holding Liquid. Internal. */
function yamlHint(p: FileProblem, text: string): FileProblem {
  const line = text.split('\n')[p.line - 1] ?? '';
  return /:\s*\{\{/.test(line) ? { ...p, hint: 'quote values that start with Liquid, e.g. reply: "Thanks {{ event.sender.display_name }}"' } : p;
}

/** Keeps the more specific problem when the schema and a check both speak of the same place. Internal. */
function merge(schema: FileProblem[], checks: FileProblem[]): FileProblem[] {
  const covered = (p: FileProblem) => checks.some((c) => c.path && (p.path === c.path || p.path.startsWith(`${c.path}.`)));
  const all = [...schema.filter((p) => !covered(p)), ...checks];
  const seen = new Set<string>();
  return all
    .filter((p) => {
      const id = `${p.line}:${p.col}:${p.message}`;
      return seen.has(id) ? false : (seen.add(id), true);
    })
    .sort((a, b) => a.line - b.line || a.col - b.col);
}

/**
 * Reads a bot file's text: YAML → `${env:VAR}` (only at BOT_ENV_PATHS, or names in `envAllow`)
 * → schema → checks → a compiled bot. Every
 * problem is reported with file:line:col, what was expected and a hint; a bot comes back only
 * when there are none.
 *
 * @example
 * const { bot, problems } = loadBot('bots/tip-jar.yaml', text, { registry: createRegistry() });
 * problems.forEach((p) => console.error(formatProblem(p)));
 */
export function loadBot(file: string, text: string, { registry, env = process.env, envAllow = [] }: LoadOptions): LoadResult {
  const parsed = parseYaml(file, text);
  if (parsed.problems.length) return { problems: parsed.problems.map((p) => yamlHint(p, text)) };
  const y = parsed.located;
  if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    return { problems: [{ file, line: 1, col: 1, path: '', message: 'expected a mapping with name, as or key, and rules', hint: 'see bots/tip-jar.yaml for an example' }] };
  }
  const envProblems: CheckProblem[] = [];
  const data = interpolateEnv(parsed.value, env, {
    allowed: (path, name) => pathAllowed(path, BOT_ENV_PATHS) || envAllow.includes(name),
    onMissing: (path, name, ref) =>
      envProblems.push({ path, find: ref, message: `environment variable ${name} is not set`, hint: `export ${name}=… before starting, or remove the reference` }),
    onDenied: (path, name, ref) =>
      envProblems.push({
        path,
        find: ref,
        message: `\${env:${name}} is not allowed here: bot files read environment variables only in key, server and plugin settings`,
        hint: `put the secret in key: or server:; if ${name} is no secret, list it in config.yaml under bots: { env_allow: [${name}] }`,
      }),
  });
  if (envProblems.length) return { problems: located(y, envProblems) };
  const validate = validatorFor(registry);
  const schemaOk = validate(data);
  let checks: CheckProblem[];
  try {
    checks = checkBot(data, registry);
  } catch {
    checks = []; // the schema problems say what is wrong with the shape
  }
  const problems = merge(schemaOk ? [] : schemaProblems(y, validate.errors ?? [], text), located(y, checks));
  if (problems.length) return { problems };
  return { bot: compile(file, text, data as BotSpec, registry), problems: [] };
}

/** Reads and loads a bot file from disk. */
export function loadBotFile(file: string, opts: LoadOptions): LoadResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { problems: [{ file, line: 1, col: 1, path: '', message: `cannot read the file: ${(err as Error).message}` }] };
  }
  return loadBot(file, text, opts);
}

const cents = (n: number | undefined) => (n === undefined ? undefined : Math.round(n * 100));

/** Turns a valid spec into what the runtime runs. Internal. */
function compile(file: string, text: string, spec: BotSpec, registry: Registry): CompiledBot {
  const rules: CompiledRule[] = spec.rules.map((r, index) => ({
    id: r.id ?? `rule-${index + 1}`,
    index,
    description: r.description,
    triggers: triggerEntries(r.on, []).map((t) => ({ def: registry.triggers.get(t.name)!, options: t.options })),
    condition: r.if === undefined ? undefined : compileConditions(registry, r.if),
    steps: r.do.map((step, i) => {
      const e = stepEntry(step)!;
      const sig = createHash('sha256').update(JSON.stringify([e.name, e.args ?? null])).digest('hex').slice(0, 8);
      return { index: i, sig, action: registry.actions.get(e.name)!, args: e.args ?? null, continueOnError: (step as { continue_on_error?: boolean }).continue_on_error === true };
    }),
    mode: r.mode ?? 'queued',
    cooldownMs: r.cooldown ? parseDuration(r.cooldown)! : 0,
    enabled: r.enabled !== false,
  }));
  const sources = [...new Set(rules.filter((r) => r.enabled).flatMap((r) => r.triggers.map((t) => t.def.source).filter((s): s is string => !!s)))];
  return {
    name: spec.name,
    file,
    version: createHash('sha256').update(text).digest('hex').slice(0, 12),
    spec,
    identity: spec.key !== undefined ? { key: spec.key } : { as: spec.as!, createUser: spec.create_user === true },
    server: spec.server ?? 'embedded',
    pollMs: parseDuration(spec.poll ?? '5s')!,
    enabled: spec.enabled !== false,
    dryRun: spec.dry_run === true,
    limits: {
      maxPerTransfer: cents(spec.limits?.max_per_transfer),
      maxPerDay: cents(spec.limits?.max_per_day),
      sendTo: spec.limits?.send_to ? new Set(spec.limits.send_to.map(normalizePin)) : undefined,
    },
    traceLimit: spec.traces ?? 100,
    rules,
    sources,
  };
}
