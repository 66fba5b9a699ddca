import type { BotStatus, Trace } from '../runtime/index.js';
import { BOT_NAME } from '../util/bot-name.js';
import type { ConsoleRoutes } from './console-routes.js';
import { latencyBuckets, notRunReasons } from './metric-history.js';
import { botBody, botsBody } from './pages-bots.js';

/** What the bot page shows of one bot, each part empty when its command fails. Internal. */
async function botView(r: ConsoleRoutes, name: string) {
  const { bots } = await r.command('bots.status').catch(() => ({ bots: [] as BotStatus[] }));
  const traces = await r.command('bots.trace', { name, limit: 100 }).then(
    (x) => x.traces,
    () => [] as Trace[],
  );
  const dialogs = await r.command('bots.dialogs', { name }).then(
    (x) => x.dialogs,
    () => undefined,
  );
  return { status: bots.find((b) => b.name === name), traces, dialogs };
}

/** The Bots section: the list, a bot's page, reload, pause and resume, ending a dialog. */
export function botRoutes(r: ConsoleRoutes): void {
  const { st, get, post, send, back, plain } = r;
  get('/console/bots', async (req, res, s) => {
    const { bots } = await r.command('bots.status').catch(() => ({ bots: [] as BotStatus[] }));
    const charts = { health: st.history.health(), series: st.history.botSeries.bind(st.history) };
    send(req, res, s, 'Bots', 'bots', botsBody(bots, s, charts));
  });
  post('/console/bots/reload', async (_req, res, s) => {
    const { bots } = await r.command('bots.reload');
    r.settleSoon();
    back(res, s, '/console/bots', true, `reloaded: ${bots.length} bot file${bots.length === 1 ? '' : 's'}`);
  });
  for (const verb of ['pause', 'resume'] as const) {
    post(`/console/bots/:name/${verb}`, async (req, res, s) => {
      const name = String(req.params.name);
      if (!BOT_NAME.test(name)) return plain(res, 404, 'no such bot');
      const to = `/console/bots/${encodeURIComponent(name)}`;
      try {
        await r.command(`bots.${verb}`, { name });
        r.settleSoon();
        back(res, s, to, true, `${name} ${verb === 'pause' ? 'paused' : 'resumed'}`);
      } catch (err) {
        back(res, s, to, false, (err as Error).message);
      }
    });
  }
  post('/console/bots/:name/dialogs/end', async (req, res, s) => {
    const name = String(req.params.name);
    if (!BOT_NAME.test(name)) return plain(res, 404, 'no such bot');
    const to = `/console/bots/${encodeURIComponent(name)}`;
    const body = req.body as Record<string, unknown>;
    const conversation =
      typeof body.conversation === 'string' && body.conversation ? { conversation: body.conversation } : {};
    try {
      const args = { name, pin: String(body.pin ?? ''), ...conversation };
      const { ended } = await r.command('bots.end_dialog', args);
      r.settleSoon();
      back(res, s, to, true, `ended: ${ended.map((d) => d.person).join(', ')}`);
    } catch (err) {
      back(res, s, to, false, (err as Error).message);
    }
  });
  get('/console/bots/:name', async (req, res, s) => {
    const name = String(req.params.name);
    if (!BOT_NAME.test(name)) return plain(res, 404, 'no such bot');
    const view = await botView(r, name);
    const reasons = { latency: latencyBuckets(name), reasons: notRunReasons(name) };
    send(
      req,
      res,
      s,
      `Bot ${name}`,
      'bots',
      botBody(
        {
          name,
          ...view,
          onlyNotRun: req.query.why === '1',
          ...reasons,
          scenarioEvents: r.st.scenarios?.fromTraceEvents,
        },
        s,
      ),
    );
  });
}
