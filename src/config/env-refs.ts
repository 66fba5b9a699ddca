import { parse as parseScalar } from 'yaml';

type Path = Array<string | number>;

/** A variable name as `${env:NAME}` spells it. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;
const WHOLE_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Where a bot file may read environment variables, and which: only where a secret belongs, and
 * only the variables named for it. `key` reads `PINBOT_KEY_…` (the API key) and `server` reads
 * `PINBOT_SERVER…` (a base URL may carry credentials): a bot file shared by someone else cannot
 * name `DB_PASSWORD` and have it sent as `X-API-Key`. Names an operator lists in `config.yaml`
 * (`bots.env_allow`) are allowed anywhere. Templates never see the environment: a reference in
 * `reply:` would put it in a chat.
 */
export const BOT_ENV_RULES: ReadonlyArray<{ path: string; prefix: string }> = [
  { path: 'key', prefix: 'PINBOT_KEY_' },
  { path: 'server', prefix: 'PINBOT_SERVER' },
];

/** The paths where a bot file may read (some) environment variables. */
export const BOT_ENV_PATHS: readonly string[] = BOT_ENV_RULES.map((r) => r.path);

/**
 * Why a bot file may not read `${env:name}` at `path`, or undefined when it may.
 *
 * @example
 * botEnvRefusal(['key'], 'DB_PASSWORD', []) // { message: '${env:DB_PASSWORD} is not allowed in key: …', hint: … }
 */
export function botEnvRefusal(
  path: ReadonlyArray<string | number>,
  name: string,
  envAllow: readonly string[],
): { message: string; hint: string } | undefined {
  if (envAllow.includes(name)) return undefined;
  const rule = BOT_ENV_RULES.find((r) => pathAllowed(path, [r.path]));
  if (rule && name.startsWith(rule.prefix)) return undefined;
  const allow = `list it in config.yaml under bots: { env_allow: [${name}] }`;
  if (rule) {
    return {
      message:
        `\${env:${name}} is not allowed in ${rule.path}: bot files read only variables ` +
        `named ${rule.prefix}… there, so a shared file cannot send another secret to a ` +
        `server`,
      hint:
        `name the variable ${rule.prefix}… (e.g. ` +
        `\${env:${rule.path === 'key' ? 'PINBOT_KEY_TIP_JAR' : 'PINBOT_SERVER_URL'}}); ` +
        `if ${name} is meant for bots, ${allow}`,
    };
  }
  return {
    message:
      `\${env:${name}} is not allowed here: bot files read environment variables only ` +
      `in key (PINBOT_KEY_…) and server (PINBOT_SERVER…)`,
    hint: `put the secret in key: or server:; if ${name} is no secret, ${allow}`,
  };
}

/** Whether `path` (e.g. `['rules', 0, 'do']`) matches one of `patterns`. */
export function pathAllowed(path: ReadonlyArray<string | number>, patterns: readonly string[]): boolean {
  const matches = (segs: string[], p: string[]): boolean => {
    if (!p.length) return !segs.length;
    const [head, ...rest] = p;
    if (head === '**') return segs.length > 0 && (matches(segs.slice(1), rest) || matches(segs.slice(1), p));
    return segs.length > 0 && (head === '*' || head === segs[0]) && matches(segs.slice(1), rest);
  };
  const segs = path.map(String);
  return patterns.some((p) => matches(segs, p.split('.')));
}

/** What a caller of `interpolateEnv` decides and hears. */
export interface EnvOptions {
  /** May `${env:name}` be read at `path`? Default: everywhere (config.yaml is the operator's). */
  allowed?: (path: Path, name: string) => boolean;
  /** A variable that is not set. */
  onMissing: (path: Path, name: string, ref: string) => void;
  /** A reference where `allowed` said no (left as written). */
  onDenied?: (path: Path, name: string, ref: string) => void;
  /** A variable that was read (its value put in place of its reference). */
  onRead?: (path: Path, name: string, value: string) => void;
}

/**
 * Replaces `${env:VAR}` in every string of `value`. A string that is exactly one reference takes
 * the variable's YAML scalar type (`"${env:PORT}"` with PORT=8080 becomes the number 8080).
 * Unset and refused variables are reported by path; their reference is left as written.
 *
 * @example
 * interpolateEnv(spec, process.env, {
 *   allowed: (path, name) => !botEnvRefusal(path, name, allowList),
 *   onMissing: (path, name) => problems.push(…), onDenied: (path, name) => problems.push(…),
 * });
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, opts: EnvOptions, path: Path = []): unknown {
  if (typeof value === 'string') {
    const read = (ref: string, name: string): string | undefined => {
      if (opts.allowed && !opts.allowed(path, name)) {
        opts.onDenied?.(path, name, ref);
        return undefined;
      }
      const v = env[name];
      if (v === undefined) opts.onMissing(path, name, ref);
      else opts.onRead?.(path, name, v);
      return v;
    };
    const whole = WHOLE_REF.exec(value);
    if (whole) {
      const v = read(value, whole[1]!);
      if (v === undefined) return value;
      try {
        const typed = parseScalar(v);
        return typeof typed === 'object' && typed !== null ? v : typed;
      } catch {
        return v;
      }
    }
    return value.replace(ENV_REF, (ref, name: string) => read(ref, name) ?? ref);
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, opts, [...path, i]));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, opts, [...path, k]);
    return out;
  }
  return value;
}
