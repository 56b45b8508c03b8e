import http from 'node:http';
import { adminSocketPath } from '../daemon/paths';
import { UserError } from '../shared/errors';

export const DAEMON_DOWN = 'coinkeepd is not running (start it with: coinkeep start)';

/** The API's error envelope, as the daemon answered it. */
export interface ErrorEnvelope {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/**
 * A refusal by the daemon. Its message is the line for a person: the code, then the field and the
 * reason that say what to change; under --json the CLI prints the envelope itself.
 */
export class DaemonRefusal extends UserError {
  constructor(readonly envelope: ErrorEnvelope) {
    const d = envelope.details;
    const retry = typeof d.retry_after === 'number' ? ` (retry in ${d.retry_after} s)` : '';
    const field = typeof d.field === 'string' ? ` field: ${d.field}` : '';
    const reason = typeof d.reason === 'string' ? ` reason: ${d.reason}` : '';
    super(`${envelope.message}${retry} [${envelope.code}]${field}${reason}`);
  }
}

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
            const e = (parsed as { error?: Partial<ErrorEnvelope> }).error;
            return reject(new DaemonRefusal({ code: e?.code ?? String(res.statusCode), message: e?.message ?? 'request failed', details: e?.details ?? {} }));
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
