/**
 * A Bitcoin payout test as a merchant sees it: a real bcoin regtest node, the real daemon watching
 * it and running its payout worker, a verified merchant whose key may withdraw (its security
 * changes a day old, so payouts are not sent to review), funded by invoices paid on the node.
 */
import { randomBytes } from 'node:crypto';
import { address as baddress, type Transaction } from 'bitcoinjs-lib';
import type { SensitiveLimits } from '../../src/auth/sensitive-limiter';
import { btcNetwork } from '../../src/chains/btc/derive';
import { EventEntity } from '../../src/db/entities/events';
import { placeholder, rawQuery } from '../../src/db/raw';
import { Amount } from '../../src/shared/amount';
import type { BcoinNode } from '../../src/dev/bcoin-node';
import type { DaemonOptions } from '../../src/daemon/main';
import type { ChainConfig } from '../../src/config/schema';
import type { ChainReader } from '../../src/chains/types';
import { AccountEntity, SecurityLogEntity } from '../../src/db/entities/team';
import { WithdrawalEntity } from '../../src/db/entities/withdrawals';
import { spendableCoins } from '../../src/chains/btc/payouts/coin-store';
import { verifyLedger } from '../../src/ledger/verify';
import { startBcoin, sats } from './bcoin';
import { startBtcRpcProxy, type BtcRpcProxy } from './btc-rpc-proxy';
import { ledgerReconcile, merchantWithKey, OtpSource, startTestDaemon, type TestDaemon } from './daemon';
import type { Daemon } from '../../src/daemon/main';
import type { Logger } from '../../src/shared/logger';
import { ApiClient } from './invoice-fixture';
import { BTC, btcChain, CONFIRMATIONS, until } from '../integration/chains/btc/btc-fixture';

export { BTC, CONFIRMATIONS, until };

/** A fresh P2WPKH address of bcoin's regtest that nobody in the tests owns. */
export const elsewhere = (): string => baddress.toBech32(randomBytes(20), 0, 'rb');
/** A fresh P2TR (witness v1) address: the API accepts it, bcoin 1.0.2's policy refuses to relay a payment to it. */
export const taproot = (): string => baddress.toBech32(randomBytes(32), 1, 'rb');

