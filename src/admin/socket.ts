import { chmodSync, existsSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { AdminArgs, AdminContext } from './commands.js';
import { AdminError } from './errors.js';
import { DATA_DIR } from '../util/data-dir.js';

/** The admin socket of a data directory: a Unix socket, mode 0600, never TCP. */
export function socketPath(dataDir: string): string {
  return join(dataDir, DATA_DIR.socket);
}

interface Request {
  cmd: string;
  args?: AdminArgs;
}

/**
 * Serves operator commands on `DATA/pinbot.sock`: one JSON line in, one JSON line out.
 * Only the owner of the data directory can connect (file mode 0600).
 */
export async function listenAdmin(dataDir: string, ctx: AdminContext): Promise<Server> {
  const path = socketPath(dataDir);
  if (Buffer.byteLength(path) > 103) {
    throw new AdminError(
      `the admin socket path ${path} is too long for a Unix socket (at most 103 bytes). Use a shorter --data path.`,
    );
  }
  if (existsSync(path)) rmSync(path); // we hold the data dir lock, so it is stale
  const server = createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl === -1) {
        if (buf.length > 1_000_000) conn.destroy();
        return;
      }
      const line = buf.slice(0, nl);
      buf = '';
      void (async () => {
        let reply: unknown;
        try {
          const req = JSON.parse(line) as Request;
          // loaded here: a CLI that only calls a server's socket never needs the commands themselves
          const { runAdminCommand } = await import('./commands.js');
          reply = { ok: true, result: await runAdminCommand(ctx, req.cmd, req.args ?? {}) };
        } catch (err) {
          const known = err instanceof AdminError;
          if (!known) ctx.log?.error({ err }, 'admin command failed');
          reply = { ok: false, error: known ? err.message : `internal error: ${(err as Error).message}` };
        }
        conn.end(JSON.stringify(reply) + '\n');
      })();
    });
    conn.on('error', () => undefined);
  });
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(path, 0o600);
  return server;
}

/** The admin socket refused the connection (no server behind it): the command was not sent. */
export class AdminUnreachableError extends AdminError {
  constructor(path: string, why: string) {
    super(`cannot reach the server's admin socket ${path}: ${why}`);
    this.name = 'AdminUnreachableError';
  }
}

/** Sends one command to a running server's admin socket. */
export function callAdmin(dataDir: string, cmd: string, args: AdminArgs = {}, timeoutMs = 600_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socketPath(dataDir));
    let buf = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new AdminError(`the server did not answer ${cmd} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    let connected = false;
    conn.on('connect', () => {
      connected = true;
      conn.write(JSON.stringify({ cmd, args }) + '\n');
    });
    conn.on('data', (c: string) => (buf += c));
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(
        connected
          ? new AdminError(
              `the connection to the server's admin socket broke during ${cmd} ` +
                `(${err.message}); check whether it took effect`,
            )
          : new AdminUnreachableError(socketPath(dataDir), err.message),
      );
    });
    conn.on('end', () => {
      clearTimeout(timer);
      try {
        const reply = JSON.parse(buf) as { ok: boolean; result?: unknown; error?: string };
        if (reply.ok) resolve(reply.result);
        else reject(new AdminError(reply.error ?? 'failed'));
      } catch {
        reject(new AdminError('the admin socket answered something unreadable'));
      }
    });
  });
}
