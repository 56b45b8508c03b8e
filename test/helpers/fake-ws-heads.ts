/**
 * Test stand-ins for a node's WebSocket endpoint (EVM `ws_url`), on 127.0.0.1:
 * - FakeHeads: a server that answers `eth_subscribe` and pushes whatever heads the test says (a
 *   push that lies), answers pings unless told not to, and can drop each connection as soon as it
 *   subscribed (a flapping endpoint);
 * - FreezingProxy: a TCP forwarder in front of a real node whose open connections can be frozen
 *   (nothing forwarded either way, the sockets left open: a connection dead without a close).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export class FakeHeads {
  private readonly sockets = new Set<Socket>();
  /** Every upgraded connection, subscribed or not (stop ends them all). */
  private readonly accepted = new Set<Socket>();
  private waiting: Array<() => void> = [];
  /** Subscriptions answered, and when each connection was accepted (ms). */
  subscriptions = 0;
  readonly connectedAt: number[] = [];
  /** Answer pings with pongs (a live server); false: a server gone silent behind an open socket. */
  pongs = true;
  /** Close each connection right after answering its subscription. */
  dropAfterSubscribe = false;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeHeads> {
    const server = http.createServer((_req, res) => res.writeHead(400).end());
    const fake = new FakeHeads(server);
    server.on('upgrade', (req, socket: Socket) => fake.accept(req, socket));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return fake;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `n` subscriptions were answered in all. */
  subscribed(n = 1): Promise<void> {
    return this.subscriptions >= n
      ? Promise.resolve()
      : new Promise((r) => {
          const check = () => (this.subscriptions >= n ? r() : this.waiting.push(check));
          this.waiting.push(check);
        });
  }

  push(height: number, hash: string): void {
    const msg = { jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: '0xfeed', result: { number: '0x' + height.toString(16), hash } } };
    for (const s of this.sockets) send(s, 0x1, Buffer.from(JSON.stringify(msg), 'utf8'));
  }

  /** Closes the subscribed connections (the server goes on accepting). */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  /**
   * Ends every connection, also one not subscribed yet (a client reconnecting as the test ends),
   * which `close` alone would wait for with nothing else keeping the process alive.
   */
  async stop(): Promise<void> {
    for (const s of this.accepted) s.destroy();
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeAllConnections();
    await closed;
  }

  private accept(req: http.IncomingMessage, socket: Socket): void {
    this.connectedAt.push(Date.now());
    this.accepted.add(socket);
    const accept = createHash('sha1')
      .update(String(req.headers['sec-websocket-key']) + GUID)
      .digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      // The client's frames are small and masked: 2 bytes, (2 more past 125), the mask, the payload.
      while (buf.length >= 6) {
        let len = buf[1]! & 0x7f;
        let at = 2;
        if (len === 126) {
          len = buf.readUInt16BE(2);
          at = 4;
        }
        if (buf.length < at + 4 + len) return;
        const mask = buf.subarray(at, at + 4);
        const payload = Buffer.from(buf.subarray(at + 4, at + 4 + len).map((x, i) => x ^ mask[i & 3]!));
        const opcode = buf[0]! & 0x0f;
        buf = buf.subarray(at + 4 + len);
        if (opcode === 0x9 && this.pongs) send(socket, 0xa, payload);
        if (opcode === 0x1) this.message(socket, payload.toString('utf8'));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.accepted.delete(socket);
    });
  }

  private message(socket: Socket, text: string): void {
    let msg: { id: number; method: string };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return;
    }
    if (msg.method !== 'eth_subscribe') return;
    this.sockets.add(socket);
    send(socket, 0x1, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: '0xfeed' }), 'utf8'));
    this.subscriptions++;
    for (const w of this.waiting.splice(0)) w();
    if (this.dropAfterSubscribe) socket.destroy();
  }
}

function send(socket: Socket, opcode: number, body: Buffer): void {
  const head = body.length < 126 ? Buffer.from([0x80 | opcode, body.length]) : Buffer.from([0x80 | opcode, 126, body.length >> 8, body.length & 255]);
  socket.write(Buffer.concat([head, body]));
}

/** A TCP forwarder to a node on 127.0.0.1 whose open connections `freeze()` silences without closing them. */
export class FreezingProxy {
  private server: net.Server | null = null;
  private readonly conns = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  port = 0;

  constructor(private readonly targetPort: number) {}

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      const conn = { client, upstream, frozen: false };
      this.conns.add(conn);
      client.on('data', (d) => conn.frozen || upstream.write(d));
      upstream.on('data', (d) => conn.frozen || client.write(d));
      for (const s of [client, upstream]) {
        s.on('error', () => undefined);
        s.once('close', () => {
          client.destroy();
          upstream.destroy();
          this.conns.delete(conn);
        });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** The connections open now forward nothing more, either way, and stay open; new ones work. */
  freeze(): void {
    for (const c of this.conns) c.frozen = true;
  }

  /** Open connections (frozen ones included). */
  get open_connections(): number {
    return this.conns.size;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    for (const c of this.conns) {
      c.client.destroy();
      c.upstream.destroy();
    }
    await closed;
  }
}
