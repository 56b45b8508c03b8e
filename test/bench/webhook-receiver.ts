/**
 * A webhook receiver in its own process for the webhooks benchmark, as a merchant's server would
 * be: POSTs are answered 200 at once and counted per path; `GET /count?path=P` tells the count.
 * Prints its port on stdout; stops when its parent's stdin closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const counts = new Map<string, number>();
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://receiver');
  if (req.method === 'GET' && url.pathname === '/count') {
    res.end(String(counts.get(url.searchParams.get('path') ?? '') ?? 0));
    return;
  }
  req.resume();
  req.on('end', () => {
    counts.set(url.pathname, (counts.get(url.pathname) ?? 0) + 1);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('received');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
