import type { CheckProblem } from '../contract/types.js';

/** The origin (`https://host:port`) of a base URL, or undefined when it is none. Internal. */
function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a bot file may name `server` (after `${env:…}`): `embedded`, or a base URL whose
 * origin (scheme, host and port) is one the operator lists in `config.yaml` (`bots.allowed_servers`).
 * A bot file sends its key to its server at start-up; one shared by someone else must not pick
 * where that goes. The problem it returns points at `server:` and says what to do.
 *
 * @example
 * serverProblem('https://evil.example', ['https://api.example.com']) // { path: ['server'], message: … }
 */
export function serverProblem(server: unknown, allowed: readonly string[]): CheckProblem | undefined {
  if (typeof server !== 'string' || server === 'embedded') return undefined;
  const origin = originOf(server);
  if (!origin) return undefined; // the schema says what a base URL looks like
  if (allowed.some((a) => originOf(a) === origin)) return undefined;
  return {
    path: ['server'],
    message:
      `${origin} is not a server the operator allows: a bot file may name only ` +
      `embedded or a server listed in config.yaml (bots.allowed_servers), since its key ` +
      `is sent there`,
    hint:
      `if ${origin} is yours, add it to config.yaml under bots: { allowed_servers: ` +
      `["${origin}"] }; or run the bot with pinbot bots run --server URL`,
  };
}
