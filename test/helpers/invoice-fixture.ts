import { coinId } from '../../src/catalog/coins';
import { request } from './http';
import { EventEntity } from '../../src/db/entities/events';
import { InvoiceEntity, TransactionEntity } from '../../src/db/entities/money';
import { AccountEntity, type AccountRow } from '../../src/db/entities/team';
import { AddressEntity } from '../../src/db/entities/chain';
import type { Clock } from '../../src/shared/clock';
import { merchantWithKey, startTestDaemon, type TestDaemon } from './daemon';
import { FakeAllocator } from './fake-allocator';
import { FakeChainSource } from './fake-chain';
import { IdleChain } from './idle-chain';
import { checkAgainstOpenApi } from './openapi-check';
import { signRequest } from './signer';

export const USDT_ETH_CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
export const USDT_TRON_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
export const DAI_CONTRACT = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512';

/**
 * Chains for invoice tests: no node is contacted (the fake chain source drives payments); each is
 * watched on an idle node whose tip never moves, which is no stall.
 */
const IDLE = { stall_seconds: 0 };

export const TEST_CHAINS = [
  { id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:9', confirmations: 2, options: IDLE },
  {
    id: 'ethereum',
    kind: 'evm',
    chain_id: 31337,
    rpc_url: 'http://127.0.0.1:9',
    confirmations: 3,
    options: IDLE,
    tokens: [
      { ticker: 'USDT', contract: USDT_ETH_CONTRACT, decimals: 6 },
      { ticker: 'DAI', contract: DAI_CONTRACT, decimals: 18, invoice_enabled: false },
    ],
  },
  {
    id: 'tron',
    kind: 'tron',
    full_node_url: 'http://127.0.0.1:9',
    confirmations: 1,
    options: IDLE,
    tokens: [{ ticker: 'USDT', contract: USDT_TRON_CONTRACT, decimals: 6 }],
  },
];

export const COINS = {
  BTC: coinId('bitcoin', 'native'),
  ETH: coinId('ethereum', 'native'),
  USDT_ETH: coinId('ethereum', USDT_ETH_CONTRACT),
  DAI: coinId('ethereum', DAI_CONTRACT),
  TRX: coinId('tron', 'native'),
  USDT_TRON: coinId('tron', USDT_TRON_CONTRACT),
};
const CHAIN_OF: Record<string, string> = {
  [COINS.BTC]: 'bitcoin',
  [COINS.ETH]: 'ethereum',
  [COINS.USDT_ETH]: 'ethereum',
  [COINS.DAI]: 'ethereum',
  [COINS.TRX]: 'tron',
  [COINS.USDT_TRON]: 'tron',
};

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * The last second each (key, request) was signed in, across every client of the process: two
 * clients of one key sending the same request in one second would share a signature (a replay).
 */
const lastSigned = new Map<string, number>();

/** A merchant back end: signs every request from SPEC (test/helpers/signer.ts). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly keyId: string,
    readonly secret: string,
    private readonly clock: Clock = { now: () => new Date() },
  ) {}

  async call<T = any>(method: string, target: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const raw = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    // Identical requests in the same second share a signature (SPEC: a replay); sign them a second later.
    const k = `${this.keyId} ${method} ${target} ${raw ?? ''}`;
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const ts = Math.max(now, (lastSigned.get(k) ?? 0) + 1);
    lastSigned.set(k, ts);
    // A poll repeating one request many times a second would sign ever further ahead and leave the
    // daemon's 300 s window: once 30 s ahead, each repeat waits a second, so the stamps keep pace.
    if (ts - now > 30) await new Promise((r) => setTimeout(r, 1000));
    const signed = signRequest({ keyId: this.keyId, secret: this.secret, method, target, body: raw, timestamp: ts });
    // A connection per request, as a merchant's client that keeps none (see request()).
    const res = await request(this.baseUrl + target, { method, headers: { ...signed, ...headers }, body: raw });
    const text = res.text;
    checkAgainstOpenApi(method, target, res.status, res.headers.get('content-type') ?? undefined, text);
    return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
  }
  get<T = any>(target: string) {
    return this.call<T>('GET', target);
  }
  post<T = any>(target: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('POST', target, body, headers);
  }
}

export interface InvoiceFixture {
  td: TestDaemon;
  api: ApiClient;
  accountId: string;
  chain(chainId: string): FakeChainSource;
  /** Account settings the tests need (PRODUCT §4), written straight to the store. */
  setAccount(patch: Partial<AccountRow>): Promise<void>;
  counts(): Promise<{ invoices: number; addresses: number; events: number; transactions: number }>;
  events(type?: string): Promise<Array<{ type: string; data: any; object_id: string | null }>>;
  stop(): Promise<void>;
}

const CONFIRMATIONS: Record<string, number> = { bitcoin: 2, ethereum: 3, tron: 1 };

export async function startInvoiceFixture(
  opts: { clock?: Clock; overrides?: Record<string, unknown>; permissions?: string[]; rateLimit?: number; realWallet?: boolean } = {},
): Promise<InvoiceFixture> {
  // The fake allocator keeps addresses unique across fixtures; `realWallet` derives them from the test seed.
  const allocator = opts.realWallet ? undefined : new FakeAllocator((id) => CHAIN_OF[id] ?? 'unknown');
  // Every chain is an idle node (their URLs lead nowhere, which would put the coins in maintenance):
  // the tests drive payments with the fake chain source.
  const td = await startTestDaemon(
    { chains: TEST_CHAINS, ...opts.overrides },
    { clock: opts.clock, allocator, adapterFor: (chain) => new IdleChain(chain.id) },
  );
  const m = await merchantWithKey(td.daemon, { permissions: opts.permissions, rateLimit: opts.rateLimit });
  const clock = opts.clock ?? { now: () => new Date() };
  const api = new ApiClient(td.url, m.keyId, m.secret, clock);
  const store = td.daemon.store;
  const chains = new Map<string, FakeChainSource>();
  return {
    td,
    api,
    accountId: m.accountId,
    chain: (chainId) => {
      let c = chains.get(chainId);
      if (!c) chains.set(chainId, (c = new FakeChainSource(store, td.daemon.recorder, { chainId, confirmations: CONFIRMATIONS[chainId] ?? 1 })));
      return c;
    },
    // Written straight to the database: the daemon's caches of accounts are told, as the service would.
    setAccount: async (patch) => {
      await store.write((em) => em.update(AccountEntity, { id: m.accountId }, patch));
      td.daemon.team.changedOutside();
    },
    counts: async () => ({
      invoices: await store.read.count(InvoiceEntity),
      addresses: await store.read.count(AddressEntity),
      events: await store.read.count(EventEntity),
      transactions: await store.read.count(TransactionEntity),
    }),
    events: async (type) => {
      const rows = await store.read.find(EventEntity, { where: type ? { type } : {}, order: { seq: 'ASC' } });
      return rows.map((r) => ({ type: r.type, object_id: r.object_id, data: (JSON.parse(r.body) as { data: unknown }).data }));
    },
    stop: () => td.stop(),
  };
}
