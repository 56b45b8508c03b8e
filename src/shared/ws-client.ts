import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A message larger than this closes the socket (a node's new-head notification is about 1 KB). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * A minimal WebSocket client (RFC 6455) for a node's subscriptions: text messages in and out,
 * ping answered, fragments joined, nothing else (no extensions, no binary). Node 20 has no
 * WebSocket of its own and the project carries no WebSocket package of its own; this is the
 * client side only, which is small. `onMessage` gets each text message; `onClose` is called once,
 * whatever ended the connection (refused, dropped, closed by either side).
 */
export class WsClient {
  private socket: Socket | null = null;
  private closed = false;
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  /** When a frame last arrived (ms, Date.now()), or the connection opened: see ping(). */
  lastHeardAt = Date.now();

  private constructor(
    private readonly onMessage: (text: string) => void,
    private readonly onClose: (reason: string) => void,
  ) {}

  /** Connects to `url` (ws: or wss:) within `timeoutMs`; resolves once the upgrade is accepted. */
  static connect(url: string, handlers: { onMessage(text: string): void; onClose(reason: string): void }, timeoutMs = 10_000): Promise<WsClient> {
    const client = new WsClient(handlers.onMessage, handlers.onClose);
    const target = new URL(url);
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:') return Promise.reject(new Error('a WebSocket URL is ws: or wss:'));
    const key = randomBytes(16).toString('base64');
    const expected = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    const request = (target.protocol === 'wss:' ? https : http).request({
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (target.protocol === 'wss:' ? 443 : 80),
      path: target.pathname + target.search,
      auth: target.username ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}` : undefined,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
      timeout: timeoutMs,
    });
    return new Promise((resolve, reject) => {
      request.on('timeout', () => request.destroy(new Error('the WebSocket upgrade timed out')));
      request.on('error', reject);
      request.on('response', (res) => {
        res.resume();
        reject(new Error(`the WebSocket upgrade was answered ${res.statusCode}`));
      });
      request.on('upgrade', (res, socket, head) => {
        if (res.headers['sec-websocket-accept'] !== expected) {
          socket.destroy();
          return reject(new Error('the WebSocket upgrade was answered with a wrong accept key'));
        }
        socket.setTimeout(0);
        socket.setNoDelay(true);
        client.socket = socket;
        client.lastHeardAt = Date.now();
        socket.on('data', (d: Buffer) => client.receive(d));
        socket.on('error', () => client.end('the connection failed'));
        socket.on('close', () => client.end('the connection closed'));
        if (head.length > 0) client.receive(head);
        resolve(client);
      });
      request.end();
    });
  }

  get isOpen(): boolean {
    return this.socket !== null && !this.closed;
  }

  send(text: string): void {
    this.frame(0x1, Buffer.from(text, 'utf8'));
  }

  /** Sends a ping: a live server answers with a pong, which moves `lastHeardAt` as any frame does. */
  ping(): void {
    this.frame(0x9, Buffer.alloc(0));
  }

  close(): void {
    if (this.closed) return;
    try {
      this.frame(0x8, Buffer.from([0x03, 0xe8]));
    } catch {
      // already gone
    }
    this.end('closed by us');
  }

  private end(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.destroy();
    this.onClose(reason);
  }

  /** A masked frame (a client's frames are always masked). */
  private frame(opcode: number, payload: Buffer): void {
    if (!this.socket || this.closed) throw new Error('the WebSocket is not open');
    const len = payload.length;
    const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    if (len < 126) head[1] = 0x80 | len;
    else if (len < 65536) {
      head[1] = 0x80 | 126;
      head.writeUInt16BE(len, 2);
    } else {
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(BigInt(len), 2);
    }
    const mask = randomBytes(4);
    const body = Buffer.alloc(len);
    for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  private receive(data: Buffer): void {
    this.lastHeardAt = Date.now();
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
    while (!this.closed && this.buf.length >= 2) {
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      let len = b1 & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        const big = this.buf.readBigUInt64BE(2);
        if (big > BigInt(MAX_MESSAGE_BYTES)) return this.end('a message too large');
        len = Number(big);
        at = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      if (masked) at += 4;
      if (len > MAX_MESSAGE_BYTES) return this.end('a message too large');
      if (this.buf.length < at + len) return;
      let payload = this.buf.subarray(at, at + len);
      if (masked) {
        const mask = this.buf.subarray(at - 4, at);
        payload = Buffer.from(payload.map((x, i) => x ^ mask[i & 3]!));
      }
      this.buf = this.buf.subarray(at + len);
      this.handle(b0 & 0x0f, (b0 & 0x80) !== 0, payload);
    }
  }

  private handle(opcode: number, fin: boolean, payload: Buffer): void {
    switch (opcode) {
      case 0x0:
      case 0x1: {
        if (opcode === 0x1) this.fragments = [];
        this.fragments.push(Buffer.from(payload));
        const size = this.fragments.reduce((n, f) => n + f.length, 0);
        if (size > MAX_MESSAGE_BYTES) return this.end('a message too large');
        if (!fin) return;
        const text = Buffer.concat(this.fragments).toString('utf8');
        this.fragments = [];
        this.onMessage(text);
        return;
      }
      case 0x8:
        return this.end('closed by the server');
      case 0x9:
        return this.frame(0xa, payload);
      default:
        // pong, binary: nothing for us
        return;
    }
  }
}
