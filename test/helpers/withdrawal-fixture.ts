import type { SensitiveLimits } from '../../src/auth/sensitive-limiter';
import { BtcAdapter } from '../../src/chains/btc/btc-adapter';
import type { BlockHeader, BlockRef, FeeQuote, NormalisedBlock, NormalisedTransfer } from '../../src/chains/types';
import type { ChainConfig } from '../../src/config/schema';
import { TransactionEntity } from '../../src/db/entities/money';
import { AccountEntity, SecurityLogEntity, type AccountRow } from '../../src/db/entities/team';
import { WithdrawalEntity } from '../../src/db/entities/withdrawals';
import type { Clock } from '../../src/shared/clock';
import { merchantWithKey, OtpSource, startTestDaemon, type TestDaemon } from './daemon';
import { IdleChain } from './idle-chain';
import { ApiClient, COINS, TEST_CHAINS } from './invoice-fixture';
import { recordTransaction } from './money-fixtures';

/**
 * A Bitcoin regtest node that never grows and quotes a fixed fee rate: the real adapter's address
 * rules (its send half's `payable`) with no node behind it.
 */
export class IdleBitcoin extends BtcAdapter {
  private readonly genesis: NormalisedBlock = { height: 0, hash: 'idle-genesis', parentHash: 'idle-none', transfers: [] };
  constructor(
    chain: ChainConfig,
    public satPerVbyte = 10,
  ) {
    super(chain);
  }
  override async tip(): Promise<BlockRef> {
    return this.genesis;
  }
  override async header(): Promise<BlockHeader> {
    return this.genesis;
  }
  override async blocks(): Promise<NormalisedBlock[]> {
    return [this.genesis];
  }
  override async mempool(): Promise<NormalisedTransfer[]> {
    return [];
  }
  /** Tests: the node cannot estimate a fee now. */
  quoteFails = false;
  override async feeQuote(): Promise<FeeQuote> {
    if (this.quoteFails) throw new Error('estimatesmartfee failed');
    return { kind: 'btc', satPerVbyte: this.satPerVbyte, source: 'node' };
  }
}

/** A regtest address nobody in these tests owns (BIP173's regtest P2WPKH example). */
export const PAY_TO = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
/** At 10 sat/vB: 250 vB reserved. */
export const RESERVED_FEE = '0.000025';

export interface WithdrawalFixture {
  td: TestDaemon;
  api: ApiClient;
  accountId: string;
  owner: string;
  ownerOtp: OtpSource;
  bitcoin: IdleBitcoin;
  /** Credits the account's BTC balance as a confirmed deposit would. */
  fund(amount: string): Promise<void>;
  setAccount(patch: Partial<AccountRow>): Promise<void>;
  balance(): Promise<{ available: string; hold: string }>;
  counts(): Promise<{ withdrawals: number; holds: number }>;
  /** Another key of the account, with these permissions (withdraw granted by the owner). */
  key(permissions: string[]): Promise<ApiClient>;
  stop(): Promise<void>;
}

/**
 * A verified merchant whose key may withdraw, its security changes a day old (so new payouts are
 * not sent to review), on the test chains with an idle Bitcoin node.
 */
export async function startWithdrawalFixture(
  opts: { clock?: Clock; overrides?: Record<string, unknown>; sensitiveLimits?: SensitiveLimits } = {},
): Promise<WithdrawalFixture> {
  let bitcoin!: IdleBitcoin;
  const td = await startTestDaemon(
    { chains: TEST_CHAINS, ...opts.overrides },
    {
      clock: opts.clock,
      sensitiveLimits: opts.sensitiveLimits,
      adapterFor: (chain) => (chain.kind === 'btc' ? (bitcoin = new IdleBitcoin(chain)) : new IdleChain(chain.id)),
    },
  );
  const clock = opts.clock ?? { now: () => new Date() };
  const m = await merchantWithKey(td.daemon, { permissions: ['read'] });
  const ownerOtp = new OtpSource(m.ownerTotp, clock);
  const store = td.daemon.store;
  const ageSecurityLog = () =>
    store.write((em) =>
      em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: new Date(clock.now().getTime() - 25 * 3600 * 1000).toISOString() }),
    );
  const key = async (permissions: string[]) => {
    const otp = permissions.includes('withdraw') ? ownerOtp.next() : undefined;
    const { key: k } = await td.daemon.keys.create(
      m.accountId,
      { email: m.owner, otp },
      { name: `k${Math.random()}`, permissions, ip_whitelist: [], rate_limit_per_minute: 6000, test: false },
    );
    await ageSecurityLog();
    return new ApiClient(td.url, k.key_id, k.secret, clock);
  };
  const api = await key(['read', 'withdraw']);
  await store.write((em) => em.update(AccountEntity, { id: m.accountId }, { verified: true }));
  td.daemon.team.changedOutside();
  return {
    td,
    api,
    accountId: m.accountId,
    owner: m.owner,
    ownerOtp,
    bitcoin,
    fund: async (amount) => void (await recordTransaction(store, { accountId: m.accountId, coinId: COINS.BTC, type: 'deposit', amount })),
    // Written straight to the database: the daemon's caches of accounts are told, as the service would.
    setAccount: async (patch) => {
      await store.write((em) => em.update(AccountEntity, { id: m.accountId }, patch));
      td.daemon.team.changedOutside();
    },
    balance: async () => {
      const res = await api.get('/v1/balances');
      const b = res.body.items.find((i: { coin_id: string }) => i.coin_id === COINS.BTC);
      return { available: b?.available ?? '0', hold: b?.hold ?? '0' };
    },
    counts: async () => ({
      withdrawals: await store.read.count(WithdrawalEntity),
      holds: await store.read.count(TransactionEntity, { where: { type: 'withdrawal' } }),
    }),
    key,
    stop: () => td.stop(),
  };
}
