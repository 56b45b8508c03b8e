/**
 * A nameserver for tests on 127.0.0.1 (UDP): it answers A and AAAA queries from a table, or, with
 * `swallow`, receives every query and never answers (a domain whose nameserver hangs). Written
 * from RFC 1035 §4: one question in, its answers out; a name not in the table is NXDOMAIN, a name
 * without addresses of the type asked is an empty answer.
 */
import dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import { isIPv4, isIPv6 } from 'node:net';

const TYPE_A = 1;
const TYPE_AAAA = 28;

export interface DnsQuery {
  name: string;
  type: number;
}

export class TestNameserver extends EventEmitter {
  readonly queries: DnsQuery[] = [];
  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
    private readonly table: Record<string, string[]> | 'swallow',
  ) {
    super();
  }

  static async start(table: Record<string, string[]> | 'swallow'): Promise<TestNameserver> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const server = new TestNameserver(socket, socket.address().port, table);
    socket.on('message', (msg, from) => server.handle(msg, from));
    return server;
  }

  /** `127.0.0.1:PORT`, as `webhooks.dns.servers` takes it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Resolves once queries for `count` different names have come in. */
  async waitForNames(count: number, timeoutMs: number): Promise<void> {
    const seen = () => new Set(this.queries.map((q) => q.name)).size >= count;
    if (seen()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('query', check);
        reject(new Error(`no queries for ${count} names within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if (!seen()) return;
        clearTimeout(timer);
        this.off('query', check);
        resolve();
      };
      this.on('query', check);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private handle(msg: Buffer, from: dgram.RemoteInfo): void {
    const q = parseQuestion(msg);
    if (!q) return;
    this.queries.push({ name: q.name, type: q.type });
    this.emit('query', q);
    if (this.table === 'swallow') return;
    const known = this.table[q.name];
    const addresses = (known ?? []).filter((a) => (q.type === TYPE_A ? isIPv4(a) : q.type === TYPE_AAAA ? isIPv6(a) : false));
    this.socket.send(answer(msg, q.end, known === undefined ? 3 : 0, addresses, q.type), from.port, from.address);
  }
}

function parseQuestion(msg: Buffer): { name: string; type: number; end: number } | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length && msg[at] !== 0) {
    const len = msg[at]!;
    labels.push(
      msg
        .subarray(at + 1, at + 1 + len)
        .toString('ascii')
        .toLowerCase(),
    );
    at += 1 + len;
  }
  if (at + 5 > msg.length) return null;
  return { name: labels.join('.'), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

/** The query's header and question, then one record per address (the name as a pointer to the question's). */
function answer(query: Buffer, questionEnd: number, rcode: number, addresses: string[], type: number): Buffer {
  const header = Buffer.from(query.subarray(0, questionEnd));
  header.writeUInt16BE(0x8180 | rcode, 2);
  header.writeUInt16BE(addresses.length, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  const records = addresses.map((a) => {
    const data = type === TYPE_A ? Buffer.from(a.split('.').map(Number)) : ipv6Bytes(a);
    const r = Buffer.alloc(12);
    r.writeUInt16BE(0xc00c, 0);
    r.writeUInt16BE(type, 2);
    r.writeUInt16BE(1, 4);
    r.writeUInt32BE(60, 6);
    r.writeUInt16BE(data.length, 10);
    return Buffer.concat([r, data]);
  });
  return Buffer.concat([header, ...records]);
}

function ipv6Bytes(a: string): Buffer {
  const [head, tail] = a.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}
