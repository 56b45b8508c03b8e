/**
 * A payment test's merchant side, for every chain family: a merchant of the test daemon with a
 * signed API client, the reads a merchant makes, and the few store-level checks (events in the
 * outbox, the ledger's sums) the chain tests assert.
 */
import { EventEntity } from '../../src/db/entities/events';
import { AccountEntity, type AccountRow } from '../../src/db/entities/team';
import { verifyLedger } from '../../src/ledger/verify';
import type { Clock } from '../../src/shared/clock';
import { SignedClient } from './api-client';
import { merchantWithKey, type TestDaemon } from './daemon';

/** Signed calls answering `{status, body}`; every call signs with a timestamp of its own (polling is fine). */
export interface MerchantApi {
  get(target: string): Promise<{ status: number; body: any }>;
  post(target: string, body: unknown): Promise<{ status: number; body: any }>;
}

export interface MerchantSide {
  accountId: string;
  /** The account's owner (email and TOTP secret), for keys the test adds. */
  owner: { email: string; totp: string };
  /** The merchant's key, for requests the client does not make (exports: raw bytes). */
  key: { keyId: string; secret: string };
  api: MerchantApi;
  /** POST /v1/invoices with `body`; anything but 201 throws. */
  createInvoice(body: Record<string, unknown>): Promise<any>;
  invoice(id: string): Promise<any>;
  /** GET /v1/transactions?`query`: the items. */
  transactions(query: string): Promise<any[]>;
  /** The available balance of a coin, '0' when it has none. */
  available(coinId: string): Promise<string>;
  setAccount(patch: Partial<AccountRow>): Promise<void>;
  /** The outbox's events of a type, oldest first. */
  events(type: string): Promise<Array<{ type: string; data: any; object_id: string | null }>>;
  ledgerClean(): Promise<boolean>;
}

export async function merchantSide(td: TestDaemon, clock?: Clock): Promise<MerchantSide> {
  const m = await merchantWithKey(td.daemon);
  const client = new SignedClient(td.url, m.keyId, m.secret, clock);
  const store = td.daemon.store;
  const api: MerchantApi = {
    get: async (target) => {
      const res = await client.get(target);
      return { status: res.status, body: res.json };
    },
    post: async (target, body) => {
      const res = await client.post(target, body, { headers: { 'Content-Type': 'application/json' } });
      return { status: res.status, body: res.json };
    },
  };
  const read = async (target: string, what: string) => {
    const res = await api.get(target);
    if (res.status !== 200) throw new Error(`GET ${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    accountId: m.accountId,
    owner: { email: m.owner, totp: m.ownerTotp },
    key: { keyId: m.keyId, secret: m.secret },
    api,
    async createInvoice(body) {
      const res = await api.post('/v1/invoices', body);
      if (res.status !== 201) throw new Error(`create invoice: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    invoice: (id) => read(`/v1/invoices/${id}`, 'invoice'),
    transactions: async (query) => (await read(`/v1/transactions?${query}`, 'transactions')).items,
    async available(coinId) {
      const { items } = (await read('/v1/balances', 'balances')) as { items: Array<{ coin_id: string; available: string }> };
      return items.find((b) => b.coin_id === coinId)?.available ?? '0';
    },
    // Written straight to the database: the daemon's caches of accounts are told, as the service would.
    setAccount: async (patch) => {
      await store.write((em) => em.update(AccountEntity, { id: m.accountId }, patch));
      td.daemon.team.changedOutside();
    },
    async events(type) {
      const rows = await store.read.find(EventEntity, { where: { type }, order: { seq: 'ASC' } });
      return rows.map((r) => ({ type: r.type, data: (JSON.parse(r.body) as { data: unknown }).data, object_id: r.object_id }));
    },
    ledgerClean: async () => (await verifyLedger(store.read)).ok,
  };
}
