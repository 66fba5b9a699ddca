#!/usr/bin/env node
// Walks docs/getting-started.md word for word in a temp folder and says how long each step took:
// npm pack → npx --yes ./pinbot-X.tgz init my-bots → npm install → npm test →
// npx tsc --noEmit → npm run validate → npm start, a user writes "hello", the bot answers.
//
//   node scripts/try-getting-started.js [--offline] [--keep]
//
// --offline: npm may use only its cache (it fails on a machine whose cache lacks a package's
// metadata; by default npm prefers the cache and asks the registry for what is missing).
// --keep: leave the temp folder (its path is printed). Exit code 1 at the first failing step.
// Not a vitest test: it needs the npm cache or the network, and takes a minute.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const offline = process.argv.includes('--offline');
const keep = process.argv.includes('--keep');
const npmFlags = [offline ? '--offline' : '--prefer-offline', '--no-audit', '--no-fund'];
const work = mkdtempSync(join(tmpdir(), 'pinbot-getting-started-'));
const project = join(work, 'my-bots');
const env = { ...process.env, NO_COLOR: '1', CI: '1', npm_config_update_notifier: 'false' };

function step(name, fn) {
  const t0 = performance.now();
  try {
    const out = fn();
    console.log(`ok    ${name}  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    return out;
  } catch (err) {
    console.log(`FAIL  ${name}  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    console.log(String(err.stdout ?? '') + String(err.stderr ?? '') || err.message);
    finish(1);
  }
}

function run(cwd, cmd, args) {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function finish(code) {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(code);
}

const started = performance.now();
const tarball = step('npm pack', () => {
  run(ROOT, 'npm', ['pack', '--pack-destination', work, '--loglevel', 'error']);
  const name = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!name) throw new Error('npm pack wrote no tarball');
  return name;
});
console.log(`      ${tarball}: ${(readFileSync(join(work, tarball)).length / 1024).toFixed(0)} kB`);
step(`npx --yes ./${tarball} init my-bots`, () =>
  run(work, 'npx', ['--yes', ...npmFlags, `./${tarball}`, 'init', 'my-bots']),
);
step('npm install', () => run(project, 'npm', ['install', ...npmFlags]));
step('npm test', () => {
  const out = run(project, 'npm', ['test']);
  if (!/Tests +1 passed/.test(out) || !/1 scenario: 1 passed/.test(out))
    throw Object.assign(new Error('unexpected output'), { stdout: out });
});
step('npx tsc --noEmit (strict)', () => run(project, 'npx', ['tsc', '--noEmit']));
step('npm run validate', () => run(project, 'npm', ['run', 'validate']));

// npm start on a free port (3000 may be taken on this machine), then a conversation
const server = spawn('npm', ['start', '--', '--port', '0'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
server.stdout.on('data', (c) => (log += c));
server.stderr.on('data', (c) => (log += c));
const t0 = performance.now();
const until = async (test, what, ms = 30_000) => {
  for (const end = performance.now() + ms; performance.now() < end; await new Promise((r) => setTimeout(r, 200))) {
    const v = await test();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}\n${log}`);
};
try {
  const url = (await until(() => /listening on (http:\/\/\S+?)"/.exec(log)?.[1], 'the server')).replace(/\/$/, '');
  const pin = await until(() => /running as Welcome Bot \(([A-Z0-9]+)\)/.exec(log)?.[1], 'the bot');
  console.log(`ok    npm start  (${((performance.now() - t0) / 1000).toFixed(1)} s: ${url}, bot PIN ${pin})`);
  const alice = JSON.parse(run(project, 'npx', ['pinbot', 'users', 'add', '--name', 'Alice', '--json']));
  const headers = { 'X-API-Key': alice.api_key, 'content-type': 'application/json' };
  const sent = await fetch(`${url}/api/v1/messages/send`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ recipient_pin: pin, content: 'hello' }),
  });
  if (sent.status !== 201) throw new Error(`POST /messages/send: ${sent.status} ${await sent.text()}`);
  const answer = await until(async () => {
    const r = await (await fetch(`${url}/api/v1/conversations`, { headers })).json();
    const last = r.conversations?.[0]?.last_message;
    return last?.sender?.pin_code === pin ? last.content : undefined;
  }, 'the bot to answer');
  console.log(`ok    the bot answered "hello": ${JSON.stringify(answer)}`);
} catch (err) {
  console.log(`FAIL  npm start and a conversation: ${err.message}`);
  await stopServer();
  finish(1);
}
await stopServer();
console.log(`all steps passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
finish(0);

/** Stops the server the way Ctrl-C would: SIGTERM to the pinbot process (its pid is in the lock). */
async function stopServer() {
  const exited = new Promise((r) => (server.exitCode !== null ? r() : server.once('exit', r)));
  try {
    const pid = Number(readFileSync(join(project, 'data', 'pinbot.lock'), 'utf8').split(' ')[0]);
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    server.kill('SIGTERM');
  }
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
}
