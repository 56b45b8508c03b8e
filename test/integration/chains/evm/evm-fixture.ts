/**
 * An EVM invoice test as a merchant sees it: a real anvil node with the test USDT, the real daemon
 * watching it (polling every 50 ms, 3 confirmations), a merchant with a signed API client.
 */
import { coinId } from '../../../../src/catalog/coins';
import type { AnvilNode } from '../../../../src/dev/anvil-node';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { EventEntity } from '../../../../src/db/entities/events';
import { AccountEntity, type AccountRow } from '../../../../src/db/entities/team';
import { verifyLedger } from '../../../../src/ledger/verify';
import type { Clock } from '../../../../src/shared/clock';
import { payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { FIXED_RATES, merchantWithKey, startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { ApiClient } from '../../../helpers/invoice-fixture';

export const CONFIRMATIONS = 3;
export const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 1000 };
export const RATES = { sources: [{ kind: 'fixed', rates: { ...FIXED_RATES, USDT: { USD: '1', EUR: '0.93' } } }] };

export type Ticker = 'ETH' | 'USDT';

export interface EvmFixture {
  node: AnvilNode;
  usdt: string;
  td: TestDaemon;
  api: ApiClient;
  accountId: string;
  coin: Record<Ticker, string>;
  createInvoice(ticker: Ticker, amount: string, extra?: Record<string, unknown>): Promise<any>;
  /** A payment in a block of its own, 1 confirmation; returns the txid. */
  pay(to: string, ticker: Ticker, amount: string): Promise<string>;
  invoice(id: string): Promise<any>;
  /** Polls the invoice until `ok` holds; fails with the last answer at the deadline. */
  waitInvoice(id: string, ok: (inv: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  transactions(invoiceId: string): Promise<any[]>;
  available(ticker: Ticker): Promise<string>;
  setAccount(patch: Partial<AccountRow>): Promise<void>;
  events(type: string): Promise<Array<{ type: string; data: any }>>;
  ledgerClean(): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startEvmFixture(opts: { clock?: Clock; watch?: Record<string, unknown> } = {}): Promise<EvmFixture> {
  const { node, usdt } = await startAnvil();
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: { ...FAST_WATCH, ...opts.watch } });
  const td = await startTestDaemon({ chains: [chain], rates: RATES }, { clock: opts.clock });
  const m = await merchantWithKey(td.daemon);
  const api = new ApiClient(td.url, m.keyId, m.secret, opts.clock);
  const coin = { ETH: coinId('ethereum', 'native'), USDT: coinId('ethereum', usdt) };
  const decimals = { ETH: 18, USDT: 6 };
  const store = td.daemon.store;
  const invoice = async (id: string) => {
    const res = await api.get(`/v1/invoices/${id}`);
    if (res.status !== 200) throw new Error(`GET invoice: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    node,
    usdt,
    td,
    api,
    accountId: m.accountId,
    coin,
    async createInvoice(ticker, amount, extra = {}) {
      const res = await api.post('/v1/invoices', { amount, currency: ticker, coin_id: coin[ticker], ...extra });
      if (res.status !== 201) throw new Error(`create invoice: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    pay: (to, ticker, amount) => payFromAnvil(node, ticker === 'ETH' ? 'native' : usdt, to, amount, decimals[ticker]),
    invoice,
    async waitInvoice(id, ok, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const inv = await invoice(id);
        if (ok(inv)) return inv;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(inv)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async transactions(invoiceId) {
      const res = await api.get(`/v1/transactions?invoice_id=${invoiceId}`);
      if (res.status !== 200) throw new Error(`GET transactions: ${res.status}`);
      return res.body.items;
    },
    async available(ticker) {
      const res = await api.get('/v1/balances');
      const row = (res.body.items as Array<{ coin_id: string; available: string }>).find((b) => b.coin_id === coin[ticker]);
      return row?.available ?? '0';
    },
    setAccount: async (patch) => void (await store.write((em) => em.update(AccountEntity, { id: m.accountId }, patch))),
    async events(type) {
      const rows = await store.read.find(EventEntity, { where: { type }, order: { seq: 'ASC' } });
      return rows.map((r) => ({ type: r.type, data: (JSON.parse(r.body) as { data: unknown }).data }));
    },
    ledgerClean: async () => (await verifyLedger(store.read)).ok,
    async stop() {
      await td.stop();
      await node.kill();
    },
  };
}
