/**
 * A Bitcoin invoice test as a merchant sees it: a real bcoin regtest node, the real daemon watching
 * it (polling every 50 ms, 2 confirmations), a merchant with a signed API client.
 */
import { coinId } from '../../../../src/catalog/coins';
import { bcoinChainEntry } from '../../../../src/dev/bcoin';
import type { BcoinNode } from '../../../../src/dev/bcoin-node';
import { EventEntity } from '../../../../src/db/entities/events';
import { AccountEntity, type AccountRow } from '../../../../src/db/entities/team';
import { verifyLedger } from '../../../../src/ledger/verify';
import type { Clock } from '../../../../src/shared/clock';
import { SignedClient } from '../../../helpers/api-client';
import { startBcoin, sats } from '../../../helpers/bcoin';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { TcpGate } from '../../../helpers/tcp-gate';

export const CONFIRMATIONS = 2;
export const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 10_000 };
export const BTC = coinId('bitcoin', 'native');

/** The chain entry the daemon watches bcoin with, in the config file's shape; through `gate` when given. */
export function btcChain(node: BcoinNode, watch: Record<string, unknown> = {}, gate?: TcpGate): Record<string, unknown> {
  const url = new URL(node.rpcUrl);
  if (gate) url.port = String(gate.port);
  return bcoinChainEntry(url.toString(), { confirmations: CONFIRMATIONS, options: { ...FAST_WATCH, ...watch } });
}

export interface BtcFixture {
  node: BcoinNode;
  /** With `gate`: the daemon reaches the node only through it. */
  gate: TcpGate | null;
  td: TestDaemon;
  accountId: string;
  get(target: string): Promise<{ status: number; body: any }>;
  post(target: string, body: unknown): Promise<{ status: number; body: any }>;
  createInvoice(amount: string, extra?: Record<string, unknown>): Promise<any>;
  /** Pays `amounts` (BTC) to `to` in one transaction, one output each; it waits in the mempool. */
  pay(to: string, ...amounts: string[]): Promise<string>;
  invoice(id: string): Promise<any>;
  /** Polls the invoice until `ok` holds; fails with the last answer at the deadline. */
  waitInvoice(id: string, ok: (inv: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** Waits until the daemon has scanned up to the node's tip. */
  waitScanned(): Promise<void>;
  transactions(query: string): Promise<any[]>;
  available(): Promise<string>;
  setAccount(patch: Partial<AccountRow>): Promise<void>;
  events(type: string): Promise<Array<{ type: string; data: any; object_id: string | null }>>;
  ledgerClean(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Polls `ok` until it holds; fails naming `what` at the deadline. */
export async function until(ok: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function startBtcFixture(opts: { clock?: Clock; watch?: Record<string, unknown>; gate?: boolean } = {}): Promise<BtcFixture> {
  const node = await startBcoin();
  const gate = opts.gate ? new TcpGate(node.port) : null;
  await gate?.open();
  const td = await startTestDaemon({ chains: [btcChain(node, opts.watch, gate ?? undefined)] }, { clock: opts.clock });
  const m = await merchantWithKey(td.daemon);
  const client = new SignedClient(td.url, m.keyId, m.secret, opts.clock);
  const store = td.daemon.store;
  const get = async (target: string) => {
    const res = await client.get(target);
    return { status: res.status, body: res.json };
  };
  const post = async (target: string, body: unknown) => {
    const res = await client.post(target, body, { headers: { 'Content-Type': 'application/json' } });
    return { status: res.status, body: res.json };
  };
  const invoice = async (id: string) => {
    const res = await get(`/v1/invoices/${id}`);
    if (res.status !== 200) throw new Error(`GET invoice: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    node,
    gate,
    td,
    accountId: m.accountId,
    get,
    post,
    async createInvoice(amount, extra = {}) {
      const res = await post('/v1/invoices', { amount, currency: 'BTC', coin_id: BTC, ...extra });
      if (res.status !== 201) throw new Error(`create invoice: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    pay: (to, ...amounts) => node.pay(amounts.map((a) => ({ address: to, value: sats(a) }))),
    invoice,
    async waitInvoice(id, ok, what, timeoutMs) {
      let last: any;
      await until(async () => ok((last = await invoice(id))), () => `${what}: ${JSON.stringify(last)}`, timeoutMs);
      return last;
    },
    async waitScanned() {
      const tip = await node.height();
      await until(() => td.daemon.chains.status()[0]!.scanned_height === tip, `scanned height ${tip}`);
    },
    async transactions(query) {
      const res = await get(`/v1/transactions?${query}`);
      if (res.status !== 200) throw new Error(`GET transactions: ${res.status}`);
      return res.body.items;
    },
    async available() {
      const res = await get('/v1/balances');
      const row = (res.body.items as Array<{ coin_id: string; available: string }>).find((b) => b.coin_id === BTC);
      return row?.available ?? '0';
    },
    setAccount: async (patch) => void (await store.write((em) => em.update(AccountEntity, { id: m.accountId }, patch))),
    async events(type) {
      const rows = await store.read.find(EventEntity, { where: { type }, order: { seq: 'ASC' } });
      return rows.map((r) => ({ type: r.type, data: (JSON.parse(r.body) as { data: unknown }).data, object_id: r.object_id }));
    },
    ledgerClean: async () => (await verifyLedger(store.read)).ok,
    async stop() {
      await td.stop();
      await gate?.close();
      await node.kill();
    },
  };
}
