import type { Logger } from 'pino';
import { ownFrame, pluginScope } from './boundary.js';
import type { PluginInstance } from './instance.js';

/**
 * Keeps a plugin's stray errors from stopping the process. An error no call awaits — thrown
 * from a plugin's own timer, event handler or promise — reaches Node's `uncaughtException` /
 * `unhandledRejection`; the guard attributes it to a plugin (the plugin scope it ran in, else a
 * frame of the plugin's own code in its stack), counts it as that plugin's failure (towards
 * quarantine) and keeps running. An error it cannot attribute is not a plugin's: it stops the
 * process as Node would (exit 1), since pinbot's own state may be wrong.
 *
 * Limits: code that blocks the event loop (an endless synchronous loop) cannot be interrupted;
 * `process.exit()` called by a plugin exits; an error from a callback that runs none of the
 * plugin's code and was not started in its scope (e.g. handed to a module-level emitter created
 * at import) carries no plugin and stops the process.
 *
 * @example const uninstall = installProcessGuard(() => host.instances, log);
 */
export function installProcessGuard(instances: () => readonly PluginInstance[], log: Logger): () => void {
  const attribute = (err: unknown): { inst?: PluginInstance; frame?: string } => {
    const all = instances();
    const scoped = pluginScope.getStore();
    const inst = scoped ? all.find((i) => i.name === scoped) : undefined;
    if (inst) return { inst, frame: ownFrame(err, inst.roots) };
    for (const i of all) {
      const frame = ownFrame(err, i.roots);
      if (frame) return { inst: i, frame };
    }
    return {};
  };
  const fatal = (err: unknown, kind: string) => {
    log.fatal({ err }, `${kind} outside any plugin: pinbot stops (the journal keeps every write)`);
    log.flush?.();
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  };
  const onException = (err: unknown) => {
    const { inst, frame } = attribute(err);
    if (inst) inst.strayError(err, frame);
    else fatal(err, 'uncaught exception');
  };
  const onRejection = (reason: unknown) => {
    const { inst, frame } = attribute(reason);
    if (inst) inst.strayError(reason, frame);
    else fatal(reason, 'unhandled promise rejection');
  };
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
