import type { RunAllOptions } from '../../scenario/run-all.js';

/** A scenario kept up by `--keep`. Internal. */
export type KeptHandle = Parameters<NonNullable<RunAllOptions['keep']>>[0];

/** A word as a shell reads it back: quoted when it has anything but safe characters. Internal. */
const shellWord = (s: string) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * Keeps failed scenarios' servers up (`--keep`) until Ctrl-C (or SIGTERM), then stops them and
 * removes their temp data. Internal.
 */
export async function holdKept(kept: KeptHandle[]): Promise<void> {
  // the kept server answers the admin commands a serve answers: these lines run as printed
  const ask = (k: KeptHandle) => [
    ...(k.bots ?? []).map((b) => `    trace  pinbot bots trace ${shellWord(b)} --data ${shellWord(k.dataDir)}`),
    `    bots   pinbot bots list --data ${shellWord(k.dataDir)}`,
  ];
  const lines = kept.map((k) =>
    [
      `  ${k.name} (${k.file})`,
      `    server ${k.url}`,
      `    data   ${k.dataDir}`,
      `    keys   source ${k.keys}   (sets $PINBOT_KEY_<USER> for the curl lines)`,
      ...ask(k),
    ].join('\n'),
  );
  process.stderr.write(
    `kept ${kept.length} failed ` +
      `scenario${kept.length === 1 ? "'s server" : "s' servers"} up until Ctrl-C (then ` +
      `stopped, data removed):\n${lines.join('\n')}\n`,
  );
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  process.stderr.write(`${signal}: stopping the kept server${kept.length === 1 ? '' : 's'}\n`);
  await Promise.all(kept.map((k) => k.close().catch(() => undefined)));
}
