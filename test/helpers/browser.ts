import { randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

/**
 * The one place the tests find and launch a browser. In order:
 * 1. `PINBOT_CHROMIUM=PATH` — that binary (a missing file is an error, never a silent fallback);
 * 2. a system Chromium (Debian's `/usr/bin/chromium`; Chrome or Chromium on macOS);
 * 3. the Chromium of the `@sparticuz/chromium` devDependency (Linux x64): its brotli'd
 *    headless-shell build, unpacked once into `node_modules/.cache/pinbot-chromium-<version>/`
 *    with the shared libraries it needs beyond glibc (NSS, NSPR, expat) and its fonts, so that
 *    `npm ci && npm test` needs nothing but Node.
 * `PINBOT_SKIP_BROWSER=1` skips the browser tests explicitly.
 */

export const SKIP_BROWSER = process.env.PINBOT_SKIP_BROWSER === '1';

/** The flags every browser test runs with (headless, no sandbox: the tests run as any user, often root). */
export const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser binary and the environment it needs. */
export interface ChromiumChoice {
  executablePath: string;
  source: 'PINBOT_CHROMIUM' | 'system' | 'bundled';
  /** Added to the browser's environment (the bundled build's libraries and fonts). */
  env: Record<string, string>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where a system Chromium usually is, by platform. */
export function systemChromiumPaths(platform: NodeJS.Platform = process.platform): string[] {
  if (platform === 'linux') return ['/usr/bin/chromium'];
  if (platform === 'darwin') {
    return [
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
    ];
  }
  return [];
}

/**
 * Picks the browser (see the module comment). `prefer: 'bundled'` skips the system one (the
 * helper's own test uses it); `systemPaths` overrides where a system Chromium is looked for.
 */
export async function findChromium(opts: { prefer?: 'bundled'; systemPaths?: string[] } = {}): Promise<ChromiumChoice> {
  const named = process.env.PINBOT_CHROMIUM;
  if (named !== undefined && named !== '' && opts.prefer !== 'bundled') {
    if (!existsSync(named)) {
      throw new Error(
        `PINBOT_CHROMIUM=${named}: no such file; name a Chromium or Chrome binary, ` +
          `or unset it to use the system's or the bundled one`,
      );
    }
    return { executablePath: named, source: 'PINBOT_CHROMIUM', env: {} };
  }
  if (opts.prefer !== 'bundled') {
    const system = (opts.systemPaths ?? systemChromiumPaths()).find((p) => existsSync(p));
    if (system) return { executablePath: system, source: 'system', env: {} };
  }
  return bundledChromium();
}

/** Launches the chosen browser with the tests' flags. */
export async function launchChromium(
  opts: { prefer?: 'bundled' } = {},
): Promise<{ browser: Browser; choice: ChromiumChoice }> {
  const choice = await findChromium(opts);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const browser = await chromium.launch({
    executablePath: choice.executablePath,
    args: BROWSER_ARGS,
    env: { ...env, ...choice.env },
  });
  return { browser, choice };
}

/** The `@sparticuz/chromium` build, unpacked on first use (atomically: concurrent test files may race). */
export async function bundledChromium(): Promise<ChromiumChoice> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `no browser: the bundled Chromium (@sparticuz/chromium) is for Linux x64 and ` +
        `this is ${process.platform} ${process.arch}; ` +
        'set PINBOT_CHROMIUM to a Chromium or Chrome binary, or PINBOT_SKIP_BROWSER=1 to skip the browser tests',
    );
  }
  const require = createRequire(join(ROOT, 'package.json'));
  let pkgDir: string;
  try {
    pkgDir = join(dirname(require.resolve('@sparticuz/chromium')), '..', '..'); // build/cjs/index.cjs
  } catch {
    throw new Error(
      'no browser: @sparticuz/chromium is not installed (run `npm ci`), and no system Chromium was found; ' +
        'set PINBOT_CHROMIUM or PINBOT_SKIP_BROWSER=1',
    );
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const dir = join(ROOT, 'node_modules', '.cache', `pinbot-chromium-${version}`);
  if (!existsSync(join(dir, 'chromium'))) await unpack(join(pkgDir, 'bin'), dir);
  return {
    executablePath: join(dir, 'chromium'),
    source: 'bundled',
    env: {
      LD_LIBRARY_PATH: [join(dir, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_PATH: join(dir, 'fontconfig'),
    },
  };
}

/** Unpacks into a private directory, then renames it into place; the loser of a race uses the winner's. */
async function unpack(bin: string, dir: string): Promise<void> {
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(tmp, { recursive: true });
  try {
    const binary = createWriteStream(join(tmp, 'chromium'), { mode: 0o755 });
    await pipeline(createReadStream(join(bin, 'chromium.br')), createBrotliDecompress(), binary);
    await untar(join(bin, 'al2023.tar.br'), tmp); // lib/: libnss3, libnspr4, libexpat …
    await untar(join(bin, 'swiftshader.tar.br'), tmp); // libEGL/libGLESv2 beside the binary
    await untar(join(bin, 'fonts.tar.br'), join(tmp, 'fontconfig')); // fonts/Open_Sans
    writeFileSync(
      join(tmp, 'fontconfig', 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        (`  <dir>${join(dir, 'fontconfig', 'fonts')}</dir>\n  ` +
          `<cachedir>${join(dir, 'fontconfig', 'cache')}</cachedir>\n</fontconfig>\n`),
    );
    try {
      renameSync(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !existsSync(join(dir, 'chromium'))) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function untar(file: string, into: string): Promise<void> {
  const require = createRequire(join(ROOT, 'package.json'));
  type TarFs = { extract: (dir: string, opts: { chown: boolean }) => NodeJS.WritableStream };
  const { extract } = require('tar-fs') as TarFs;
  mkdirSync(into, { recursive: true });
  await pipeline(createReadStream(file), createBrotliDecompress(), extract(into, { chown: false }));
}
