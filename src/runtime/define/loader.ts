import { createHash } from 'node:crypto';
import { DEFAULT_MEMORY, type MemoryOptions } from '../contract/memory-subjects.js';
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { botEnvRefusal, interpolateEnv } from '../../config/env-refs.js';
import { normalizePin } from '../../util/pin.js';
import { parseDuration } from '../../util/duration.js';
import {
  ajvProblems,
  locate,
  locateText,
  parseYaml,
  type FileProblem,
  type LocatedYaml,
} from '../../util/yaml-errors.js';
import { checkBot, stepEntry, triggerEntries } from './bot-checks.js';
import { BOT_NAME_PATTERN, botSchema, PIN_PATTERN, RULE_ID_PATTERN } from './bot-schema.js';
import { TEMPLATED_TYPE } from './templatable-schema.js';
import { DURATION_PATTERN } from '../../util/duration.js';
import {
  DEFAULT_LOOP_GUARD,
  type BotSpec,
  type CompiledBot,
  type CompiledRule,
  type CompiledStep,
  type LoopGuardOptions,
} from './bot.js';
import { compileConditions } from './conditions.js';
import type { Registry } from '../contract/registry.js';
import { hintFor } from '../../util/suggest.js';
import type { CheckProblem } from '../contract/types.js';
import { serverProblem } from './server-allow.js';
import { validatorFor as prebuiltOrCompiled } from '../../util/prebuilt-validator.js';

export interface LoadResult {
  bot?: CompiledBot;
  problems: FileProblem[];
  /** Worth fixing, but the bot is valid and runs (e.g. send_money steered by the event without limits). */
  warnings?: FileProblem[];
}

export interface BotLoadOptions {
  registry: Registry;
  env?: NodeJS.ProcessEnv;
  /** Variables the operator lets bot files read anywhere (config `bots.env_allow`). */
  envAllow?: readonly string[];
  /**
   * Base URLs a bot file may name in `server:` (config `bots.allowed_servers`); any other remote
   * server is refused. `embedded` is always allowed.
   */
  allowedServers?: readonly string[];
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
    // generated at build time for the built-in entries (util/prebuilt-validator.ts), else compiled now
    fn = prebuiltOrCompiled('bot', text);
    if (compiled.size >= 16) compiled.clear();
    compiled.set(text, fn);
  }
  validators.set(registry, { fn, version: registry.version });
  return fn;
}

