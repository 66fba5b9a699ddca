import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config/load.js';
import { createKey } from '../../src/domain/users/keys.js';
import { createUser, findUser } from '../../src/domain/users/users.js';
import { loadScenario } from '../../src/scenario/load.js';
import { runScenario } from '../../src/scenario/runner.js';
import { builtinSteps } from '../../src/scenario/steps/index.js';
import { createBotsService } from '../../src/services/bots.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startTracing, stopTracing, tracingOn, tracingWanted } from '../../src/telemetry/tracing.js';
import { tempDir } from '../helpers/api.js';
import { eventually } from '../helpers/serve-child.js';

/** A span as OTLP/JSON carries it (the fields this test reads). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }>;
}

/** An OTLP/HTTP receiver taking JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), in process. */
async function otlpReceiver(): Promise<{
  url: string;
  spans: OtlpSpan[];
  requests: Array<{ path: string; type: string }>;
  close: () => Promise<void>;
}> {
  const spans: OtlpSpan[] = [];
  const requests: Array<{ path: string; type: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '' });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.boolValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined);
};

const PINGER = `name: pinger
as: Pinger Bot
create_user: true
rules:
  - id: pong
    on: message.received
    if: { content: { matches: "^ping" } }
    do:
      - reply: "pong"
  - id: never
    on: message.received
    if: { content: { equals: "this never comes" } }
    do:
      - reply: "impossible"
`;

const ENV = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_TRACES_SAMPLER',
] as const;
const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
let server: RunningServer | undefined;
let cleanup: (() => void) | undefined;

beforeAll(async () => {
  receiver = await otlpReceiver();
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'pinbot-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_TRACES_SAMPLER: 'always_on',
  });
});
afterAll(async () => {
  await server?.close();
  await stopTracing();
  await receiver.close();
  cleanup?.();
  for (const k of ENV)
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
});

