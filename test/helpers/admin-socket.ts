import http from 'node:http';
import path from 'node:path';

/**
 * One request to a daemon's admin socket (`<data_dir>/admin.sock`), as the CLI and the dashboard
 * make it, with the HTTP status the CLI does not show: refusals are checked by status, code and details.
 */
export function adminRequest(dataDir: string, method: 'GET' | 'POST', target: string, body?: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: path.join(dataDir, 'admin.sock'),
        method,
        path: target,
        headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
