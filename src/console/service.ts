import { join, resolve } from 'node:path';
import { AdminError, type AdminCommand } from '../admin/commands.js';
import { iso, systemClock, type Clock } from '../clock/clock.js';
import { commitFeedOf } from '../store/core/commit-signal.js';
import type { ServerContext, ServerService } from '../services/types.js';
import { parseDuration } from '../util/duration.js';
import { ConsoleAccess } from './access.js';
import { ActAs } from './act-as.js';
import { consoleApp, type ConsoleState } from './app.js';
import { LiveFeed } from './live.js';
import type { ScenarioPort } from './scenario-port.js';
import { cookieOf, COOKIE, isLoopback } from './security.js';
import { DATA_DIR } from '../util/data-dir.js';

/** Jobs kept for the clock page. */
const MAX_JOBS = 200;

export interface ConsoleServiceOptions {
  /** The clock sign-in links expire on (default: real time, also on a virtual-clock server). */
  linkClock?: Clock;
  /** Where recorded scenarios are saved (default: ./scenarios). */
  scenariosDir?: string;
  /** Runs the project's scenarios from the Scenarios page (`pinbot serve` gives one). */
  scenarios?: ScenarioPort;
}

/** Whether the console is served, and if not why not. Internal. */
function decide(ctx: ServerContext): { on: true } | { on: false; why: string } {
  const enabled = ctx.env.config.console.enabled;
  const host = new URL(ctx.url).hostname;
  if (enabled === false) return { on: false, why: 'console.enabled is false in config.yaml' };
  if (enabled === true || isLoopback(host)) return { on: true };
  return { on: false, why: `the server listens on ${host}, not on a loopback address; set console.enabled: true in config.yaml to serve the console there (docs/console.md)` };
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
  let off = 'the console has not started';
  let base = '';
  const unsubscribe: Array<() => void> = [];
  const commands: Record<string, AdminCommand> = {
    'console.link': async () => {
      if (!access) throw new AdminError(`the web console is off: ${off}`);
      const { token, expiresAt } = access.issueLink();
      return { url: `${base}/console/signin?token=${token}`, expires_at: iso(expiresAt) };
    },
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
      base = ctx.url;
      access = new ConsoleAccess(options.linkClock ?? systemClock, parseDuration(ctx.env.config.console.link_ttl) ?? 600_000);
      live = new LiveFeed();
      const st: ConsoleState = {
        ctx,
        access,
        live,
        act: new ActAs({ store: ctx.store, env: ctx.env, url: ctx.url, keysDir: join(ctx.dataDir, DATA_DIR.consoleKeys) }),
        jobs: [],
        recording: { on: false, steps: [] },
        scenariosDir: resolve(options.scenariosDir ?? 'scenarios'),
        scenarios: options.scenarios,
        loopbackOnly: isLoopback(new URL(ctx.url).hostname),
      };
      const feed = live;
      const commits = commitFeedOf(ctx.store);
      if (commits) unsubscribe.push(commits.subscribe(() => feed.changed('commit')));
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
      ctx.mount('/console', app, (req) => access?.session(cookieOf(req, COOKIE)) !== undefined);
      ctx.log.info(`console: ${ctx.url}/console — sign in with a one-time link: \`npx pinbot console\` prints one`);
    },
    stop() {
      for (const u of unsubscribe.splice(0)) u();
      live?.close();
      access?.clear();
      access = undefined;
    },
  };
}
