/**
 * A local webhook receiver on 127.0.0.1 for tests and benchmarks. Each path answers as told:
 * `ok` (200), a status code, `hang` (never answers, past the 10 s limit), `redirect` (302 to
 * another path of this sink, which would record a request if it were followed), `close` (drops
 * the connection without answering) or `long` (200 with a 1 MiB body). Every request is recorded
 * with its raw body and the client's port (which connection it came on).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceivedRequest } from './webhook-verifier';

export type SinkBehaviour = 'ok' | 'hang' | 'redirect' | 'close' | 'long' | number;

export interface SinkRequest extends ReceivedRequest {
  path: string;
  receivedAt: number;
  /** The client's port: requests with the same one came on the same connection. */
  remotePort: number | undefined;
}

export class WebhookSink {
  readonly requests: SinkRequest[] = [];
  private readonly behaviours = new Map<string, SinkBehaviour>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server!: http.Server;
  base = '';

  static async start(): Promise<WebhookSink> {
    const sink = new WebhookSink();
    sink.server = http.createServer((req, res) => sink.handle(req, res));
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', () => resolve()));
    sink.base = `http://127.0.0.1:${(sink.server.address() as AddressInfo).port}`;
    return sink;
  }

  /** A URL of this sink whose path answers with `behaviour`. */
  url(path: string, behaviour: SinkBehaviour = 'ok'): string {
    this.behaviours.set(path, behaviour);
    return this.base + path;
  }

  set(path: string, behaviour: SinkBehaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): SinkRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Polls until `path` has received `count` requests, or fails after `timeoutMs`. */
  async waitFor(path: string, count: number, timeoutMs = 15000): Promise<SinkRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.at(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path}: ${this.at(path).length} of ${count} requests after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.at(path);
  }

  /** Drops every connection left hanging, so the sender sees them closed without an answer. */
  release(): void {
    for (const res of this.hanging) res.destroy();
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.requests.push({
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        path,
        receivedAt: Date.now(),
        remotePort: req.socket.remotePort,
      });
      const b = this.behaviours.get(path) ?? 'ok';
      if (b === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
      } else if (b === 'close') req.socket.destroy();
      else if (b === 'long') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('x'.repeat(1024 * 1024));
      } else if (b === 'redirect') {
        res.writeHead(302, { Location: `${this.base}${path}/followed` });
        res.end();
      } else {
        res.writeHead(b === 'ok' ? 200 : b, { 'Content-Type': 'text/plain' });
        res.end('received');
      }
    });
  }
}
