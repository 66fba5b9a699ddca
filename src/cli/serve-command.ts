import { InvalidArgumentError, Option, type Command } from 'commander';
import { createLogger } from '../log.js';
import { commandConfig, type CommonOptions } from './admin-client.js';
import { exitAfterLog } from './exit.js';
import { common } from './output.js';

/** `pinbot serve`: the API on a data directory, and the bots of bots/. Internal. */
export function registerServeCommand(program: Command): void {
  common(
    program
      .command('serve')
      .description('serve /api/v1 on the data directory and run the bots of bots/')
      .option('--host <host>', 'interface to listen on (default from config: 127.0.0.1)')
      .addOption(
        new Option('--port <port>', 'port (0 picks a free one)').argParser((v) => {
          const n = Number(v);
          if (!/^\d+$/.test(v) || n > 65535)
            throw new InvalidArgumentError('a port is a whole number 0–65535 (0 picks a free port)');
          return n;
        }),
      )
      .option('--virtual-clock', 'time moves only with `pinbot clock advance|set`')
      .option('--no-bots', 'do not run the bots of bots/')
      .option('--dry-run', 'bots evaluate rules and log actions without taking them')
      .option('--safe', 'load no plugins (bots that use plugin entries are reported invalid)'),
  ).action(
    async (
      opts: CommonOptions & {
        host?: string;
        port?: number;
        virtualClock?: boolean;
        bots: boolean;
        dryRun?: boolean;
        safe?: boolean;
      },
    ) => {
      const config = commandConfig(opts);
      const log = createLogger({ level: config.log.level, bufferBytes: config.log.buffer_bytes });
      // Loaded here, not at the top: the other commands do not need express.
      const { startServer } = await import('../server.js');
      const { defaultServices } = await import('../services/index.js');
      const { consoleService } = await import('../console/service.js');
      const { scenarioPort } = await import('../scenario/console-port.js');
      // OpenTelemetry traces when OTEL_* asks for an exporter (docs/operations.md "Traces"); else nothing is loaded
      const { startTracing, stopTracing } = await import('../telemetry/tracing.js');
      if (await startTracing(process.env, (msg) => log.warn(`opentelemetry: ${msg}`)))
        log.info(
          { endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT },
          'traces: exported with OpenTelemetry (OTEL_* environment variables)',
        );
      // Signals are caught from the start: one that arrives while starting stops the server as
      // soon as it is up (the `listening` line may already be out).
      let early: string | undefined;
      let stop = (signal: string) => void (early ??= signal);
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
      const server = await startServer({
        dataDir: opts.data,
        config,
        host: opts.host,
        port: opts.port,
        virtualClock: opts.virtualClock,
        dryRun: opts.dryRun === true,
        safe: opts.safe === true,
        log,
        services: [...defaultServices({ bots: opts.bots }), consoleService({ scenarios: scenarioPort('scenarios') })],
      });
      // in a terminal, the console's first sign-in link (later ones: `pinbot console`)
      if (process.stdout.isTTY) {
        const link = (await server.command?.('console.link').catch(() => undefined)) as { url: string } | undefined;
        if (link)
          process.stdout.write(
            `\nconsole: here is a first one-time link — open ${link.url}\n  (it ` +
              `works once; \`npx pinbot console\` prints another)\n\n`,
          );
      }
      let stopping = false;
      stop = (signal: string) => {
        if (stopping) {
          // A second Ctrl-C: the operator does not want to wait. The journal keeps every write.
          log.warn({ signal }, 'stopping now without a snapshot (the journal replays at the next start)');
          void exitAfterLog(log, 130, 200);
          return;
        }
        stopping = true;
        log.info({ signal }, 'stopping: finishing in-flight requests, writing the snapshot');
        server
          .close()
          .then(stopTracing)
          .then(
            () => {
              log.info('stopped');
              void exitAfterLog(log, 0);
            },
            (err) => {
              log.error({ err }, 'stop failed');
              void exitAfterLog(log, 1);
            },
          );
      };
      if (early) stop(early);
    },
  );
}
