import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../helpers/api.js';
import { findChromium, launchChromium, SKIP_BROWSER } from '../helpers/browser.js';
import { ROOT } from '../helpers/spawn.js';

/**
 * The browser the tests use comes from npm when the machine has none (issue 31): the helper's
 * choice, its errors, and a run in a private mount namespace whose root holds nothing but Node
 * and the libraries Node itself links — no /usr/bin/chromium, no system fonts, no NSS.
 */
const LINUX_X64 = process.platform === 'linux' && process.arch === 'x64';

/** The shared libraries `node` links (ldd), to copy into the bare root. */
function nodeLibraries(): string[] {
  const out = spawnSync('ldd', [process.execPath], { encoding: 'utf8' }).stdout ?? '';
  return [...out.matchAll(/(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
}

/** Whether this machine lets us make a mount namespace and chroot in it (unprivileged or root). */
function canIsolate(): boolean {
  if (!LINUX_X64) return false;
  const probe = spawnSync('unshare', ['--mount', '--map-root-user', 'sh', '-c', 'exit 0'], { encoding: 'utf8' });
  return probe.status === 0 && nodeLibraries().length > 0;
}

describe.skipIf(SKIP_BROWSER)('the tests’ browser (test/helpers/browser.ts)', () => {
  const tmp = tempDir('pinbot-browser-');
  afterAll(() => tmp.cleanup());

  it('PINBOT_CHROMIUM naming a missing file is an error that names it, never a silent fallback', async () => {
    vi.stubEnv('PINBOT_CHROMIUM', join(tmp.dir, 'no-such-chromium'));
    try {
      await expect(findChromium()).rejects.toThrow(/PINBOT_CHROMIUM=.*no-such-chromium: no such file/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('with no system Chromium where it looks, it takes the bundled one', async () => {
    vi.stubEnv('PINBOT_CHROMIUM', '');
    try {
      if (!LINUX_X64) {
        await expect(findChromium({ systemPaths: [] })).rejects.toThrow(/Linux x64.*PINBOT_CHROMIUM/);
        return;
      }
      const choice = await findChromium({ systemPaths: [join(tmp.dir, 'absent')] });
      expect(choice.source).toBe('bundled');
      expect(choice.executablePath).toMatch(/node_modules\/\.cache\/pinbot-chromium-143\.[\d.]+\/chromium$/);
      expect(choice.env.LD_LIBRARY_PATH).toContain(join(dirname(choice.executablePath), 'lib'));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it.runIf(LINUX_X64)('the bundled Chromium starts with the tests’ flags and renders text', async () => {
    const { browser, choice } = await launchChromium({ prefer: 'bundled' });
    try {
      expect(choice.source).toBe('bundled');
      const page = await browser.newPage();
      await page.setContent('<p id="p">hello</p>');
      expect(await page.textContent('#p')).toBe('hello');
      expect(await page.evaluate(() => document.getElementById('p')!.getBoundingClientRect().width)).toBeGreaterThan(
        10,
      );
    } finally {
      await browser.close();
    }
  });

  it.runIf(canIsolate())('runs where /usr/bin/chromium does not exist: a root with only Node and its libraries', () => {
    // the bare root: node (bound in), its libraries (copied), the repository at its own path, /dev, /proc, a /tmp
    const root = join(tmp.dir, 'root');
    for (const d of ['usr/bin', 'dev', 'proc', 'tmp', 'etc', ROOT.slice(1)])
      mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, 'usr/bin/node'), '');
    for (const lib of nodeLibraries()) {
      mkdirSync(join(root, dirname(lib)), { recursive: true });
      copyFileSync(realpathSync(lib), join(root, lib));
    }
    writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
    const script = [
      'set -e',
      // /tmp first: a checkout under /tmp (a CI clone) is then bound on top of it, not hidden by it
      'mount -t tmpfs tmpfs "$1/tmp"',
      `mkdir -p "$1${ROOT}"`,
      `mount --bind "${process.execPath}" "$1/usr/bin/node"`,
      `mount --bind "${ROOT}" "$1${ROOT}"`,
      'mount --rbind /dev "$1/dev"',
      'mount --rbind /proc "$1/proc"',
      `exec chroot "$1" /usr/bin/node "${ROOT}/bin/run-ts.js" "${ROOT}/test/helpers/browser-child.ts"`,
    ].join('\n');
    const env = { ...process.env, PINBOT_CHROMIUM: '', NODE_EXTRA_CA_CERTS: '' };
    const run = spawnSync('unshare', ['--mount', '--map-root-user', 'sh', '-c', script, 'sh', root], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
    const line = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ systemVisible: false, source: 'bundled', heading: 'pinbot console' });
    expect(line.inked).toBeGreaterThan(50); // a line of text drew glyphs: the bundled fonts were found
    expect(existsSync(join(root, 'usr/bin/chromium'))).toBe(false);
  });
});
