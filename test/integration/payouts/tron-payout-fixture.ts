/**
 * Tron payouts as a merchant sees them, on the Tron node stand-in: the daemon watching it (3
 * confirmations, polling every 50 ms) with its payout worker and sweeps, a verified merchant whose
 * key may withdraw, the chain's gas station funded (the daemon stakes `sweep.stake` of it for
 * energy), blocks mined at each poll of a wait, and the checks a test ends with: the books hold
 * exactly what the chain shows at the wallet's addresses (`ledger verify` and `coinkeep ledger
 * reconcile` clean).
 */
import { randomBytes } from 'node:crypto';
import { TronWeb } from 'tronweb';
import { coinId } from '../../../src/catalog/coins';
import { TronAdapter } from '../../../src/chains/tron/tron-adapter';
import { reconcile } from '../../../src/ledger/reconcile';
import { createLogger } from '../../../src/shared/logger';
import { verifyLedger } from '../../../src/ledger/verify';
import { waitScannedTo, waitWatched } from '../../helpers/chain-scan';
import { startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';
import { payoutMerchant } from '../../helpers/payout-fixture';
import { hex20, TronNode, type TronTx } from '../../helpers/tron-node';

export const CONFIRMATIONS = 3;
export const RATES = {
  sources: [
    {
      kind: 'fixed',
      rates: { BTC: { USD: '60000', EUR: '55000' }, ETH: { USD: '3000', EUR: '2800' }, TRX: { USD: '0.25', EUR: '0.23' }, USDT: { USD: '1', EUR: '0.93' } },
    },
  ],
};
export const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 5000 };
/** What the gas station is given and stakes for energy (TRX): about a million energy a day on the stand-in. */
export const STATION_TRX = 200_000n;
export const STAKE_TRX = '100000';

export type Ticker = 'TRX' | 'USDT';

/** A fresh address nobody in the tests owns. */
export const elsewhere = (): string => TronWeb.address.fromHex('41' + randomBytes(20).toString('hex')) as string;
/** Coin units (decimal string) to base units of a 6-decimal coin. */
export function units(amount: string): bigint {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/** The stand-in's chain entry as the tests configure it. */
export function tronEntry(
  node: TronNode,
  extra: { options?: Record<string, unknown>; sweep?: Record<string, unknown>; payouts?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    id: 'tron',
    kind: 'tron',
    full_node_url: node.url,
    confirmations: CONFIRMATIONS,
    tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 6 }],
    options: { ...FAST_WATCH, genesis_block_id: node.genesisId, ...extra.options },
    sweep: { stake: STAKE_TRX, ...extra.sweep },
    ...(extra.payouts ? { payouts: extra.payouts } : {}),
  };
}

/** Every transaction on the stand-in's chain (mined) signed by `address`. */
export function minedFrom(node: TronNode, address: string): TronTx[] {
  const owner = '41' + hex20(address);
  return node.blocks.flatMap((b) => b.transactions ?? []).filter((tx) => tx.raw_data.contract[0]!.parameter.value.owner_address === owner);
}

export interface TronPayoutFixture {
  node: TronNode;
  td: TestDaemon;
  api: ApiClient;
  accountId: string;
  coin: Record<Ticker, string>;
  adapter: TronAdapter;
  gasStation: string;
  /** Mines a block at each poll until `ok` holds (unless `mine` is false). */
  until(ok: () => Promise<boolean>, what: string | (() => string), opts?: { timeoutMs?: number; mine?: boolean }): Promise<void>;
  /** Pays an invoice of `amount` from the stand-in's payer, mines it to confirmation and waits until it is paid. */
  paidInvoice(ticker: Ticker, amount: string): Promise<{ id: string; address: string }>;
  treasury(): Promise<string>;
  withdraw(body: Record<string, unknown>): Promise<any>;
  get(id: string): Promise<any>;
  waitWithdrawal(id: string, ok: (w: any) => boolean, what: string, opts?: { timeoutMs?: number; mine?: boolean }): Promise<any>;
  balance(ticker: Ticker): Promise<{ available: string; hold: string }>;
  /** Every txid signed for a withdrawal's payout, oldest first (the stored row: the API shows the current one). */
  candidates(id: string): Promise<string[]>;
  /** A USDT withdrawal of `amount` to a fresh address, waited for until completed. */
  tokenPayout(amount: string): Promise<void>;
  /** Mines until the withdrawal's first candidate waits in the node's pool (no block is mined once it does). */
  untilInPool(id: string, what: string): Promise<void>;
  /** Mines until no send of the wallet is on its way, every delegation was taken back, and the treasury holds what the sweeps brought. */
  quiet(): Promise<void>;
  /** `ledger verify` and `ledger reconcile` against the stand-in: both clean? (with the report for a message) */
  clean(): Promise<{ ok: boolean; detail: string }>;
  stop(): Promise<void>;
}

