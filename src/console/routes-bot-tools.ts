import type { Response } from 'express';
import { iso } from '../clock/clock.js';
import { whatIfFile } from '../runtime/index.js';
import { BOT_NAME } from '../util/bot-name.js';
import { formatProblem } from '../util/yaml-errors.js';
import type { ConsoleSession } from './access.js';
import { WHAT_IF_LAST, whatIfBody, type WhatIfView } from './pages-what-if.js';
import type { ConsoleRoutes } from './console-routes.js';

/** A run as `bots trace --scenario` takes it: an event's key or id, or `last`. */
const RUN = /^(last|[a-z][a-z_.]{0,40}:[A-Za-z0-9_.:-]{1,120}|[A-Za-z0-9_-]{1,120})$/;
/** How many traces a scenario is looked for in (as the CLI does). */
const SCENARIO_TRACES = 1000;

/**
 * A bot page's tools: **What if?** (its file as it is on disk replayed against the last 100
 * decisions the running bot recorded, acting on nothing — the code of `pinbot bots what-if`) and
 * **Make a scenario** on a run (the YAML of `pinbot bots trace NAME --scenario RUN`). A what-if
 * costs CPU: it is a POST (CSRF-checked, as every change), one at a time, and its result is kept
 * per session (the last one) for the page it redirects to.
 */
export function botToolRoutes({ st, get, post, send, back, command }: ConsoleRoutes): void {
  const results = new WeakMap<ConsoleSession, WhatIfView>();
  let running = false;
  /** The bot's file, as the running server has it; a 404 for a name that is not a bot. */
  const fileOf = async (name: string, res: Response): Promise<string | undefined> => {
    if (!BOT_NAME.test(name)) return void res.status(404).type('text/plain').send('no such bot');
    const { bots } = await command('bots.status');
    const file = bots.find((b) => b.name === name)?.file;
    if (!file) res.status(404).type('text/plain').send(`no bot file named ${name} is loaded here`);
    return file;
  };
  const traces = async (name: string, limit: number) => (await command('bots.trace', { name, limit })).traces;
  const page = (name: string) => `/console/bots/${encodeURIComponent(name)}`;

  post('/console/bots/:name/what-if', async (req, res, s) => {
    const name = String(req.params.name);
    const file = await fileOf(name, res);
    if (!file) return;
    // a replay costs CPU: one at a time, whoever asks
    if (running)
      return void back(res, s, `${page(name)}/what-if`, false, 'a what-if is running; try again when it ends');
    running = true;
    try {
      const bots = st.ctx.env.config.bots;
      const r = await whatIfFile(file, (bot) => traces(bot, WHAT_IF_LAST), {
        registry: st.ctx.registry,
        envAllow: bots.env_allow,
        allowedServers: bots.allowed_servers,
        bot: name,
      });
      const at = iso(st.ctx.clock.now());
      results.set(
        s,
        'problems' in r
          ? { bot: name, file, at, problems: r.problems.map(formatProblem) }
          : { bot: name, file, at, report: r },
      );
      res.redirect(303, `${page(name)}/what-if`);
    } catch (err) {
      back(res, s, page(name), false, `what-if: ${(err as Error).message}`);
    } finally {
      running = false;
    }
  });
  get('/console/bots/:name/what-if', async (req, res, s) => {
    const name = String(req.params.name);
    const file = await fileOf(name, res);
    if (!file) return;
    const view = results.get(s);
    send(req, res, s, `What-if: ${name}`, 'bots', whatIfBody(name, view?.bot === name ? view : undefined, file, s));
  });

  get('/console/bots/:name/scenario.yaml', async (req, res, s) => {
    const name = String(req.params.name);
    const run = String(req.query.run ?? '');
    if (!RUN.test(run))
      return void back(res, s, page(name), false, 'make a scenario: give a run (its event id, e.g. txn_…, or last)');
    const file = await fileOf(name, res);
    if (!file) return;
    if (!st.scenarios)
      return void back(res, s, page(name), false, 'making a scenario needs the scenario runner: pinbot serve gives it');
    try {
      const text = st.scenarios.fromTrace({ traces: await traces(name, SCENARIO_TRACES), run, botFile: file });
      const id = run
        .split(':')
        .pop()!
        .replace(/[^A-Za-z0-9_-]/g, '_');
      res.setHeader('Content-Disposition', `attachment; filename="${name}-${id}.yaml"`);
      res.type('text/yaml').send(text);
    } catch (err) {
      back(res, s, page(name), false, `make a scenario: ${(err as Error).message}`);
    }
  });
}