/** One merchant of the fixture's daemon, as its back end and its owner see it. */
export interface PayoutMerchant {
  /** The merchant's key with read, create_invoice and withdraw. */
  api: ApiClient;
  accountId: string;
  /** The owner's email and two-factor codes: the CLI acts as them. */
  owner: string;
  ownerOtp: OtpSource;
  /** Pays one invoice per amount (BTC), mines them deep, waits until the account can spend them. */
  fund(...amounts: string[]): Promise<void>;
  withdraw(body: Record<string, unknown>): Promise<any>;
  get(id: string): Promise<any>;
  /** Polls the withdrawal until `ok` holds. */
  waitWithdrawal(id: string, ok: (w: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  balance(): Promise<{ available: string; hold: string }>;
  /**
   * Makes the account's pending withdrawals due now, as if created `seconds` ago (a batch window
   * that would otherwise depend on how fast the test creates them).
   */
  backdatePending(seconds: number): Promise<void>;
}

export interface PayoutFixture extends PayoutMerchant {
  node: BcoinNode;
  /** What the daemon's node answers, between the daemon and bcoin: Bitcoin Core's refusals, a hidden transaction. */
  proxy: BtcRpcProxy;
  td: TestDaemon;
  chainId: string;
  /** Another merchant of the same daemon, paying out of its own coins. */
  anotherMerchant(): Promise<PayoutMerchant>;
  /** Mines a block at a time until `ok` holds. */
  mineUntil(ok: () => Promise<boolean>, what: string): Promise<void>;
  ledgerClean(): Promise<boolean>;
  stop(): Promise<void>;
}

export interface PayoutFixtureOptions {
  payouts?: Record<string, unknown>;
  watch?: Record<string, unknown>;
  /** The daemon's adapter of the chain instead of the real one (a stand-in in front of bcoin). */
  adapter?: (chain: ChainConfig) => ChainReader;
  /** bcoin with mainnet's standardness policy: it refuses to relay a payment to a witness v1 (taproot) address. */
  standard?: boolean;
  /** More of the daemon's config (a PostgreSQL `database`, say). */
  overrides?: Record<string, unknown>;
  /** The daemon's logger and sensitive-operation limits (a test that makes many withdrawals). */
  daemon?: { logger?: Logger; sensitiveLimits?: SensitiveLimits; signer?: NonNullable<Parameters<typeof startTestDaemon>[1]>['signer'] };
  /** More of the chain's entry (its `payouts`, say). */
  chain?: Record<string, unknown>;
}

export async function startPayoutFixture(opts: PayoutFixtureOptions = {}): Promise<PayoutFixture> {
  const node = await startBcoin({ requireStandard: opts.standard });
  const proxy = await startBtcRpcProxy(node.rpcUrl);
  const adapterFor: DaemonOptions['adapterFor'] | undefined = opts.adapter;
  const td = await startTestDaemon(
    {
      chains: [{ ...btcChain(node, opts.watch, proxy), ...opts.chain }],
      payouts: { batch_window_seconds: 0, replace_after_blocks: 3, ...opts.payouts },
      ...opts.overrides,
    },
    { adapterFor, ...opts.daemon },
  );
  const chainId = td.daemon.config.chains[0]!.id;
  const store = td.daemon.store;
  const anotherMerchant = async () => merchantOf(node, td, chainId, await payoutMerchant(td.daemon));
  const f: PayoutFixture = {
    ...(await anotherMerchant()),
    node,
    proxy,
    td,
    chainId,
    anotherMerchant,
    async mineUntil(ok, what) {
      const deadline = Date.now() + 60_000;
      while (!(await ok())) {
        if (Date.now() > deadline) throw new Error(`timed out mining until ${what}`);
        await node.mine(1);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    ledgerClean: async () => (await verifyLedger(store.read)).ok,
    async stop() {
      await td.stop();
      await proxy.close();
      await node.kill();
    },
  };
  return f;
}

function merchantOf(node: BcoinNode, td: TestDaemon, chainId: string, { m, otp, key }: Awaited<ReturnType<typeof payoutMerchant>>): PayoutMerchant {
  const store = td.daemon.store;
  const api = new ApiClient(td.url, key.key_id, key.secret);
  const get = async (id: string) => {
    const res = await api.get(`/v1/withdrawals/${id}`);
    if (res.status !== 200) throw new Error(`GET withdrawal: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    api,
    accountId: m.accountId,
    owner: m.owner,
    ownerOtp: otp,
    async fund(...amounts) {
      const before = (await spendableCoins(store.read, chainId, m.accountId)).length;
      for (const amount of amounts) {
        const inv = await api.post('/v1/invoices', { amount, currency: 'BTC', coin_id: BTC });
        if (inv.status !== 201) throw new Error(`invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
        await node.pay([{ address: inv.body.address, value: sats(amount) }]);
      }
      await node.mine(CONFIRMATIONS);
      await until(async () => (await spendableCoins(store.read, chainId, m.accountId)).length === before + amounts.length, 'the paid invoices spendable');
    },
    async withdraw(body) {
      const res = await api.post('/v1/withdrawals', body);
      if (res.status !== 201) throw new Error(`withdraw: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    get,
    async waitWithdrawal(id, ok, what, timeoutMs = 30_000) {
      let last: any;
      await until(
        async () => ok((last = await get(id))),
        () => `${what}: ${JSON.stringify(last)}`,
        timeoutMs,
      );
      return last;
    },
    async balance() {
      const res = await api.get('/v1/balances');
      const b = res.body.items.find((i: { coin_id: string }) => i.coin_id === BTC);
      return { available: b?.available ?? '0', hold: b?.hold ?? '0' };
    },
    async backdatePending(seconds) {
      const at = new Date(Date.now() - seconds * 1000).toISOString();
      await store.write((em) => em.update(WithdrawalEntity, { account_id: m.accountId, status: 'pending' }, { created_at: at }));
    },
  };
}

/** The withdrawals' rows straight from the store (ids to statuses). */
export async function statuses(f: PayoutFixture): Promise<Record<string, string>> {
  const rows = await f.td.daemon.store.read.find(WithdrawalEntity, { where: { account_id: f.accountId } });
  return Object.fromEntries(rows.map((r) => [r.id, r.status]));
}

/**
 * A merchant that may pay out at once: a verified account, a key with `withdraw` (granted by its
 * owner's code) and its security log backdated past the 24 h review window.
 */
export async function payoutMerchant(daemon: Daemon, clock: { now(): Date } = { now: () => new Date() }) {
  const m = await merchantWithKey(daemon, { permissions: ['read', 'create_invoice'] });
  const otp = new OtpSource(m.ownerTotp, clock);
  const { key } = await daemon.keys.create(
    m.accountId,
    { email: m.owner, otp: otp.next() },
    { name: 'payouts', permissions: ['read', 'create_invoice', 'create_address', 'withdraw'], ip_whitelist: [], rate_limit_per_minute: 6000, test: false },
  );
  await daemon.store.write(async (em) => {
    await em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() });
    await em.update(AccountEntity, { id: m.accountId }, { verified: true });
  });
  daemon.team.changedOutside();
  return { m, otp, key };
}

/** What `tx` pays `address`, satoshi (0n when nothing). */
export function paid(f: PayoutFixture, tx: Transaction, address: string): bigint {
  const script = baddress.toOutputScript(address, btcNetwork(f.td.daemon.config.chains[0]!));
  return tx.outs.filter((o) => Buffer.from(o.script).equals(Buffer.from(script))).reduce((s, o) => s + BigInt(o.value), 0n);
}

/** The events of a withdrawal, oldest first (each checked to carry that withdrawal). */
export async function events(f: PayoutFixture, withdrawalId: string): Promise<string[]> {
  const rows = await f.td.daemon.store.read.find(EventEntity, { where: { object_id: withdrawalId }, order: { seq: 'ASC' } });
  for (const r of rows)
    if ((JSON.parse(r.body) as { data: { withdrawal: { id: string } } }).data.withdrawal.id !== withdrawalId)
      throw new Error('an event without its withdrawal');
  return rows.map((r) => r.type);
}

/** The txids of every candidate of the payout that pays a withdrawal, oldest first. */
export async function candidates(f: PayoutFixture, withdrawalId: string): Promise<string[]> {
  const em = f.td.daemon.store.read;
  const rows = await rawQuery<{ txid: string }>(
    em,
    `SELECT k.txid FROM chain_payout_candidates k JOIN chain_payout_legs l ON l.payout_id = k.payout_id WHERE l.withdrawal_id = ${placeholder(em, 1)} ORDER BY k.seq`,
    [withdrawalId],
  );
  return rows.map((r) => r.txid);
}

/** `coinkeep ledger reconcile --json`: what the books say the wallet holds against what the node shows. */
export const reconcile = (f: PayoutFixture) => ledgerReconcile(f.td);

export const minus = (a: string, ...b: string[]): string => b.reduce((x, y) => x.minus(Amount.of(y)), Amount.of(a)).toString();
