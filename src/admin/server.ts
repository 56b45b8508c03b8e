import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createApp } from '../http/app';
import type { AppRouter } from '../http/context';
import type { Logger } from '../shared/logger';
import { UserError } from '../shared/errors';

/**
 * The admin API (the "cabinet" of SPEC) on a Unix socket, mode 0600: only the daemon's user can
 * reach it. The CLI and the dashboard use it; it is never on the network.
 */
export async function listenAdmin(socket: string, routers: AppRouter[], logger: Logger): Promise<http.Server> {
  if (existsSync(socket)) {
    // A socket that still answers belongs to a running daemon on this data dir: never take it over.
    if (await answers(socket)) throw new UserError(`another coinkeepd is running with the data dir ${path.dirname(socket)}`);
    unlinkSync(socket);
  }
  const app = createApp({ logger, trustProxy: 0, routers });
  const server = http.createServer(app.callback());
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(socket, 0o600);
  return server;
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
