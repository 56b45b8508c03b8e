/**
 * A TCP forwarder on 127.0.0.1 between the daemon and a node: `close()` makes the node unreachable
 * for the daemon (refused connections, open ones cut) while the node itself goes on, so a test can
 * make blocks the daemon has not seen; `open()` listens again on the same port, and `retarget()`
 * puts another node behind it (a node replaced at the same address).
 */
import net from 'node:net';

export class TcpGate {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private targetPort: number) {}

  /** New connections go to `port`; open ones are left as they are (close first to cut them). */
  retarget(port: number): void {
    this.targetPort = port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    // Stop accepting first: a connection accepted after the sockets are cut would keep close() waiting.
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
