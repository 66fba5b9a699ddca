// Bot runtime figures (node bin/run-ts.js bench/bots-runtime.ts [throughput|latency|idle] …):
//   throughput BOTS EVENTS   events handled per second by one process (server + bots), echo bots
//   latency SAMPLES          event → action latency at the default poll interval (5 s)
//   idle BOTS SECONDS        CPU and event-loop delay of BOTS bots polling every 5 s
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createClient } from '../src/client/client.js';
import { configFrom } from '../src/config/load.js';
import { createKey } from '../src/domain/users/keys.js';
import { createUser, findUser } from '../src/domain/users/users.js';
import { createRegistry } from '../src/runtime/registry.js';
import { BotHost } from '../src/runtime/host/bot-host.js';
import { startServer } from '../src/server.js';

const [mode = 'throughput', a = '', b = ''] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'pinbot-bench-bots-'));
const botsDir = join(dir, 'bots');
mkdirSync(botsDir);
const log = pino({ level: 'silent' });
const server = await startServer({
  dataDir: join(dir, 'data'),
  config: configFrom({ rate_limits: { enabled: false } }),
  port: 0,
  log,
  services: [],
});

const echo = (i: number, poll = '5s') =>
  `name: echo-${i}\nas: Echo ${i}\ncreate_user: true\npoll: ${poll}\ntraces: ` +
  `1000\nloop_guard: false\nrules:\n  - id: echo\n    on: message.received\n    do:\n ` +
  `     - reply: "echo {{ event.content }}"\n`;

async function user(name: string) {
  const key = await server.store.transaction((tx) =>
    createKey(tx, server.env, createUser(tx, server.env, { name }).id),
  );
  return createClient({ baseUrl: server.url, apiKey: key.api_key, retry: { attempts: 10 } });
}

function host(jitter: boolean) {
  return new BotHost({
    registry: createRegistry(),
    log,
    clock: server.clock,
    scheduler: server.scheduler,
    dir: botsDir,
    ...server.deployment.botHostDeps({ env: server.env, url: server.url, stateDir: join(dir, 'data', 'bots') }),
    jitter,
  });
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

try {
  if (mode === 'throughput') {
    const bots = Number(a || 20);
    const perBot = Number(b || 50);
    for (let i = 0; i < bots; i++) writeFileSync(join(botsDir, `echo-${i}.yaml`), echo(i, '1h'));
    const h = host(false);
    await h.start();
    for (let i = 0; i < bots; i++) await h.runner(`echo-${i}`)!.pollNow();
    const sender = await user('Sender');
    const pins = Array.from({ length: bots }, (_, i) => findUser(server.store.read, `Echo ${i}`)!.pin_code);
    // the bots are woken as the messages come: the clock runs from the first message to the last answer
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const handled = () =>
      pins.reduce((n, _, i) => n + h.traces(`echo-${i}`, 10_000)!.filter((t) => t.outcome === 'done').length, 0);
    for (let k = 0; k < perBot; k++)
      await Promise.all(pins.map((pin) => sender.messages.send({ recipient_pin: pin, content: `m${k}` })));
    while (handled() < bots * perBot && performance.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 20));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const done = handled();
    console.log(
      JSON.stringify({
        mode,
        bots,
        events: bots * perBot,
        handled: done,
        seconds: +(ms / 1000).toFixed(2),
        events_per_second: Math.round(done / (ms / 1000)),
        cpu_seconds: +((cpu.user + cpu.system) / 1e6).toFixed(2),
      }),
    );
    await h.stop();
  } else if (mode === 'latency') {
    const samples = Number(a || 30);
    writeFileSync(join(botsDir, 'echo-0.yaml'), echo(0));
    const h = host(true);
    await h.start();
    await h.runner('echo-0')!.pollNow();
    const alice = await user('Alice');
    const pin = findUser(server.store.read, 'Echo 0')!.pin_code;
    for (let k = 0; k < samples; k++) {
      await alice.messages.send({ recipient_pin: pin, content: `m${k}` });
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 2500)); // arrivals at random phases of the poll
    }
    await new Promise((r) => setTimeout(r, 6000));
    const [conv] = (await alice.conversations.list()).conversations;
    const msgs = (await alice.conversations.messages(conv!.id, { limit: 200 })).messages;
    const sent = new Map(msgs.filter((m) => !m.content.startsWith('echo')).map((m) => [m.content, m.timestamp]));
    const lat = msgs
      .filter((m) => m.content.startsWith('echo '))
      .map((m) => m.timestamp - sent.get(m.content.slice(5))!);
    console.log(
      JSON.stringify({
        mode,
        poll: '5s',
        samples: lat.length,
        p50_ms: pct(lat, 50),
        p95_ms: pct(lat, 95),
        max_ms: Math.max(...lat),
        mean_ms: Math.round(lat.reduce((x, y) => x + y, 0) / lat.length),
      }),
    );
    await h.stop();
  } else if (mode === 'idle') {
    const bots = Number(a || 1000);
    const seconds = Number(b || 30);
    for (let i = 0; i < bots; i++) writeFileSync(join(botsDir, `echo-${i}.yaml`), echo(i));
    const h = host(true);
    const t0 = performance.now();
    await h.start();
    for (let i = 0; i < bots; i++) await h.runner(`echo-${i}`)!.started;
    const startup = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 6000)); // every bot past its first, jittered interval
    const polls0 = Array.from({ length: bots }, (_, i) => h.runner(`echo-${i}`)!.polls).reduce((x, y) => x + y, 0);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const wall = (performance.now() - w0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    delay.disable();
    const polls =
      Array.from({ length: bots }, (_, i) => h.runner(`echo-${i}`)!.polls).reduce((x, y) => x + y, 0) - polls0;
    const running = h.status().filter((s) => s.status === 'running').length;
    console.log(
      JSON.stringify({
        mode,
        bots,
        running,
        startup_s: +(startup / 1000).toFixed(1),
        polls_per_second: Math.round(polls / wall),
        expected_polls_per_second: bots / 5,
        cpu_percent_of_one_core: Math.round(((cpu.user + cpu.system) / 1e6 / wall) * 100),
        event_loop_delay_p99_ms: +(delay.percentile(99) / 1e6).toFixed(1),
        rss_mb: Math.round(process.memoryUsage().rss / 1e6),
      }),
    );
    await h.stop();
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
