/**
 * A stand-in for Bitcoin Core's long poll, in front of a bcoin regtest node (bcoin has no
 * `waitfornewblock`): an HTTP server on 127.0.0.1 that forwards every JSON-RPC request to bcoin,
 * except `waitfornewblock`, which it answers as Core does — held until the test says a block came
 * (`announce`), or its timeout passed (the tip unchanged). `passThrough` forwards that too (bcoin
 * then answers method not found). Named a fake: it is not Core, only its answer's shape.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Held {
  res: http.ServerResponse;
  id: unknown;
  timer: NodeJS.Timeout | null;
}

export class FakeCoreWait {
  /** `waitfornewblock` requests seen (answered here or forwarded). */
  waits = 0;
  passThrough = false;
  private readonly held = new Set<Held>();
  port = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly target: URL,
  ) {}

  /** `rpcUrl`: the node's (bcoin's) RPC URL with its credentials. */
  static async start(rpcUrl: string): Promise<FakeCoreWait> {
    const target = new URL(rpcUrl);
    let fake: FakeCoreWait;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void fake.handle(req, res, Buffer.concat(chunks)));
    });
    fake = new FakeCoreWait(server, target);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    fake.port = (server.address() as AddressInfo).port;
    return fake;
  }

  /** Waits held now (the daemon's call in progress). */
  get waiting(): number {
    return this.held.size;
  }

  /** Answers the held waits with `tip`, or the node's tip when none is given (a block came). */
  async announce(tip?: { hash: string; height: number }): Promise<void> {
    const answer = tip ?? (await this.tip());
    for (const h of [...this.held]) this.answer(h, answer);
  }

  async stop(): Promise<void> {
    for (const h of [...this.held]) {
      if (h.timer) clearTimeout(h.timer);
      h.res.destroy();
    }
    this.held.clear();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    let calls: Array<{ id: unknown; method: string; params?: unknown[] }> | null = null;
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      if (Array.isArray(parsed)) calls = parsed as Array<{ id: unknown; method: string; params?: unknown[] }>;
    } catch {
      // forwarded as it came
    }
    const wait = calls?.length === 1 && calls[0]!.method === 'waitfornewblock' ? calls[0]! : null;
    if (wait) this.waits++;
    if (wait && !this.passThrough) {
      const timeoutMs = Number(wait.params?.[0] ?? 0);
      const h: Held = { res, id: wait.id, timer: null };
      this.held.add(h);
      if (timeoutMs > 0) h.timer = setTimeout(() => void this.tip().then((t) => this.answer(h, t)), timeoutMs);
      res.on('close', () => {
        if (h.timer) clearTimeout(h.timer);
        this.held.delete(h);
      });
      return;
    }
    try {
      const up = await fetch(new URL(req.url ?? '/', this.target.origin), {
        method: req.method,
        headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
        body: req.method === 'POST' ? body : undefined,
      });
      const text = await up.text();
      res.writeHead(up.status, { 'content-type': 'application/json' }).end(text);
    } catch {
      res.destroy();
    }
  }

  private answer(h: Held, tip: { hash: string; height: number }): void {
    if (!this.held.delete(h)) return;
    if (h.timer) clearTimeout(h.timer);
    h.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ result: tip, error: null, id: h.id }]));
  }

  /** The node's tip, asked as the daemon asks (its credentials are in the target URL). */
  private async tip(): Promise<{ hash: string; height: number }> {
    const auth = 'Basic ' + Buffer.from(`${decodeURIComponent(this.target.username)}:${decodeURIComponent(this.target.password)}`).toString('base64');
    const res = await fetch(this.target.origin + '/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({ jsonrpc: '1.0', id: 0, method: 'getblockchaininfo', params: [] }),
    });
    const info = ((await res.json()) as { result: { bestblockhash: string; blocks: number } }).result;
    return { hash: info.bestblockhash, height: info.blocks };
  }
}