/** What a schema pattern means, in words (the raw regular expression helps no one). Internal. */
const PATTERNS: Record<string, { message: string; hint: string }> = {
  [DURATION_PATTERN]: { message: 'expected a duration', hint: 'like 90s, 15m, 2h, 1d or 1h30m' },
  [BOT_NAME_PATTERN]: {
    message: 'expected a name of lower-case letters, digits, - and _ (at most 64, starting with a letter or digit)',
    hint: 'e.g. name: tip-jar',
  },
  [RULE_ID_PATTERN]: {
    message: 'expected an id of letters, digits, - and _ (at most 64)',
    hint: 'e.g. id: thank-small-tips',
  },
  [PIN_PATTERN]: { message: 'expected a PIN: 6 letters or digits', hint: 'e.g. ABC123' },
  '^(embedded|https?://.+)$': {
    message: 'expected embedded or a base URL',
    hint: 'e.g. server: https://api.example.com',
  },
};

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
    const templated = (e.parentSchema as Record<string, unknown> | undefined)?.[TEMPLATED_TYPE];
    if (e.keyword === 'pattern' && typeof templated === 'string') {
      // a literal where a number (or boolean) goes: neither one nor a template
      const want = templated
        .split(' or ')
        .map((t) => (t === 'integer' ? 'an integer' : t === 'boolean' ? 'true or false' : `a ${t}`))
        .join(' or ');
      Object.assign(p, {
        message: `expected ${want}, not ${JSON.stringify(e.data)}`,
        hint: 'write the value, or a template such as "{{ match.max }}" (its value is checked when the step runs)',
      });
    }
    if (
      e.keyword === 'type' &&
      typeof (e.parentSchema as Record<string, unknown> | undefined)?.[TEMPLATED_TYPE] === 'string'
    ) {
      p.message = p.message.replace(/ or string$/, ' (or a template)');
    }
    if (e.keyword === 'pattern') {
      const known = PATTERNS[(e.params as { pattern: string }).pattern];
      if (known)
        Object.assign(p, {
          message: `${known.message}${typeof e.data === 'string' ? `, not "${e.data}"` : ''}`,
          hint: known.hint,
        });
    }
    if (
      e.keyword === 'type' &&
      typeof e.data === 'number' &&
      String((e.params as { type: string }).type).includes('string')
    ) {
      // YAML reads 123456 (and 012345, losing its 0) as a number: a PIN of digits must be quoted
      const written = /^[^\s,\]}#]+/.exec(line.slice(p.col - 1))?.[0] ?? String(e.data);
      p.hint = `quote it: "${written}" (YAML reads ${written} as a number)`;
    }
    if (line.slice(p.col - 1).startsWith('{{'))
      p.hint = 'quote values that start with Liquid, e.g. reply: "Thanks {{ event.sender.display_name }}"';
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
  return /:\s*\{\{/.test(line)
    ? { ...p, hint: 'quote values that start with Liquid, e.g. reply: "Thanks {{ event.sender.display_name }}"' }
    : p;
}

/** Keeps the more specific problem when the schema and a check both speak of the same place. Internal. */
function merge(schema: FileProblem[], checks: FileProblem[]): FileProblem[] {
  const covered = (p: FileProblem) =>
    checks.some((c) => c.path && (p.path === c.path || p.path.startsWith(`${c.path}.`)));
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
 * Reads a bot file's text: YAML → `${env:VAR}` (see BOT_ENV_RULES, or names in `envAllow`)
 * → schema → checks (a remote `server:` only from `allowedServers`) → a compiled bot. Every
 * problem is reported with file:line:col, what was expected and a hint; a bot comes back only
 * when there are none.
 *
 * @example
 * const { bot, problems } = loadBot('bots/tip-jar.yaml', text, { registry: createRegistry() });
 * problems.forEach((p) => console.error(formatProblem(p)));
 */
export function loadBot(
  file: string,
  text: string,
  { registry, env = process.env, envAllow = [], allowedServers = [] }: BotLoadOptions,
): LoadResult {
  const parsed = parseYaml(file, text);
  if (parsed.problems.length) return { problems: parsed.problems.map((p) => yamlHint(p, text)) };
  const y = parsed.located;
  if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    return {
      problems: [
        {
          file,
          line: 1,
          col: 1,
          path: '',
          message: 'expected a mapping with name, as or key, and rules',
          hint: 'see bots/tip-jar.yaml for an example',
        },
      ],
    };
  }
  const envProblems: CheckProblem[] = [];
  const read: Array<{ name: string; value: string }> = [];
  const data = interpolateEnv(parsed.value, env, {
    onRead: (_path, name, value) => void read.push({ name, value }),
    allowed: (path, name) => !botEnvRefusal(path, name, envAllow),
    onMissing: (path, name, ref) =>
      envProblems.push({
        path,
        find: ref,
        message: `environment variable ${name} is not set`,
        hint: `export ${name}=… before starting, or remove the reference`,
      }),
    onDenied: (path, name, ref) => envProblems.push({ path, find: ref, ...botEnvRefusal(path, name, envAllow)! }),
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
  const server = serverProblem((data as { server?: unknown }).server, allowedServers);
  if (server) checks.push(server);
  const problems = merge(
    schemaOk ? [] : schemaProblems(y, validate.errors ?? [], text),
    located(
      y,
      checks.filter((c) => !c.warning),
    ),
  ).map((p) => unquoteEnv(p, read));
  const warnings = located(
    y,
    checks.filter((c) => c.warning),
  ).map((p) => unquoteEnv(p, read));
  if (problems.length) return { problems, warnings };
  return { bot: compile(file, text, data as BotSpec, registry), problems: [], warnings };
}

/**
 * A problem that names a value read from the environment names its reference instead: a key, or
 * a server URL with a password in it, that is not valid must not be printed by `bots validate`,
 * logged, or shown in the console's Bots page. Internal.
 */
function unquoteEnv(p: FileProblem, read: ReadonlyArray<{ name: string; value: string }>): FileProblem {
  let { message, hint } = p;
  // longest first, so a value inside another is not replaced in part; short values ("1", "true") say nothing
  for (const { name, value } of [...read].sort((a, b) => b.value.length - a.value.length)) {
    if (value.length < 4) continue;
    message = message.split(value).join(`\${env:${name}}`);
    hint = hint?.split(value).join(`\${env:${name}}`);
  }
  return message === p.message && hint === p.hint ? p : { ...p, message, hint };
}

/** Reads and loads a bot file from disk. */
export function loadBotFile(file: string, opts: BotLoadOptions): LoadResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return {
      problems: [{ file, line: 1, col: 1, path: '', message: `cannot read the file: ${(err as Error).message}` }],
    };
  }
  return loadBot(file, text, opts);
}

/**
 * A rule's steps as one list: `choose` branches are flattened after their choose step (each
 * nested step guarded by the branch it belongs to), then the `on_error` steps. Every step keeps
 * its own index — and so its own write-ahead and Idempotency-Key. Internal.
 */
function compileSteps(
  registry: Registry,
  main: unknown[],
  onError: unknown[] | undefined,
  dialog: { onTimeout?: unknown[]; onCancel?: unknown[] } = {},
): CompiledStep[] {
  const out: CompiledStep[] = [];
  const add = (list: unknown[], guard: CompiledStep['guard'], inError: boolean | 'timeout' | 'cancel') => {
    for (const step of list) {
      const e = stepEntry(step)!;
      const index = out.length;
      const sig = createHash('sha256')
        .update(JSON.stringify([e.name, e.args ?? null]))
        .digest('hex')
        .slice(0, 8);
      const base: CompiledStep = {
        index,
        sig,
        action: registry.actions.get(e.name)!,
        args: e.args ?? null,
        continueOnError: (step as { continue_on_error?: boolean }).continue_on_error === true,
        guard,
        onError: inError === true || undefined,
        onTimeout: inError === 'timeout' || undefined,
        onCancel: inError === 'cancel' || undefined,
      };
      if (e.name !== 'choose') {
        out.push(base);
        continue;
      }
      const items = e.args as Array<{ if?: unknown; do?: unknown[]; else?: unknown[] }>;
      out.push({
        ...base,
        branches: items.map((it, k) =>
          it.else ? { label: 'else' } : { label: `branch ${k + 1}`, condition: compileConditions(registry, it.if) },
        ),
      });
      items.forEach((it, k) => add(it.else ?? it.do ?? [], [...(guard ?? []), { step: index, arm: k }], inError));
    }
  };
  add(main, undefined, false);
  // on_timeout and on_cancel before on_error: a step of theirs that fails runs on_error
  if (dialog.onTimeout) add(dialog.onTimeout, undefined, 'timeout');
  if (dialog.onCancel) add(dialog.onCancel, undefined, 'cancel');
  if (onError) add(onError, undefined, true);
  return out;
}

/** `loop_guard:` as written → options in ms (defaults filled in). Internal. */
function loopGuardOf(v: BotSpec['loop_guard']): LoopGuardOptions | false {
  if (v === false) return false;
  return {
    maxReplies: v?.max_replies ?? DEFAULT_LOOP_GUARD.maxReplies,
    replyWithinMs: v?.reply_within ? parseDuration(v.reply_within)! : DEFAULT_LOOP_GUARD.replyWithinMs,
    pauseMs: v?.pause ? parseDuration(v.pause)! : DEFAULT_LOOP_GUARD.pauseMs,
  };
}

/** `memory:` as written → its bounds (defaults filled in) and ttl in ms. Internal. */
function memoryOf(m: BotSpec['memory']): MemoryOptions {
  return {
    ttlMs: m?.ttl !== undefined ? parseDuration(m.ttl) : undefined,
    maxKeys: m?.max_keys ?? DEFAULT_MEMORY.maxKeys,
    maxBytes: m?.max_bytes ?? DEFAULT_MEMORY.maxBytes,
    maxKeysPerSubject: m?.max_keys_per_person ?? DEFAULT_MEMORY.maxKeysPerSubject,
    maxBytesPerSubject: m?.max_bytes_per_person ?? DEFAULT_MEMORY.maxBytesPerSubject,
  };
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
    steps: compileSteps(registry, r.do, r.on_error, { onTimeout: r.on_timeout, onCancel: r.on_cancel }),
    mode: r.mode ?? 'queued',
    cooldownMs:
      r.cooldown === undefined ? 0 : parseDuration(typeof r.cooldown === 'string' ? r.cooldown : r.cooldown.for)!,
    cooldownPer: typeof r.cooldown === 'object' ? (r.cooldown.per ?? 'rule') : 'rule',
    throttle: r.throttle
      ? { maxRuns: r.throttle.max_runs, withinMs: parseDuration(r.throttle.within)!, per: r.throttle.per ?? 'rule' }
      : undefined,
    enabled: r.enabled !== false,
    ...(r.cancel_words ? { cancelWords: r.cancel_words } : {}),
  }));
  // a plugin's action may ask (ctx.ask): its rule follows the dialog modes too
  for (const r of rules) if (r.steps.some((st) => st.action.name === 'ask' || st.action.plugin)) r.asks = true;
  const sources = [
    ...new Set(
      rules
        .filter((r) => r.enabled)
        .flatMap((r) => r.triggers.map((t) => t.def.source).filter((s): s is string => !!s)),
    ),
  ];
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
    loopGuard: loopGuardOf(spec.loop_guard),
    ignoreBots: spec.ignore_bots === true,
    perSender: spec.per_sender?.max_queued !== undefined ? { maxQueued: spec.per_sender.max_queued } : undefined,
    memory: memoryOf(spec.memory),
    rules,
    sources,
  };
}
