import http from 'node:http';
import { adminSocketPath } from '../daemon/paths';
import { UserError } from '../shared/errors';

export const DAEMON_DOWN = 'coinkeepd is not running (start it with: coinkeep start)';

/** One call to the daemon's admin API over its Unix socket. Errors become one-line UserErrors. */
export function adminCall<T = Record<string, unknown>>(
  dataDir: string,
  method: 'GET' | 'POST',
  path: string,
  body?: Record<string, unknown>,
  timeoutMs = 30000,
): Promise<T> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: adminSocketPath(dataDir),
        method,
        path,
        headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(new UserError(`the daemon answered ${res.statusCode} with no JSON`));
          }
          if ((res.statusCode ?? 500) >= 400) {
            const e = (parsed as { error?: { code?: string; message?: string; details?: { field?: string; retry_after?: number } } }).error;
            const field = e?.details?.field ? ` (${e.details.field})` : '';
            const retry = e?.details?.retry_after ? ` (retry in ${e.details.retry_after} s)` : '';
            return reject(new UserError(`${e?.message ?? 'request failed'}${field}${retry} [${e?.code ?? res.statusCode}]`));
          }
          resolve(parsed as T);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new UserError(DAEMON_DOWN));
      else if (err.message === 'timeout') reject(new UserError('the daemon did not answer in time'));
      else reject(new UserError(`cannot reach the daemon: ${err.message}`));
    });
    if (payload) req.write(payload);
    req.end();
  });
}
