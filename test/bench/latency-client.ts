/**
 * The merchant's server and the payers' pages of the latency benchmark, in a process of their own
 * (so their timing shares no event loop with the daemon). Prints `{"port":N}` first, then one JSON
 * line per arrival: `{"kind":"webhook"|"page","id":invoiceId,"at":ms}` (ms on the shared wall clock,
 * performance.timeOrigin + performance.now()). Reads commands on stdin, one JSON line each:
 * `{"watch":invoiceId,"base":"http://host/pay/ID","ip":"10.0.0.1","sse":bool}` opens a page that
 * polls its status every POLL_MS as the page's script does (and with `sse`, also listens to its
 * event stream, as the page's EventSource; it then polls every 30 s, as the page does once events
 * arrive). `stay` keeps a page open whatever it shows (an idle page). Stops when stdin closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The page script's status poll (src/checkout/page-assets.ts): every 4 s, every 30 s once events arrive. */
const POLL_MS = 4000;
const POLL_HEARD_MS = 30_000;

const now = (): number => performance.timeOrigin + performance.now();
const out = (o: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(o) + '\n');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const timers = new Set<NodeJS.Timeout>();
const streams = new Set<http.ClientRequest>();

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('received');
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; data?: { invoice?: { id?: string } } };
      if (body.type === 'invoice.paid' && body.data?.invoice?.id) out({ kind: 'webhook', id: body.data.invoice.id, at });
    } catch {
      // not a webhook of ours
    }
  });
});

function get(url: string, ip: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { accept: 'application/json', 'x-forwarded-for': ip } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

function watch(cmd: { watch: string; base: string; ip: string; sse?: boolean; stay?: boolean }): void {
  let done = false;
  let heard = false;
  const paid = (via: string): void => {
    if (done || cmd.stay) return;
    done = true;
    out({ kind: 'page', id: cmd.watch, at: now(), via });
  };
  const poll = (): void => {
    if (done) return;
    get(`${cmd.base}/status`, cmd.ip).then(
      (text) => {
        try {
          if ((JSON.parse(text) as { status?: string }).status === 'paid') return paid('poll');
        } catch {
          // a refusal: poll again
        }
        schedule();
      },
      () => schedule(),
    );
  };
  const schedule = (): void => {
    if (done) return;
    const t = setTimeout(
      () => {
        timers.delete(t);
        poll();
      },
      heard ? POLL_HEARD_MS : POLL_MS,
    );
    timers.add(t);
  };
  schedule();
  if (cmd.sse) {
    const req = http.get(`${cmd.base}/events`, { headers: { accept: 'text/event-stream', 'x-forwarded-for': cmd.ip } }, (res) => {
      if (res.statusCode !== 200) return void res.resume();
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (c: string) => {
        buf += c;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (data) heard = true;
          try {
            if (data && (JSON.parse(data) as { status?: string }).status === 'paid') paid('sse');
          } catch {
            // not a view
          }
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    streams.add(req);
  }
}

server.listen(0, '127.0.0.1', () => out({ port: (server.address() as AddressInfo).port }));
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c: string) => {
  pending += c;
  for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
    const line = pending.slice(0, i);
    pending = pending.slice(i + 1);
    if (line.trim()) watch(JSON.parse(line) as { watch: string; base: string; ip: string; sse?: boolean; stay?: boolean });
  }
});
process.stdin.on('end', () => {
  for (const t of timers) clearTimeout(t);
  for (const s of streams) s.destroy();
  process.exit(0);
});
