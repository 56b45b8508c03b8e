/**
 * A Bitcoin invoice test as a merchant sees it: a real bcoin regtest node, the real daemon watching
 * it (polling every 50 ms, 2 confirmations), a merchant with a signed API client.
 */
import { coinId } from '../../../../src/catalog/coins';
import { bcoinChainEntry } from '../../../../src/dev/bcoin';
import type { BcoinNode } from '../../../../src/dev/bcoin-node';
import type { Clock } from '../../../../src/shared/clock';
import { startBcoin, sats } from '../../../helpers/bcoin';
import { startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { merchantSide, type MerchantSide } from '../../../helpers/merchant-side';
import { TcpGate } from '../../../helpers/tcp-gate';
import { waitUntil } from '../../../helpers/poll';

export const CONFIRMATIONS = 2;
export const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 10_000 };
export const BTC = coinId('bitcoin', 'native');

/** The chain entry the daemon watches bcoin with, in the config file's shape; through `gate` when given. */
/** The chain's config entry; with `gate` (a TcpGate, or a proxy of the node's RPC) the daemon reaches the node through it. */
export function btcChain(
  node: BcoinNode,
  watch: Record<string, unknown> = {},
  gate?: Pick<TcpGate, 'port'>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const url = new URL(node.rpcUrl);
  if (gate) url.port = String(gate.port);
  return bcoinChainEntry(url.toString(), { confirmations: CONFIRMATIONS, options: { ...FAST_WATCH, ...watch }, ...extra });
}

export interface BtcFixture extends Omit<MerchantSide, 'createInvoice' | 'available'> {
  node: BcoinNode;
  /** With `gate`: the daemon reaches the node only through it. */
  gate: TcpGate | null;
  td: TestDaemon;
  createInvoice(amount: string, extra?: Record<string, unknown>): Promise<any>;
  /** Pays `amounts` (BTC) to `to` in one transaction, one output each; it waits in the mempool. */
  pay(to: string, ...amounts: string[]): Promise<string>;
  /** Polls the invoice until `ok` holds; fails with the last answer at the deadline. */
  waitInvoice(id: string, ok: (inv: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** Waits until the daemon has scanned up to the node's tip. */
  waitScanned(): Promise<void>;
  available(): Promise<string>;
  stop(): Promise<void>;
}

/** Polls `ok` until it holds; fails naming `what` at the deadline (test/helpers/poll.ts). */
export const until = (ok: () => boolean | Promise<boolean>, what: string | (() => string | Promise<string>), timeoutMs = 30_000): Promise<void> =>
  waitUntil(what, ok, timeoutMs);

export async function startBtcFixture(
  opts: {
    clock?: Clock;
    watch?: Record<string, unknown>;
    gate?: boolean;
    chain?: Record<string, unknown>;
    /** With `gate`: the node itself as a second endpoint (`rpc_urls`). */ backupEndpoint?: boolean;
    overrides?: Record<string, unknown>;
  } = {},
): Promise<BtcFixture> {
  const node = await startBcoin();
  const gate = opts.gate ? new TcpGate(node.port) : null;
  await gate?.open();
  const td = await startTestDaemon(
    {
      chains: [btcChain(node, opts.watch, gate ?? undefined, { ...(opts.backupEndpoint ? { rpc_urls: [node.rpcUrl] } : {}), ...opts.chain })],
      ...opts.overrides,
    },
    { clock: opts.clock },
  );
  const side = await merchantSide(td, opts.clock);
  return {
    ...side,
    node,
    gate,
    td,
    createInvoice: (amount, extra = {}) => side.createInvoice({ amount, currency: 'BTC', coin_id: BTC, ...extra }),
    pay: (to, ...amounts) => node.pay(amounts.map((a) => ({ address: to, value: sats(a) }))),
    async waitInvoice(id, ok, what, timeoutMs) {
      let last: any;
      await until(
        async () => ok((last = await side.invoice(id))),
        () => `${what}: ${JSON.stringify(last)}`,
        timeoutMs,
      );
      return last;
    },
    async waitScanned() {
      const tip = await node.height();
      await until(() => td.daemon.chains.status()[0]!.scanned_height === tip, `scanned height ${tip}`);
    },
    available: () => side.available(BTC),
    async stop() {
      await td.stop();
      await gate?.close();
      await node.kill();
    },
  };
}