describe('OpenTelemetry traces', () => {
  it('an exporter is wanted only when OTEL_* names one', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      false,
    );
    expect(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      false,
    );
  });

  it(
    'one trace follows a message: request → commit → bot woken → poll → rule run → step ' + '→ the bot’s own request',
    async () => {
      const warnings: string[] = [];
      expect(await startTracing(process.env, (m) => warnings.push(m))).toBe(true);
      expect(tracingOn()).toBe(true);
      const tmp = tempDir();
      cleanup = tmp.cleanup;
      const botsDir = join(tmp.dir, 'bots-src');
      mkdirSync(botsDir);
      writeFileSync(join(botsDir, 'pinger.yaml'), PINGER);
      mkdirSync(join(tmp.dir, 'data'));
      const config = configFrom({ rate_limits: { enabled: false }, bots: { dir: botsDir } });
      const s = (server = await startServer({
        dataDir: join(tmp.dir, 'data'),
        config,
        host: '127.0.0.1',
        port: 0,
        log: pino({ level: process.env.TEST_LOG ?? 'silent' }),
        services: [createBotsService()],
      }));
      const key = await s.store.transaction(
        (tx) => createKey(tx, s.env, createUser(tx, s.env, { name: 'Alice' }).id).api_key,
      );
      const bot = await eventually(() => findUser(s.store.read, 'Pinger Bot'), 10_000, 'the bot user');
      // once running, the bot has its baseline: a message sent before it would not be new
      await eventually(
        async () =>
          ((await s.command!('bots.status')) as { bots: Array<{ status: string }> }).bots[0]?.status === 'running',
        10_000,
        'the bot running',
      );

      const sent = await fetch(`${s.url}/api/v1/messages/send`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ recipient_pin: bot.pin_code, content: 'ping' }),
      });
      expect(sent.status).toBe(201);
      const root = await eventually(
        () =>
          receiver.spans.find(
            (x) =>
              x.name === 'POST /api/v1/messages/send' && !x.parentSpanId && attr(x, 'http.request.method') === 'POST',
          ),
        10_000,
        'the send span',
      );
      const inTrace = () => receiver.spans.filter((x) => x.traceId === root.traceId);
      const byId = () => new Map(inTrace().map((x) => [x.spanId, x]));
      // the reply's own server span, in the same trace
      const replyServer = await eventually(
        () =>
          inTrace().find((x) => x.kind === 2 && x.spanId !== root.spanId && attr(x, 'http.request.method') === 'POST'),
        15_000,
        'the reply request in the trace',
      ).catch((e) => {
        throw new Error(
          `${(e as Error).message}: ` +
            `${JSON.stringify(
              receiver.spans.map((x) => [
                x.name,
                x.traceId.slice(0, 6),
                x.spanId.slice(0, 6),
                x.parentSpanId?.slice(0, 6),
              ]),
            )} ${warnings.join('; ')}`,
        );
      });
      // spans are exported as they end: a parent (the rule run) ends after its children
      const chainOf = (leaf: OtlpSpan) => {
        const names: string[] = [];
        for (let x: OtlpSpan | undefined = leaf; x; x = x.parentSpanId ? byId().get(x.parentSpanId) : undefined)
          names.unshift(x.name);
        return names;
      };
      const chain = await eventually(
        () => (chainOf(replyServer)[0] === root.name ? chainOf(replyServer) : undefined),
        10_000,
        'the whole chain',
      );
      expect(chain).toEqual([
        'POST /api/v1/messages/send',
        'pinbot.store.commit',
        'pinbot.bot.wake',
        'pinbot.bot.poll',
        'pinbot.rule.run',
        'pinbot.step reply',
        expect.stringMatching(/^POST \/conversations\/:id\/messages$|^POST \/messages\/send$/),
        expect.stringMatching(/^POST \/api\/v1\/(conversations\/:id\/messages|messages\/send)$/),
      ]);
      const run = inTrace().find((x) => x.name === 'pinbot.rule.run' && attr(x, 'pinbot.rule') === 'pong')!;
      expect({
        bot: attr(run, 'pinbot.bot'),
        outcome: attr(run, 'pinbot.outcome'),
        type: attr(run, 'pinbot.event.type'),
      }).toEqual({ bot: 'pinger', outcome: 'done', type: 'message.received' });
      // the rule that did not run is traced too, with its reason
      const never = await eventually(
        () => inTrace().find((x) => x.name === 'pinbot.rule.run' && attr(x, 'pinbot.rule') === 'never'),
        10_000,
        'the not-run span',
      );
      expect({ outcome: attr(never, 'pinbot.outcome'), reason: attr(never, 'pinbot.reason') }).toEqual({
        outcome: 'not_run',
        reason: 'condition_false',
      });
      // the client span's traceparent made the reply's server span its child
      const client = byId().get(replyServer.parentSpanId!)!;
      expect(client.kind).toBe(3);
      expect(attr(client, 'http.response.status_code')).toBe(201);
      // spans name routes, never ids or PINs
      for (const x of inTrace()) expect(JSON.stringify(x), x.name).not.toContain(bot.pin_code);
      expect(receiver.requests.every((r) => r.path === '/v1/traces' && r.type.startsWith('application/json'))).toBe(
        true,
      );
    },
  );

  it('a keyed write refused by a rule: its transaction’s span ends with the refusal, the refusal’s own after it', async () => {
    const s = server!;
    const alice = await s.store.transaction((tx) => {
      const user = createUser(tx, s.env, { name: 'Refused' });
      return { key: createKey(tx, s.env, user.id).api_key, pin: user.pin_code };
    });
    const headers = { 'X-API-Key': alice.key, 'Content-Type': 'application/json', 'Idempotency-Key': 'self-1' };
    const body = JSON.stringify({ recipient_pin: alice.pin, content: 'to me' });
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${s.url}/api/v1/messages/send`, { method: 'POST', headers, body });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('cannot_target_self');
      if (i === 1) expect(r.headers.get('idempotent-replayed')).toBe('true');
    }
    // the first of the two requests ran the transactions (the replay ran none)
    const commits = await eventually(
      () => {
        const refused = new Set(
          receiver.spans
            .filter((x) => x.name === 'POST /api/v1/messages/send' && attr(x, 'http.response.status_code') === 400)
            .map((x) => x.spanId),
        );
        const found = receiver.spans.filter((x) => x.name === 'pinbot.store.commit' && refused.has(x.parentSpanId!));
        return found.length === 2 ? found : undefined;
      },
      10_000,
      'the two commit spans',
    );
    // 2 is OpenTelemetry's ERROR: the rule refused the first transaction; the refusal was recorded
    expect(commits.map((c) => c.status?.code ?? 0).sort()).toEqual([0, 2]);
  });

  it(
    'a scenario run is one trace: the scenario, a span per step, the server’s spans ' + 'under the step that called',
    async () => {
      expect(tracingOn()).toBe(true);
      const tmp = tempDir();
      const file = join(tmp.dir, 'traced.scenario.yaml');
      writeFileSync(
        file,
        `name: traced
users: { alice: {}, bob: {} }
steps:
  - as: alice
    request: POST /messages/send
    body: { recipient_pin: "{{ users.bob.pin_code }}", content: hi }
    expect: { status: 201 }
  - as: bob
    request: GET /conversations
    expect: { status: 200 }
`,
      );
      try {
        const loaded = await loadScenario(file, { steps: builtinSteps(), allowOutsideRoot: true });
        expect(loaded.problems).toEqual([]);
        expect((await runScenario(loaded.scenario!)).status).toBe('passed');
        const top = await eventually(
          () => receiver.spans.find((x) => x.name === 'pinbot.scenario' && attr(x, 'pinbot.scenario') === 'traced'),
          10_000,
          'the scenario span',
        );
        expect(top.parentSpanId ?? '').toBe('');
        expect(attr(top, 'pinbot.scenario.status')).toBe('passed');
        const steps = await eventually(
          () => {
            const found = receiver.spans.filter((x) => x.traceId === top.traceId && x.name === 'pinbot.scenario.step');
            return found.length === 2 ? found : undefined;
          },
          10_000,
          'the step spans',
        );
        expect(steps.every((x) => x.parentSpanId === top.spanId)).toBe(true);
        const first = steps.find((x) => attr(x, 'pinbot.step.id') === '1')!;
        const send = await eventually(
          () => receiver.spans.find((x) => x.traceId === top.traceId && x.name === 'POST /api/v1/messages/send'),
          10_000,
          'the server span',
        );
        expect(send.parentSpanId).toBe(first.spanId);
      } finally {
        tmp.cleanup();
      }
    },
  );
});
