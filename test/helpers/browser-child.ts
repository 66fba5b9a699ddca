import { existsSync } from 'node:fs';
import { launchChromium, systemChromiumPaths } from './browser.js';

/**
 * Launches the tests' browser as test/helpers/browser.ts picks it (no options: what the browser
 * tests get) and prints one JSON line: which binary, whether a system Chromium was visible, and
 * what a page rendered — the text of a heading and how many canvas pixels a line of text inked
 * (0 when no font could be found). test/console/browser-helper.test.ts runs it with
 * /usr/bin/chromium hidden.
 */
const { browser, choice } = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setContent('<h1 id="h">pinbot console</h1><canvas id="c" width="200" height="60"></canvas>');
  const inked = await page.evaluate(() => {
    const ctx = (document.getElementById('c') as HTMLCanvasElement).getContext('2d')!;
    ctx.font = '32px sans-serif';
    ctx.fillText('pinbot', 10, 40);
    const data = ctx.getImageData(0, 0, 200, 60).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
    return n;
  });
  const line = {
    systemVisible: systemChromiumPaths().some((p) => existsSync(p)),
    source: choice.source,
    executablePath: choice.executablePath,
    version: browser.version(),
    heading: await page.textContent('#h'),
    inked,
  };
  process.stdout.write(JSON.stringify(line) + '\n');
} finally {
  await browser.close();
}
