import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type AdminCommand, AdminError, type CommandTable, defineCommand } from '../admin/commands.js';
import { iso, systemClock, type Clock } from '../clock/clock.js';
import type { CommittedWrite } from '../store/core/commit-signal.js';
import type { ReadView } from '../store/core/types.js';
import { usersTouched } from '../domain/users-touched.js';
import type { ServerContext, ServerService } from '../services/types.js';
import { parseDuration } from '../util/duration.js';
import { ConsoleAccess } from './access.js';
import { ActAs } from './act-as.js';
import { consoleApp, type ConsoleState } from './app.js';
import { LiveFeed } from './live.js';
import { MetricHistory } from './metric-history.js';
import type { ScenarioPort } from './scenario-port.js';
import { cookieOf, COOKIE, hostOf, isLoopback } from './security.js';
import { DATA_DIR } from '../util/data-dir.js';

/** The console's operator command: `console.link` (`pinbot console`), a one-time sign-in link. */
export interface ConsoleCommands {
  'console.link': AdminCommand<Record<never, never>, { url: string; expires_at: string }>;
}

/** Jobs kept for the clock page. */
const MAX_JOBS = 200;

export interface ConsoleServiceOptions {
  /** The clock sign-in links expire on (default: real time, also on a virtual-clock server). */
  linkClock?: Clock;
  /** The clock that paces live updates (at most one a second per page; default: real time). */
  liveClock?: Clock;
  /** Where recorded scenarios are saved (default: ./scenarios). */
  scenariosDir?: string;
  /** Runs the project's scenarios from the Scenarios page (`pinbot serve` gives one). */
  scenarios?: ScenarioPort;
}

/**
 * A host name of this run only: `c-` and 26 random base-32 characters under `.localhost` (one DNS
 * label, lower case, as browsers compare host names). Internal.
 */
function runHostName(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return `c-${[...randomBytes(26)].map((b) => alphabet[b & 31]).join('')}.localhost`;
}

/** Whether the console is served, and if not why not. Internal. */
function decide(ctx: ServerContext): { on: true } | { on: false; why: string } {
  const enabled = ctx.env.config.console.enabled;
  const host = new URL(ctx.url).hostname;
  if (enabled === false) return { on: false, why: 'console.enabled is false in config.yaml' };
  if (enabled === true || isLoopback(host)) return { on: true };
  return {
    on: false,
    why:
      `the server listens on ${host}, not on a loopback address; set console.enabled: ` +
      `true in config.yaml to serve the console there (docs/console.md)`,
  };
}

/**
 * The web console at `/console` (docs/console.md): bots live with their runs, acting as any
 * user, the virtual clock, recording scenarios, plugins. On by default only on a loopback
 * address (`console.enabled` decides elsewhere). Adds the admin command `console.link`
 * (`pinbot console`): a one-time sign-in link. Pages read the server through its admin commands
 * and act as users through `/api/v1`, like any client; live updates come from the store's
 * commit feed, bots' traces and jobs as server-sent events.
 *
 * @example startServer({ dataDir, services: [...defaultServices(), consoleService()] })
 */
export function consoleService(options: ConsoleServiceOptions = {}): ServerService {
  let access: ConsoleAccess | undefined;
  let live: LiveFeed | undefined;
  let history: MetricHistory | undefined;
  let off = 'the console has not started';
  let base = '';
  const unsubscribe: Array<() => void> = [];
  const commands: ConsoleCommands & CommandTable = {
    'console.link': defineCommand()(async () => {
      if (!access) throw new AdminError(`the web console is off: ${off}`);
      const { token, expiresAt } = access.issueLink();
      return { url: `${base}/console/signin?token=${token}`, expires_at: iso(expiresAt) };
    }),
  };
  return {
    name: 'console',
    commands,
    start(ctx) {
      const d = decide(ctx);
      if (!d.on) {
        off = d.why;
        ctx.log.info(`console: off (${d.why})`);
        return;
      }
      if (!ctx.mount || !ctx.command) {
        off = 'this server has no HTTP server to serve it on';
        return;
      }
      const loopbackOnly = isLoopback(new URL(ctx.url).hostname);
      // on loopback the console has a host name of this run only (`<random>.localhost`, which
      // browsers resolve to the loopback address themselves): its cookie goes to no other
      // listener of 127.0.0.1 (docs/console.md "Who can use it")
      const host = loopbackOnly ? runHostName() : undefined;
      base = host ? `http://${host}:${new URL(ctx.url).port}` : ctx.url;
      const cfg = ctx.env.config.console;
      access = new ConsoleAccess(options.linkClock ?? systemClock, {
        ttlMs: parseDuration(cfg.link_ttl) ?? 600_000,
        idleMs: parseDuration(cfg.session_idle) ?? 1_800_000,
        host,
      });
      live = new LiveFeed(options.liveClock ?? systemClock);
      const st: ConsoleState = {
        ctx,
        access,
        live,
        act: new ActAs({
          store: ctx.store,
          env: ctx.env,
          url: ctx.url,
          keysDir: join(ctx.dataDir, DATA_DIR.consoleKeys),
        }),
        jobs: [],
        recording: { on: false, steps: [] },
        scenariosDir: resolve(options.scenariosDir ?? 'scenarios'),
        scenarios: options.scenarios,
        loopbackOnly,
        history: new MetricHistory(ctx.clock),
      };
      history = st.history;
      st.history.start();
      const feed = live;
      // each commit with the users it concerns: a user's page hears only of its user's changes
      const touching = (writes: readonly CommittedWrite[], read: ReadView) => {
        const users = new Set<string>();
        for (const w of writes) usersTouched(w, read, (id) => users.add(id));
        return users;
      };
      unsubscribe.push(
        ctx.deployment.commits.subscribe((writes, read) => feed.changed('commit', touching(writes, read))),
      );
      if (ctx.signals) {
        unsubscribe.push(ctx.signals.on('trace', () => feed.changed('trace')));
        unsubscribe.push(
          ctx.signals.on('job', (j) => {
            st.jobs.push(j);
            if (st.jobs.length > MAX_JOBS) st.jobs.shift();
            feed.changed('job');
          }),
        );
      }
      const app = consoleApp(st);
      // the mount takes `/console` and `/console/…` only (not `/consoles`)
      // not anonymous: a browser with a session, and a sign-in link that would work (a keyless
      // flood from any local process must not keep the operator's link at 429)
      ctx.mount('/console', app, (req) => {
        if (!access) return false;
        if (access.session(cookieOf(req, COOKIE), hostOf(req.headers.host), true)) return true;
        return (
          (req.url ?? '').startsWith('/console/signin?') &&
          access.linkValid(new URLSearchParams(req.url!.slice(req.url!.indexOf('?'))).get('token'))
        );
      });
      ctx.log.info(`console: ${ctx.url}/console — sign in with a one-time link: \`npx pinbot console\` prints one`);
    },
    stop() {
      history?.stop();
      for (const u of unsubscribe.splice(0)) u();
      live?.close();
      access?.clear();
      access = undefined;
    },
  };
}
