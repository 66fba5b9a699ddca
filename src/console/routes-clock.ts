import { AdminError } from '../admin/errors.js';
import { iso } from '../clock/clock.js';
import type { ConsoleRoutes } from './console-routes.js';
import { clockBody, pluginsBody } from './pages-misc.js';
import { MAX_RECORDED } from './routes-users.js';

/** Moves the clock from a form (`clock.advance` by a duration, `clock.set` to a later time). Internal. */
function moveClock(r: ConsoleRoutes, name: 'clock.advance' | 'clock.set', field: 'duration' | 'iso'): void {
  const { st, back } = r;
  r.post(`/console/clock/${name.slice(6)}`, async (req, res, s) => {
    const value = String((req.body as Record<string, string>)[field] ?? '').trim();
    const before = st.ctx.clock.now();
    // the console's Set time moves forward only (a recording replays clock steps forward; a
    // day already paid would be crossed again): `pinbot clock set` is the operator's tool to go back
    const to = Date.parse(value);
    if (name === 'clock.set' && Number.isFinite(to) && to < before) {
      const why = `the clock moves forward only: ${iso(to)} is before now (${iso(before)}); give a later time`;
      return back(res, s, '/console/clock', false, why);
    }
    try {
      const moved = await r.command(name, { [field]: value } as { duration: string } & { iso: string });
      if (st.recording.on && st.recording.steps.length < MAX_RECORDED)
        st.recording.steps.push(
          name === 'clock.advance'
            ? { kind: 'clock', advanceMs: st.ctx.clock.now() - before }
            : { kind: 'clock', setIso: moved.now },
        );
      st.live.changed('clock');
      back(res, s, '/console/clock', true, `now ${moved.now}`);
    } catch (err) {
      const text = AdminError.wordedFor(err, (arg) => (arg === 'iso' ? 'the time' : `the ${arg}`));
      back(res, s, '/console/clock', false, text);
    }
  });
}

/** The Clock section: the time, its jobs, advancing and setting it. */
export function clockRoutes(r: ConsoleRoutes): void {
  const { st } = r;
  r.get('/console/clock', (req, res, s) => {
    const body = clockBody({ now: iso(st.ctx.clock.now()), virtual: st.ctx.clock.virtual, jobs: st.jobs }, s);
    r.send(req, res, s, 'Clock', 'clock', body);
  });
  moveClock(r, 'clock.advance', 'duration');
  moveClock(r, 'clock.set', 'iso');
}

/** The Plugins section: what each plugin of the project is doing. */
export function pluginRoutes(r: ConsoleRoutes): void {
  r.get('/console/plugins', async (req, res, s) => {
    const report = await r.command('plugins.status').catch(() => ({ plugins: [], problems: [] }));
    r.send(req, res, s, 'Plugins', 'plugins', pluginsBody(report));
  });
}