export async function startTronPayoutFixture(
  opts: { options?: Record<string, unknown>; sweep?: Record<string, unknown>; payouts?: Record<string, unknown>; stationTrx?: bigint } = {},
): Promise<TronPayoutFixture> {
  const node = await TronNode.start();
  node.mine(2);
  const entry = tronEntry(node, opts);
  // The daemon's last log lines, shown when a wait times out.
  const lines: string[] = [];
  const logger = createLogger({ write: (line) => lines.push(line) > 300 && lines.shift() });
  const td = await startTestDaemon({ chains: [entry], rates: RATES, payouts: { batch_window_seconds: 0, replace_after_blocks: 3 } }, { logger });
  await waitWatched(td);
  const chain = td.daemon.config.chains[0]!;
  const adapter = new TronAdapter(chain);
  const gasStation = td.daemon.addresses.gasStation(chain.id).address;
  const station = opts.stationTrx ?? STATION_TRX;
  if (station > 0n) {
    node.pay(gasStation, 'native', station * 1_000_000n);
    node.mine();
  }
  const { m, key } = await payoutMerchant(td.daemon, { now: () => new Date() });
  const api = new ApiClient(td.url, key.key_id, key.secret);
  const coin = { TRX: coinId(chain.id, 'native'), USDT: coinId(chain.id, node.usdt) };
  const store = td.daemon.store;
  const until: TronPayoutFixture['until'] = async (ok, what, o = {}) => {
    const deadline = Date.now() + (o.timeoutMs ?? 60_000);
    while (!(await ok())) {
      if (Date.now() > deadline) {
        const sends = await store.read.query(`SELECT kind, status, succeeded, to_address, amount FROM account_sends ORDER BY created_at DESC LIMIT 20`);
        throw new Error(
          `timed out waiting for ${typeof what === 'string' ? what : what()} (the wallet's sends: ${JSON.stringify(sends)}; the daemon's last lines:\n${lines
            .filter((l) => !l.includes('"debug"'))
            .slice(-25)
            .join('\n')})`,
        );
      }
      if (o.mine !== false) node.mine();
      await new Promise((r) => setTimeout(r, 60));
    }
  };
  const read = async (target: string) => {
    const res = await api.get(target);
    if (res.status !== 200) throw new Error(`GET ${target}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const f: TronPayoutFixture = {
    node,
    td,
    api,
    accountId: m.accountId,
    coin,
    adapter,
    gasStation,
    until,
    async paidInvoice(ticker, amount) {
      const res = await api.post('/v1/invoices', { amount, currency: ticker, coin_id: coin[ticker] });
      if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
      const inv = res.body;
      node.pay(inv.address, ticker === 'TRX' ? 'native' : node.usdt, units(amount));
      node.mine(CONFIRMATIONS);
      await waitScannedTo(td, node.height, 20_000);
      await until(async () => (await read(`/v1/invoices/${inv.id}`)).status === 'paid', 'the invoice paid');
      return { id: inv.id, address: inv.address };
    },
    async treasury() {
      return (await store.write((em) => td.daemon.addresses.treasury(em, m.accountId, chain.id))).address;
    },
    async withdraw(body) {
      const res = await api.post('/v1/withdrawals', body);
      if (res.status !== 201) throw new Error(`withdraw: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    get: (id) => read(`/v1/withdrawals/${id}`),
    async waitWithdrawal(id, ok, what, o) {
      let last: any;
      await until(
        async () => ok((last = await f.get(id))),
        () => `${what}: ${JSON.stringify(last)}`,
        o,
      );
      return last;
    },
    async balance(ticker) {
      const b = (await read('/v1/balances')).items.find((i: { coin_id: string }) => i.coin_id === coin[ticker]);
      return { available: b?.available ?? '0', hold: b?.hold ?? '0' };
    },
    async candidates(id) {
      const [row] = await store.read.query(`SELECT candidate_txids FROM withdrawals WHERE id = '${id.replace(/[^0-9a-f-]/g, '')}'`);
      return JSON.parse(row?.candidate_txids ?? '[]') as string[];
    },
    async tokenPayout(amount) {
      const w = await f.withdraw({ coin_id: coin.USDT, amount, to_address: elsewhere() });
      await f.waitWithdrawal(w.id, (x) => x.status === 'completed', `a token payout of ${amount} completed`);
    },
    async untilInPool(id, what) {
      await until(async () => {
        const [txid] = await f.candidates(id);
        return txid !== undefined && node.pendingTxids().includes(txid);
      }, what);
    },
    async quiet() {
      await until(async () => {
        const [row] = await store.read.query(
          `SELECT COUNT(*) AS n FROM account_sends d WHERE d.status IN ('signed', 'broadcast') ` +
            `OR (d.kind = 'delegate' AND d.status = 'mined' AND NOT EXISTS (SELECT 1 FROM account_sends u WHERE u.after_id = d.id AND u.status = 'mined'))`,
        );
        const [open] = await store.read.query(`SELECT COUNT(*) AS n FROM withdrawals WHERE status IN ('pending', 'processing', 'broadcast')`);
        const [unswept] = await store.read.query(
          `SELECT COUNT(*) AS n FROM chain_transfers t WHERE t.direction = 'incoming' AND t.status = 'confirmed' AND t.purpose IN ('invoice', 'static') ` +
            `AND EXISTS (SELECT 1 FROM transactions x WHERE x.chain_transfer_id = t.id AND x.status = 'confirmed') AND NOT EXISTS (SELECT 1 FROM evm_swept_transfers s WHERE s.transfer_id = t.id)`,
        );
        return Number(row.n) === 0 && Number(open.n) === 0 && Number(unswept.n) === 0;
      }, 'every send final, every delegation taken back, every deposit swept');
      // The chain core's view of the last sends reaches the books' confirmations.
      node.mine(CONFIRMATIONS);
      await waitScannedTo(td, node.height, 20_000);
    },
    async clean() {
      const verify = await store.snapshot((em) => verifyLedger(em));
      const report = await reconcile({ store, catalog: td.daemon.catalog, holdingsOf: () => adapter });
      const ok = verify.ok && report.ok && report.coins.every((c) => c.status === 'ok');
      return { ok, detail: JSON.stringify({ verify: { ok: verify.ok, problems: verify.problems.slice(0, 3) }, reconcile: report.coins }) };
    },
    async stop() {
      await td.stop();
      await node.stop();
    },
  };
  return f;
}
